/* OSU-style latency: half the round trip of MPI_Send/MPI_Recv between ranks 0 and 1, by
   message size. Two ranks. BENCH_THREAD_LEVEL=serialized measures under that level. */
#include <mpi.h>
#include <string.h>
#include "bench.h"

int main(int argc, char **argv) {
  int rank;
  init_at_level(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int n = iters(10000), top = max_size(4096);
  char *buf = malloc(top > 0 ? top : 1);
  memset(buf, 1, top);
  if (rank == 0) printf("# pingpong latency (us), %d iterations\n# size latency\n", n);
  for (int size = 8; size <= top; size *= 8) {
    for (int warm = 0; warm < 2; warm++) {
      double us = roundtrip_us(buf, size, n) / 2.0;
      if (warm && rank == 0) printf("%d %.3f\n", size, us);
    }
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
