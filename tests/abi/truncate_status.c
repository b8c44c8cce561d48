/* A receive that fails with MPI_ERR_TRUNCATE still fills its status: the sender and tag of
 * a wildcard receive, MPI_ERROR in the statuses of Waitall, and a count that says what is in
 * the buffer (the start of an eager message; nothing of a rendezvous one). MPI_Mrecv's
 * truncation is returned under the communicator's MPI_ERRORS_RETURN. */
#include <mpi.h>
#include <stdlib.h>
#include "check.h"

#define BIG (1 << 20)

static int class_of(int rc) {
  int c = -1;
  MPI_Error_class(rc, &c);
  return c;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int *big = calloc(BIG, sizeof(int));
  CHECK(big != NULL);
  if (rank == 0) {
    int four[4] = {1, 2, 3, 4};
    MPI_Send(four, 4, MPI_INT, 1, 7, MPI_COMM_WORLD);
    MPI_Send(four, 4, MPI_INT, 1, 8, MPI_COMM_WORLD);
    MPI_Send(four, 4, MPI_INT, 1, 9, MPI_COMM_WORLD);
    MPI_Send(four, 1, MPI_INT, 1, 10, MPI_COMM_WORLD);
    MPI_Send(big, BIG, MPI_INT, 1, 11, MPI_COMM_WORLD);
    MPI_Send(four, 4, MPI_INT, 1, 12, MPI_COMM_WORLD);
    MPI_Send(four, 4, MPI_INT, 1, 13, MPI_COMM_WORLD);
    MPI_Send(four, 4, MPI_INT, 1, 14, MPI_COMM_WORLD);
  } else if (rank == 1) {
    int two[2] = {0, 0}, cnt = -1;
    MPI_Status st;
    st.MPI_SOURCE = st.MPI_TAG = -99;
    int rc = MPI_Recv(two, 2, MPI_INT, 0, 7, MPI_COMM_WORLD, &st);
    CHECK(class_of(rc) == MPI_ERR_TRUNCATE);
    CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 7);
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == 2 && two[0] == 1 && two[1] == 2);

    MPI_Request q;
    MPI_Irecv(two, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &q);
    st.MPI_SOURCE = st.MPI_TAG = -99;
    rc = MPI_Wait(&q, &st);
    CHECK(class_of(rc) == MPI_ERR_TRUNCATE);
    CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 8);

    /* Waitall: the truncated one says so in its status, the other succeeds. */
    int one = 0;
    MPI_Request qs[2];
    MPI_Status sts[2];
    MPI_Irecv(two, 2, MPI_INT, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &qs[0]);
    MPI_Irecv(&one, 1, MPI_INT, 0, 10, MPI_COMM_WORLD, &qs[1]);
    sts[0].MPI_SOURCE = sts[0].MPI_TAG = -99;
    rc = MPI_Waitall(2, qs, sts);
    CHECK(class_of(rc) == MPI_ERR_IN_STATUS);
    CHECK(class_of(sts[0].MPI_ERROR) == MPI_ERR_TRUNCATE);
    CHECK(sts[0].MPI_SOURCE == 0 && sts[0].MPI_TAG == 9);
    /* The other one completed, or (as MPI allows) is still pending. */
    if (class_of(sts[1].MPI_ERROR) == MPI_ERR_PENDING) MPI_Wait(&qs[1], MPI_STATUS_IGNORE);
    else CHECK(sts[1].MPI_ERROR == MPI_SUCCESS);
    CHECK(one == 1);

    /* A rendezvous message: the envelope, and no data claimed. */
    st.MPI_SOURCE = st.MPI_TAG = -99;
    rc = MPI_Recv(big, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    CHECK(class_of(rc) == MPI_ERR_TRUNCATE);
    CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 11);
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == 0 || cnt == 2);

    /* A matched message received too small: the error goes to its communicator's handler
       (MPI_ERRORS_RETURN here), not MPI_COMM_SELF's. */
    MPI_Message m;
    CHECK(MPI_Mprobe(0, 12, MPI_COMM_WORLD, &m, &st) == MPI_SUCCESS);
    rc = MPI_Mrecv(two, 2, MPI_INT, &m, &st);
    CHECK(class_of(rc) == MPI_ERR_TRUNCATE && st.MPI_TAG == 12);

    /* MPI_Test of a receive that failed: the request has completed, so flag is true. */
    int flag = -1;
    MPI_Irecv(two, 2, MPI_INT, 0, 13, MPI_COMM_WORLD, &q);
    do {
      rc = MPI_Test(&q, &flag, &st);
    } while (rc == MPI_SUCCESS && !flag);
    CHECK(class_of(rc) == MPI_ERR_TRUNCATE && flag == 1 && q == MPI_REQUEST_NULL);

    /* MPI_Request_get_status sees the failure under the communicator's handler, and the
       wait that collects the request gets it too. */
    MPI_Irecv(two, 2, MPI_INT, 0, 14, MPI_COMM_WORLD, &q);
    flag = 0;
    do {
      rc = MPI_Request_get_status(q, &flag, &st);
    } while (rc == MPI_SUCCESS && !flag);
    CHECK(class_of(rc) == MPI_ERR_TRUNCATE && flag == 1 && q != MPI_REQUEST_NULL);
    rc = MPI_Wait(&q, &st);
    CHECK(class_of(rc) == MPI_ERR_TRUNCATE && st.MPI_TAG == 14);
  }
  free(big);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("truncate_status: ok\n");
  MPI_Finalize();
  return 0;
}
