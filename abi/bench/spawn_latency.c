/* Spawn latency: the time of MPI_Comm_spawn of K processes (1, 2, 4) until the
   intercommunicator is usable (a barrier over it), plus MPI_Comm_disconnect; the mean over
   the iterations. Run with one rank; the children are this program. */
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
  int n = iters(10);
  printf("# spawn latency (ms): MPI_Comm_spawn + barrier + disconnect, %d iterations\n# procs latency\n", n);
  for (int k = 1; k <= 4; k *= 2) {
    double total = 0;
    for (int i = 0; i < n; i++) {
      MPI_Comm children;
      double t0 = MPI_Wtime();
      MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, k, MPI_INFO_NULL, 0, MPI_COMM_SELF, &children, MPI_ERRCODES_IGNORE);
      MPI_Barrier(children);
      MPI_Comm_disconnect(&children);
      total += MPI_Wtime() - t0;
    }
    printf("%d %.3f\n", k, total * 1e3 / n);
    fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}
