/* Active-target one-sided cost between ranks 0 and 1 (on two nodes under
   `ibdyn run --nodes 2`, where every operation travels as a message): per size, an epoch of
   one MPI_Put from rank 0 closed by MPI_Win_fence ("epoch_put"), and 64 puts in one epoch
   ("put_in_64", the time per put); "get_in_64" the same for MPI_Get. The floor printed
   beside them is a round trip of a message of the same size with MPI_Send/MPI_Recv in the
   same run ("roundtrip"): an epoch needs at least the data's way there and an answer back.
   Two ranks. */
#include <mpi.h>
#include <string.h>
#include "bench.h"

static double epochs(MPI_Win win, int rank, char *buf, int size, int ops, int get, int n) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int i = 0; i < n; i++) {
    if (rank == 0)
      for (int k = 0; k < ops; k++) {
        if (get)
          MPI_Get(buf + (size_t)k * size, size, MPI_CHAR, 1, (MPI_Aint)k * size, size, MPI_CHAR, win);
        else
          MPI_Put(buf + (size_t)k * size, size, MPI_CHAR, 1, (MPI_Aint)k * size, size, MPI_CHAR, win);
      }
    MPI_Win_fence(0, win);
  }
  return (MPI_Wtime() - t0) * 1e6 / n / ops;
}

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int n = iters(2000), top = max_size(65536);
  char *mem, *buf = malloc((size_t)top * 64);
  memset(buf, 1, (size_t)top * 64);
  MPI_Win win;
  MPI_Win_allocate((MPI_Aint)top * 64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
  if (rank == 0)
    printf("# active-target one-sided cost (us), %d epochs\n# op_size time\n", n);
  MPI_Win_fence(0, win);
  for (int size = 8; size <= top; size *= 8) {
    double r[4];
    for (int warm = 0; warm < 2; warm++) {
      r[0] = epochs(win, rank, buf, size, 1, 0, n);
      r[1] = epochs(win, rank, buf, size, 64, 0, n / 16 + 1);
      r[2] = epochs(win, rank, buf, size, 64, 1, n / 16 + 1);
      r[3] = roundtrip_us(buf, size, n);
    }
    static const char *const labels[] = {"epoch_put", "put_in_64", "get_in_64", "roundtrip"};
    if (rank == 0) print_rows(labels, r, 4, size);
  }
  MPI_Win_free(&win);
  free(buf);
  MPI_Finalize();
  return 0;
}
