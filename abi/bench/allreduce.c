/* OSU-style collective latency: MPI_Allreduce (sum of doubles) and MPI_Bcast back to back,
   the mean time per call over the ranks' slowest, by message size. BENCH_THREAD_LEVEL=
   multiple measures under that level (where a blocking collective lets other threads in
   while it waits). Any number of ranks. */
#include <mpi.h>
#include <string.h>
#include "bench.h"

static double timed(int which, double *in, double *out, int count, int n) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int i = 0; i < n; i++) {
    if (which == 0)
      MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    else
      MPI_Bcast(in, count, MPI_DOUBLE, i % 2, MPI_COMM_WORLD);
  }
  double us = (MPI_Wtime() - t0) * 1e6 / n, worst;
  MPI_Allreduce(&us, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}

int main(int argc, char **argv) {
  int rank;
  init_at_level(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int n = iters(10000), top = max_size(65536);
  double *in = malloc(top), *out = malloc(top);
  memset(in, 0, top);
  if (rank == 0) printf("# collective latency (us per call), %d iterations\n# op_size latency\n", n);
  const char *names[2] = {"allreduce", "bcast"};
  for (int which = 0; which < 2; which++)
    for (int size = 8; size <= top; size *= 8) {
      timed(which, in, out, size / 8, n / 10 + 1);
      double us = timed(which, in, out, size / 8, size > 4096 ? n / 10 + 1 : n);
      if (rank == 0) printf("%s_%d %.3f\n", names[which], size, us);
    }
  free(in);
  free(out);
  MPI_Finalize();
  return 0;
}
