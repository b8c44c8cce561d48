/* MPI_Mprobe takes the matched message out of matching: a wildcard receive posted between
 * MPI_Mprobe and MPI_Mrecv cannot take it. Rank 1 sends two messages to rank 0 and waits;
 * rank 0 matches the first, posts MPI_Irecv(ANY_SOURCE, ANY_TAG), then MPI_Mrecv: the
 * Mrecv gets the first message, the Irecv the second. Improbe is checked the same way. */
#include <mpi.h>

#include "check.h"

static void one_round(int rank, int base, int blocking) {
  if (rank == 1) {
    int a = base + 1, b = base + 2;
    MPI_Send(&a, 1, MPI_INT, 0, base + 10, MPI_COMM_WORLD);
    MPI_Send(&b, 1, MPI_INT, 0, base + 20, MPI_COMM_WORLD);
  } else if (rank == 0) {
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status st;
    /* Both messages have arrived before the probe (rank 1 sends them in order, and the
     * second is received below only after the first is matched). */
    if (blocking) {
      CHECK(MPI_Mprobe(1, base + 10, MPI_COMM_WORLD, &msg, &st) == MPI_SUCCESS);
    } else {
      int flag = 0;
      while (!flag)
        CHECK(MPI_Improbe(1, base + 10, MPI_COMM_WORLD, &flag, &msg, &st) == MPI_SUCCESS);
    }
    CHECK(st.MPI_SOURCE == 1 && st.MPI_TAG == base + 10);
    int later = -1, got = -1;
    MPI_Request r;
    CHECK(MPI_Irecv(&later, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r) ==
          MPI_SUCCESS);
    /* A probe must not see the matched message again either. */
    int flag = 1;
    MPI_Iprobe(1, base + 10, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    CHECK(!flag);
    CHECK(MPI_Mrecv(&got, 1, MPI_INT, &msg, &st) == MPI_SUCCESS);
    CHECK(msg == MPI_MESSAGE_NULL);
    CHECK(got == base + 1 && st.MPI_TAG == base + 10);
    CHECK(MPI_Wait(&r, &st) == MPI_SUCCESS);
    CHECK(later == base + 2 && st.MPI_TAG == base + 20 && st.MPI_SOURCE == 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  one_round(rank, 100, 1);
  one_round(rank, 200, 0);
  /* Imrecv of a matched message after a wildcard receive is posted. */
  if (rank == 1) {
    int a = 7, b = 8;
    MPI_Send(&a, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
    MPI_Send(&b, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
  } else if (rank == 0) {
    MPI_Message msg;
    MPI_Request rm, rw;
    int got = 0, later = 0;
    MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, MPI_STATUS_IGNORE);
    MPI_Irecv(&later, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rw);
    CHECK(MPI_Imrecv(&got, 1, MPI_INT, &msg, &rm) == MPI_SUCCESS);
    MPI_Wait(&rw, MPI_STATUS_IGNORE);
    MPI_Wait(&rm, MPI_STATUS_IGNORE);
    CHECK(got == 7 && later == 8);
  }
  if (rank == 0) printf("mprobe_order: ok\n");
  MPI_Finalize();
  return 0;
}
