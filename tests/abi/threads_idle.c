/* MPI_THREAD_MULTIPLE: two threads of rank 0 wait, in MPI_Recv and then in blocking
 * MPI_Allreduce on their own communicators, for rank 1, which joins only after 2 s. Waiting
 * threads back off: rank 0 uses well under one core over the wait (the waits handed the
 * state to each other between their tests on both cores, 1.9 cores over the wait, and
 * blocked in the engine never). 2 ranks. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include "check.h"

static MPI_Comm comms[2];
static int collective;

static void *wait_for_rank_1(void *arg) {
  int i = (int)(long)arg, v = 1, got = 0;
  if (collective) {
    CHECK(MPI_Allreduce(&v, &got, 1, MPI_INT, MPI_SUM, comms[i]) == MPI_SUCCESS && got == 2);
  } else {
    CHECK(MPI_Recv(&got, 1, MPI_INT, 1, i, comms[i], MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(got == 10 + i);
  }
  return NULL;
}

static double seconds(clockid_t c) {
  struct timespec t;
  clock_gettime(c, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  int provided, rank;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  CHECK(provided == MPI_THREAD_MULTIPLE);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 0; i < 2; i++) MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]);
  for (collective = 0; collective < 2; collective++) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
      sleep(2);
      for (int i = 0; i < 2; i++) {
        int v = 1, got = 0;
        if (collective) MPI_Allreduce(&v, &got, 1, MPI_INT, MPI_SUM, comms[i]);
        else v = 10 + i, MPI_Send(&v, 1, MPI_INT, 0, i, comms[i]);
      }
      continue;
    }
    double cpu = seconds(CLOCK_PROCESS_CPUTIME_ID), wall = seconds(CLOCK_MONOTONIC);
    pthread_t t[2];
    for (long i = 0; i < 2; i++) pthread_create(&t[i], NULL, wait_for_rank_1, (void *)i);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    cpu = seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu, wall = seconds(CLOCK_MONOTONIC) - wall;
    printf("threads_idle: %s: %.2f s of CPU over a %.2f s wait\n",
           collective ? "allreduce" : "recv", cpu, wall);
    CHECK(wall >= 1.5 && cpu < 0.75 * wall);
  }
  for (int i = 0; i < 2; i++) MPI_Comm_free(&comms[i]);
  if (rank == 0) printf("threads_idle: ok\n");
  MPI_Finalize();
  return 0;
}
