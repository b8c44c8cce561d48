/* MPI's non-overtaking rule between two processes of one node, with the race forced: rank 0
 * starts a sequence of sends to rank 1 (one communicator, one tag) and only then tells rank 1,
 * through a file, that all of them are on their way; rank 1 receives afterwards, so every
 * message waits in its queue when the first receive looks. The sequences: a small message,
 * a large one (a request to send), a small one; and a synchronous send followed by a
 * standard and a buffered one. Receiving a later small message before the large or
 * synchronous one broke the rule. 2 ranks. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "check.h"

#define LARGE (64 * 1024)

static void signal_file(const char *path) {
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  fclose(f);
}

static void await_file(const char *path) {
  struct timespec ms = {0, 1000000};
  for (int i = 0; i < 60000 && access(path, F_OK) != 0; i++) nanosleep(&ms, NULL);
  CHECK(access(path, F_OK) == 0);
  unlink(path);
}

int main(int argc, char **argv) {
  int rank, size, pid0 = (int)getpid();
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size == 2);
  CHECK(MPI_Bcast(&pid0, 1, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS);
  const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  static int big[LARGE], got[LARGE];
  static char bsend_room[4096 + MPI_BSEND_OVERHEAD];
  CHECK(MPI_Buffer_attach(bsend_room, sizeof bsend_room) == MPI_SUCCESS);
  for (int round = 0; round < 10; round++) {
    char path[512];
    snprintf(path, sizeof path, "%s/overtake-%d-%d", dir, pid0, round);
    int sync = round % 2, first = 'A', third = 'C';
    if (rank == 0) {
      MPI_Request q[3];
      big[0] = 'B';
      if (sync) {
        CHECK(MPI_Issend(&first, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &q[0]) == MPI_SUCCESS);
        CHECK(MPI_Isend(big, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &q[1]) == MPI_SUCCESS);
        CHECK(MPI_Ibsend(&third, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &q[2]) == MPI_SUCCESS);
      } else {
        CHECK(MPI_Isend(&first, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &q[0]) == MPI_SUCCESS);
        CHECK(MPI_Isend(big, LARGE, MPI_INT, 1, 7, MPI_COMM_WORLD, &q[1]) == MPI_SUCCESS);
        CHECK(MPI_Isend(&third, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &q[2]) == MPI_SUCCESS);
      }
      signal_file(path);
      CHECK(MPI_Waitall(3, q, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    } else {
      await_file(path);
      char order[4] = "";
      for (int i = 0; i < 3; i++) {
        got[0] = 0;
        CHECK(MPI_Recv(got, LARGE, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE) ==
              MPI_SUCCESS);
        order[i] = (char)got[0];
      }
      if (strcmp(order, "ABC") != 0) {
        fprintf(stderr, "overtake: round %d (%s) received %s, not ABC\n", round,
                sync ? "Issend, Isend, Ibsend" : "small, large, small", order);
        exit(1);
      }
    }
    CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS);
  }
  void *b;
  int bs;
  CHECK(MPI_Buffer_detach(&b, &bs) == MPI_SUCCESS);
  if (rank == 0) printf("overtake: ok\n");
  MPI_Finalize();
  return 0;
}
