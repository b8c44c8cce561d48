/* Shared by the C benchmarks: iteration counts from the environment, OSU-style output
   (a "# " header, then one "LABEL VALUE" line per measurement). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static inline int iters(int dflt) {
  const char *v = getenv("BENCH_ITERS");
  int n = v ? atoi(v) : 0;
  return n > 0 ? n : dflt;
}

/* MPI_Init_thread with the level BENCH_THREAD_LEVEL names (single, funneled, serialized,
   multiple; MPI_Init when unset), to measure what a thread level costs per call. */
static inline void init_at_level(int *argc, char ***argv) {
  const char *v = getenv("BENCH_THREAD_LEVEL");
  int provided;
  if (!v) {
    MPI_Init(argc, argv);
    return;
  }
  int level = v[0] == 'm' ? MPI_THREAD_MULTIPLE : v[0] == 's' && v[1] == 'e' ? MPI_THREAD_SERIALIZED
            : v[0] == 'f' ? MPI_THREAD_FUNNELED : MPI_THREAD_SINGLE;
  MPI_Init_thread(argc, argv, level, &provided);
}

static inline int max_size(int dflt) {
  const char *v = getenv("BENCH_MAX_SIZE");
  int n = v ? atoi(v) : 0;
  return n > 0 ? n : dflt;
}

/* The round trip of a `size`-byte message between ranks 0 and 1 with MPI_Send/MPI_Recv,
   mean of `n` (us): the floor of an operation that needs an answer. Collective (a barrier
   first); other ranks only take part in the barrier. */
static inline double roundtrip_us(char *buf, int size, int n) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int i = 0; i < n; i++) {
    if (rank == 0) {
      MPI_Send(buf, size, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
      MPI_Recv(buf, size, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Recv(buf, size, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, size, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
    }
  }
  return (MPI_Wtime() - t0) * 1e6 / n;
}

/* One "LABEL_SIZE VALUE" line per label, in the order of `v`. */
static inline void print_rows(const char *const labels[], const double *v, int n, int size) {
  for (int i = 0; i < n; i++) printf("%s_%d %.3f\n", labels[i], size, v[i]);
}
