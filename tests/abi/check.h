/* A failed check prints where and ends the job with status 1. */
#include <stdio.h>
#include <stdlib.h>
#define CHECK(cond)                                                                  \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);       \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)
