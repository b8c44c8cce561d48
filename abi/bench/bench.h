/* Shared by the C benchmarks: iteration counts from the environment, OSU-style output
   (a "# " header, then one "LABEL VALUE" line per measurement). */
#include <stdio.h>
#include <stdlib.h>

static inline int iters(int dflt) {
  const char *v = getenv("BENCH_ITERS");
  int n = v ? atoi(v) : 0;
  return n > 0 ? n : dflt;
}

static inline int max_size(int dflt) {
  const char *v = getenv("BENCH_MAX_SIZE");
  int n = v ? atoi(v) : 0;
  return n > 0 ? n : dflt;
}
