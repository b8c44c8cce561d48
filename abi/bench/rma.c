/* OSU-style one-sided latency between ranks 0 and 1 (osu_put_latency's lock_all + flush
   method): rank 0 issues the operation on rank 1's window and completes it with
   MPI_Win_flush, `n` times; the time per operation, by size. Also MPI_Accumulate and
   MPI_Fetch_and_op of 8 B, a put completed by two MPI_Win_fence calls, and 8 B put and get
   on the memory of MPI_Win_create instead of MPI_Win_allocate's. Two ranks. */
#include <mpi.h>
#include <stdint.h>
#include <string.h>
#include "bench.h"

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int n = iters(10000), top = max_size(65536);
  char *mem, *buf = malloc(top);
  memset(buf, 1, top);
  MPI_Win win;
  MPI_Win_allocate(top, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
  if (rank == 0) printf("# one-sided latency (us per operation), %d iterations\n# op_size latency\n", n);
  const char *names[2] = {"put", "get"};
  for (int op = 0; op < 2; op++) {
    for (int size = 8; size <= top; size *= 8) {
      for (int warm = 0; warm < 2; warm++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (rank == 0) {
          MPI_Win_lock_all(0, win);
          for (int i = 0; i < n; i++) {
            if (op == 0)
              MPI_Put(buf, size, MPI_BYTE, 1, 0, size, MPI_BYTE, win);
            else
              MPI_Get(buf, size, MPI_BYTE, 1, 0, size, MPI_BYTE, win);
            MPI_Win_flush(1, win);
          }
          MPI_Win_unlock_all(win);
        }
        double us = (MPI_Wtime() - t0) * 1e6 / n;
        if (warm && rank == 0) printf("%s_%d %.3f\n", names[op], size, us);
      }
    }
  }
  int64_t one = 1, old = 0;
  for (int op = 0; op < 2; op++) {
    for (int warm = 0; warm < 2; warm++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      if (rank == 0) {
        MPI_Win_lock_all(0, win);
        for (int i = 0; i < n; i++) {
          if (op == 0)
            MPI_Accumulate(&one, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, MPI_SUM, win);
          else
            MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 1, 0, MPI_SUM, win);
          MPI_Win_flush(1, win);
        }
        MPI_Win_unlock_all(win);
      }
      double us = (MPI_Wtime() - t0) * 1e6 / n;
      if (warm && rank == 0) printf("%s_8 %.3f\n", op == 0 ? "accumulate" : "fetch_and_op", us);
    }
  }
  for (int warm = 0; warm < 2; warm++) {
    int m = n / 10 > 0 ? n / 10 : 1;
    MPI_Win_fence(0, win);
    double t0 = MPI_Wtime();
    for (int i = 0; i < m; i++) {
      if (rank == 0) MPI_Put(buf, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, win);
      MPI_Win_fence(0, win);
    }
    double us = (MPI_Wtime() - t0) * 1e6 / m;
    if (warm && rank == 0) printf("put+fence_8 %.3f\n", us);
  }
  /* the memory of MPI_Win_create (the program's own): 8 B put and get */
  char *own = calloc(64, 1);
  MPI_Win cwin;
  MPI_Win_create(own, 64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &cwin);
  for (int op = 0; op < 2; op++) {
    for (int warm = 0; warm < 2; warm++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      if (rank == 0) {
        MPI_Win_lock_all(0, cwin);
        for (int i = 0; i < n; i++) {
          if (op == 0)
            MPI_Put(buf, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, cwin);
          else
            MPI_Get(buf, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, cwin);
          MPI_Win_flush(1, cwin);
        }
        MPI_Win_unlock_all(cwin);
      }
      double us = (MPI_Wtime() - t0) * 1e6 / n;
      if (warm && rank == 0) printf("%s_8_win_create %.3f\n", names[op], us);
    }
  }
  MPI_Win_free(&cwin);
  free(own);
  MPI_Win_free(&win);
  free(buf);
  MPI_Finalize();
  return 0;
}
