/* Intercommunicator collectives: the two halves of the world joined by MPI_Intercomm_create;
   latency (us) of Barrier, Bcast (root in the low half), Allreduce and Allgather by size.
   Run with an even number of ranks. */
#include <mpi.h>
#include <string.h>
#include "bench.h"

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int half = size / 2, low = rank < half, lr;
  MPI_Comm local, ic;
  MPI_Comm_split(MPI_COMM_WORLD, low, rank, &local);
  MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? half : 0, 1, &ic);
  MPI_Comm_rank(local, &lr);
  int n = iters(1000), top = max_size(65536);
  char *a = malloc(top * (size_t)size), *b = malloc(top * (size_t)size);
  memset(a, 1, top * (size_t)size);
  if (rank == 0) printf("# intercommunicator collectives latency (us), %d iterations\n# op:size latency\n", n);
  for (int op = 0; op < 4; op++) {
    for (int bytes = 8; bytes <= (op == 0 ? 8 : top); bytes *= 8) {
      int count = bytes / 4;
      double t0 = 0;
      for (int i = -n / 10; i < n; i++) {
        if (i == 0) {
          MPI_Barrier(MPI_COMM_WORLD);
          t0 = MPI_Wtime();
        }
        switch (op) {
        case 0: MPI_Barrier(ic); break;
        case 1: MPI_Bcast(a, count, MPI_INT, low ? (lr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, ic); break;
        case 2: MPI_Allreduce(a, b, count, MPI_INT, MPI_SUM, ic); break;
        case 3: MPI_Allgather(a, count, MPI_INT, b, count, MPI_INT, ic); break;
        }
      }
      double us = (MPI_Wtime() - t0) * 1e6 / n;
      static const char *names[] = {"barrier", "bcast", "allreduce", "allgather"};
      if (rank == 0) printf("%s:%d %.3f\n", names[op], bytes, us);
    }
  }
  free(a), free(b);
  MPI_Comm_free(&ic);
  MPI_Comm_free(&local);
  MPI_Finalize();
  return 0;
}
