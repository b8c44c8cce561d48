/* Intercommunicator collectives, the peers' method: the parent job (its world, P ranks)
   spawns C copies of this program, and the two groups of the spawn's intercommunicator run
   bcast, reduce, allreduce, reduce_scatter (block), allgather, alltoall and barrier at
   8 B, 1 KiB, 64 KiB and 1 MiB: per cell a warm-up of 5, one barrier, then the operation N
   times back to back; the mean per process, then the maximum over every process.
   Rooted operations: root is parent rank 0 (MPI_ROOT; the other parents MPI_PROC_NULL).
   Sizes are per process block (bcast, reduce, allreduce: the whole buffer; reduce_scatter:
   each group reduces P*C blocks). Usage: mpiexec -n P intercoll_loop C */
#include <mpi.h>
#include <stdint.h>
#include <string.h>
#include "bench.h"

enum { NOPS = 7 };
static const char *names[NOPS] = {"bcast", "reduce", "allreduce", "reduce_scatter",
                                  "allgather", "alltoall", "barrier"};

static const int sizes[4] = {8, 1024, 65536, 1 << 20};

static int reps(int bytes) {
  int n = iters(1000);
  if (bytes > 65536) return n / 50 > 10 ? n / 50 : 10;
  if (bytes > 1024) return n / 10 > 10 ? n / 10 : 10;
  return n;
}

static void one(int op, int bytes, MPI_Comm ic, int parent, int lr, int p, int c, char *a,
                char *b) {
  int mine = parent ? p : c;
  int elems = bytes / 8 > 0 ? bytes / 8 : 1;
  int root = parent ? (lr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  switch (op) {
  case 0: MPI_Bcast(a, bytes, MPI_BYTE, root, ic); break;
  case 1: MPI_Reduce(a, b, elems, MPI_INT64_T, MPI_SUM, root, ic); break;
  case 2: MPI_Allreduce(a, b, elems, MPI_INT64_T, MPI_SUM, ic); break;
  case 3: MPI_Reduce_scatter_block(a, b, elems * p * c / mine, MPI_INT64_T, MPI_SUM, ic); break;
  case 4: MPI_Allgather(a, bytes, MPI_BYTE, b, bytes, MPI_BYTE, ic); break;
  case 5: MPI_Alltoall(a, bytes, MPI_BYTE, b, bytes, MPI_BYTE, ic); break;
  case 6: MPI_Barrier(ic); break;
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm ic, all;
  MPI_Comm_get_parent(&ic);
  int parent = ic == MPI_COMM_NULL, lr, p, c;
  if (parent) {
    int kids = argc > 1 ? atoi(argv[1]) : 3;
    MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, kids > 0 ? kids : 3, MPI_INFO_NULL, 0,
                   MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE);
  }
  MPI_Comm_rank(ic, &lr);
  if (parent) MPI_Comm_size(ic, &p), MPI_Comm_remote_size(ic, &c);
  else MPI_Comm_size(ic, &c), MPI_Comm_remote_size(ic, &p);
  MPI_Intercomm_merge(ic, !parent, &all); /* parents first: rank 0 prints */
  int top = max_size(1 << 20), most = p > c ? p : c;
  size_t cap = (size_t)top * (size_t)(p * c > most ? p * c : most) + 64;
  char *a = malloc(cap), *b = malloc(cap);
  memset(a, 1, cap), memset(b, 0, cap);
  int me;
  MPI_Comm_rank(all, &me);
  if (me == 0)
    printf("# intercommunicator collectives, loop method (us; mean per process, max over all), "
           "%d+%d\n# cell latency\n", p, c);
  for (int op = 0; op < NOPS; op++) {
    for (int k = 0; k < 4 && sizes[k] <= top; k++) {
      int bytes = sizes[k], n = reps(bytes);
      for (int i = 0; i < 5; i++) one(op, bytes, ic, parent, lr, p, c, a, b);
      MPI_Barrier(ic);
      double t0 = MPI_Wtime();
      for (int i = 0; i < n; i++) one(op, bytes, ic, parent, lr, p, c, a, b);
      double us = (MPI_Wtime() - t0) * 1e6 / n, max = 0;
      MPI_Reduce(&us, &max, 1, MPI_DOUBLE, MPI_MAX, 0, all);
      if (me == 0) printf("%d+%d:%s:%d %.3f\n", p, c, names[op], op == 6 ? 0 : bytes, max);
      if (op == 6) break;
    }
  }
  fflush(stdout);
  free(a), free(b);
  MPI_Comm_free(&all);
  MPI_Comm_disconnect(&ic);
  MPI_Finalize();
  return 0;
}
