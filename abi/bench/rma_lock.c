/* Passive-target one-sided cost from rank 0 to rank 1 (on two nodes under
   `ibdyn run --nodes 2`, where every operation travels as a message and rank 1 serves it from
   whatever MPI call it is in: here MPI_Barrier, for the whole run). Per size: an epoch of
   MPI_Win_lock (exclusive), one MPI_Put, MPI_Win_unlock ("lock_put"); the same with 64 puts
   (the time per put, "lock_put_64"); a shared lock around one MPI_Get ("lock_get"); inside one
   MPI_Win_lock_all epoch, one MPI_Put and MPI_Win_flush ("flush_put"). The floor printed
   beside them is a round trip of a message of the same size with MPI_Send/MPI_Recv in the
   same run ("roundtrip"): the data's way there and an answer back. Two ranks. */
#include <mpi.h>
#include <string.h>
#include "bench.h"

enum { LOCK_PUT, LOCK_PUT_64, LOCK_GET, FLUSH_PUT };

/* Rank 0's time per operation of `kind`, `n` epochs; rank 1 waits in MPI_Barrier. */
static double passive(MPI_Win win, int rank, char *buf, int size, int kind, int n) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  int ops = kind == LOCK_PUT_64 ? 64 : 1;
  if (rank == 0) {
    if (kind == FLUSH_PUT) MPI_Win_lock_all(0, win);
    for (int i = 0; i < n; i++) {
      switch (kind) {
        case LOCK_PUT:
        case LOCK_PUT_64:
          MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
          for (int k = 0; k < ops; k++)
            MPI_Put(buf + (size_t)k * size, size, MPI_CHAR, 1, (MPI_Aint)k * size, size, MPI_CHAR, win);
          MPI_Win_unlock(1, win);
          break;
        case LOCK_GET:
          MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
          MPI_Get(buf, size, MPI_CHAR, 1, 0, size, MPI_CHAR, win);
          MPI_Win_unlock(1, win);
          break;
        case FLUSH_PUT:
          MPI_Put(buf, size, MPI_CHAR, 1, 0, size, MPI_CHAR, win);
          MPI_Win_flush(1, win);
          break;
      }
    }
    if (kind == FLUSH_PUT) MPI_Win_unlock_all(win);
  }
  double t = (MPI_Wtime() - t0) * 1e6 / n / ops;
  MPI_Barrier(MPI_COMM_WORLD);
  return t;
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
    printf("# passive-target one-sided cost (us), %d epochs\n# op_size time\n", n);
  for (int size = 8; size <= top; size *= 8) {
    double r[5];
    for (int warm = 0; warm < 2; warm++) {
      r[0] = passive(win, rank, buf, size, LOCK_PUT, n);
      r[1] = passive(win, rank, buf, size, LOCK_PUT_64, n / 16 + 1);
      r[2] = passive(win, rank, buf, size, LOCK_GET, n);
      r[3] = passive(win, rank, buf, size, FLUSH_PUT, n);
      r[4] = roundtrip_us(buf, size, n);
    }
    static const char *const labels[] = {"lock_put", "lock_put_64", "lock_get", "flush_put", "roundtrip"};
    if (rank == 0) print_rows(labels, r, 5, size);
  }
  MPI_Win_free(&win);
  free(buf);
  MPI_Finalize();
  return 0;
}
