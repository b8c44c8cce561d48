/* Spawn rate: processes started per second by one MPI_Comm_spawn of K processes (2, 4, 8)
   until all of them answered a barrier. Run with one rank; the children are this program. */
#include <mpi.h>
#include "bench.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm parent;
  MPI_Comm_get_parent(&parent);
  if (parent != MPI_COMM_NULL) {
    MPI_Barrier(parent);
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return 0;
  }
  const char *mp = getenv("BENCH_MAX_PROCS");
  int n = iters(3), top = mp && atoi(mp) > 0 ? atoi(mp) : 8;
  printf("# spawn rate (processes/s), %d iterations\n# procs rate\n", n);
  for (int k = 2; k <= top; k *= 2) {
    double total = 0;
    for (int i = 0; i < n; i++) {
      MPI_Comm children;
      double t0 = MPI_Wtime();
      MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, k, MPI_INFO_NULL, 0, MPI_COMM_SELF, &children, MPI_ERRCODES_IGNORE);
      MPI_Barrier(children);
      total += MPI_Wtime() - t0;
      MPI_Comm_disconnect(&children);
    }
    printf("%d %.1f\n", k, k * n / total);
    fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}
