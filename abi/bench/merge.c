/* Merge latency: MPI_Intercomm_merge of the intercommunicator to 2 spawned children, then
   MPI_Comm_free of the result; the mean over the iterations. Run with one or more ranks. */
#include <mpi.h>
#include "bench.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm parent, inter;
  MPI_Comm_get_parent(&parent);
  int is_child = parent != MPI_COMM_NULL, rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int n = iters(200);
  if (!is_child) MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE);
  else inter = parent;
  MPI_Barrier(inter);
  double t0 = MPI_Wtime();
  for (int i = 0; i < n; i++) {
    MPI_Comm all;
    MPI_Intercomm_merge(inter, is_child, &all);
    MPI_Comm_free(&all);
  }
  double us = (MPI_Wtime() - t0) * 1e6 / n;
  if (!is_child && rank == 0) printf("# merge latency (us): MPI_Intercomm_merge + MPI_Comm_free, %d iterations\n# children latency\n2 %.3f\n", n, us);
  MPI_Comm_disconnect(&inter);
  MPI_Finalize();
  return 0;
}
