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
