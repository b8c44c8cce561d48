/* Merge, the peers' method: the parent job (P ranks) spawns C copies of this program; both
   groups then run MPI_Intercomm_merge + MPI_Comm_free back to back: a warm-up of 5, one
   barrier, N pairs; the mean per process, then the maximum over every process.
   Usage: mpiexec -n P merge_loop C */
#include <mpi.h>
#include "bench.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm ic, all;
  MPI_Comm_get_parent(&ic);
  int parent = ic == MPI_COMM_NULL, p, c, n = iters(1000);
  if (parent) {
    int kids = argc > 1 ? atoi(argv[1]) : 1;
    MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, kids > 0 ? kids : 1, MPI_INFO_NULL, 0,
                   MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE);
  }
  if (parent) MPI_Comm_size(ic, &p), MPI_Comm_remote_size(ic, &c);
  else MPI_Comm_size(ic, &c), MPI_Comm_remote_size(ic, &p);
  for (int i = 0; i < 5; i++) {
    MPI_Intercomm_merge(ic, !parent, &all);
    MPI_Comm_free(&all);
  }
  MPI_Barrier(ic);
  double t0 = MPI_Wtime();
  for (int i = 0; i < n; i++) {
    MPI_Intercomm_merge(ic, !parent, &all);
    MPI_Comm_free(&all);
  }
  double us = (MPI_Wtime() - t0) * 1e6 / n, max = 0;
  int me;
  MPI_Intercomm_merge(ic, !parent, &all);
  MPI_Comm_rank(all, &me);
  MPI_Reduce(&us, &max, 1, MPI_DOUBLE, MPI_MAX, 0, all);
  if (me == 0)
    printf("# merge + free, loop method (us; mean per process, max over all), %d iterations\n"
           "# cell latency\n%d+%d:merge %.3f\n", n, p, c, max);
  fflush(stdout);
  MPI_Comm_free(&all);
  MPI_Comm_disconnect(&ic);
  MPI_Finalize();
  return 0;
}
