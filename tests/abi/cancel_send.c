/* MPI_Cancel of sends, and of receives racing with their message. A wait on a send marked for
   cancellation returns whatever the receiver does; Test_cancelled then says whether the
   message was withdrawn (the receiver never sees it) or had been matched (the receiver gets
   all of it). A cancelled receive got nothing, or all of its message. Two ranks. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

#define BIG (1 << 20)

int main(int argc, char **argv) {
  int rank, size, flag;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size == 2);
  MPI_Status st;
  int x = 5;
  char *big = malloc(BIG);
  CHECK(big != NULL);
  memset(big, 7, BIG);

  /* 1. Nobody receives: a synchronous send and a rendezvous-size send are withdrawn. */
  if (rank == 0) {
    MPI_Request r[2];
    MPI_Issend(&x, 1, MPI_INT, 1, 10, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(big, BIG, MPI_CHAR, 1, 11, MPI_COMM_WORLD, &r[1]);
    for (int i = 0; i < 2; i++) {
      MPI_Cancel(&r[i]);
      /* MPI_Request_get_status reports the cancel too, and leaves the request */
      for (flag = 0; !flag;) MPI_Request_get_status(r[i], &flag, &st);
      MPI_Test_cancelled(&st, &flag);
      CHECK(flag && r[i] != MPI_REQUEST_NULL);
      MPI_Wait(&r[i], &st);
      MPI_Test_cancelled(&st, &flag);
      CHECK(flag);
      CHECK(r[i] == MPI_REQUEST_NULL);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) {
    MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    CHECK(!flag); /* both messages were withdrawn */
  }
  MPI_Barrier(MPI_COMM_WORLD);

  /* 2. The receive completed before the cancel: the send is not cancelled. */
  if (rank == 0) {
    MPI_Request r;
    MPI_Issend(&x, 1, MPI_INT, 1, 20, MPI_COMM_WORLD, &r);
    int ack;
    MPI_Recv(&ack, 1, MPI_INT, 1, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Cancel(&r);
    MPI_Wait(&r, &st);
    MPI_Test_cancelled(&st, &flag);
    CHECK(!flag);
  } else {
    int got = 0, ack = 1;
    MPI_Recv(&got, 1, MPI_INT, 0, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(got == 5);
    MPI_Send(&ack, 1, MPI_INT, 0, 21, MPI_COMM_WORLD);
  }

  /* 3. A cancelled persistent send can be started again, and then it is received. */
  if (rank == 0) {
    MPI_Request p;
    MPI_Ssend_init(&x, 1, MPI_INT, 1, 30, MPI_COMM_WORLD, &p);
    MPI_Start(&p);
    MPI_Cancel(&p);
    MPI_Wait(&p, &st);
    MPI_Test_cancelled(&st, &flag);
    CHECK(flag);
    CHECK(p != MPI_REQUEST_NULL);
    MPI_Send(&flag, 1, MPI_INT, 1, 31, MPI_COMM_WORLD);
    x = 6;
    MPI_Start(&p);
    MPI_Wait(&p, &st);
    MPI_Test_cancelled(&st, &flag);
    CHECK(!flag);
    MPI_Request_free(&p);
  } else {
    int got = 0, go;
    /* receives only once the first start was cancelled */
    MPI_Recv(&go, 1, MPI_INT, 0, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&got, 1, MPI_INT, 0, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(got == 6); /* the first start's message never arrives */
  }

  /* 4. A receive posted while the cancel is on its way: either outcome, but one only. */
  for (int i = 0; i < 20; i++) {
    if (rank == 0) {
      MPI_Request r;
      MPI_Isend(big, BIG, MPI_CHAR, 1, 100 + i, MPI_COMM_WORLD, &r);
      MPI_Cancel(&r);
      MPI_Wait(&r, &st);
      MPI_Test_cancelled(&st, &flag);
      MPI_Send(&flag, 1, MPI_INT, 1, 41, MPI_COMM_WORLD);
    } else {
      MPI_Request r;
      char *in = calloc(BIG, 1);
      CHECK(in != NULL);
      MPI_Irecv(in, BIG, MPI_CHAR, 0, 100 + i, MPI_COMM_WORLD, &r);
      int cancelled;
      MPI_Recv(&cancelled, 1, MPI_INT, 0, 41, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (cancelled) {
        MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
        CHECK(!flag); /* the withdrawn message must not arrive */
        MPI_Cancel(&r);
        MPI_Wait(&r, &st);
        MPI_Test_cancelled(&st, &flag);
        CHECK(flag);
      } else {
        MPI_Wait(&r, &st);
        int n;
        MPI_Get_count(&st, MPI_CHAR, &n);
        CHECK(n == BIG && in[0] == 7 && in[BIG - 1] == 7);
      }
      free(in);
    }
  }

  /* 5. Cancelling an eager send that has completed leaves it sent. */
  if (rank == 0) {
    MPI_Request r;
    MPI_Isend(&x, 1, MPI_INT, 1, 50, MPI_COMM_WORLD, &r);
    MPI_Cancel(&r);
    MPI_Wait(&r, &st);
    MPI_Test_cancelled(&st, &flag);
    int cancelled = flag;
    MPI_Send(&cancelled, 1, MPI_INT, 1, 51, MPI_COMM_WORLD);
  } else {
    int cancelled, got = 0;
    MPI_Recv(&cancelled, 1, MPI_INT, 0, 51, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Iprobe(0, 50, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    CHECK(flag == !cancelled);
    if (flag) {
      MPI_Recv(&got, 1, MPI_INT, 0, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      CHECK(got == 6);
    }
  }

  /* 6. A receive cancelled while a synchronous or a rendezvous send to it arrives (between
     nodes a matched receive pulls its data for a while): either it was withdrawn and the
     message is still there for the next receive, or it got the whole message. */
  for (int i = 0; i < 40; i++) {
    int tag = 200 + i, big_one = i % 2;
    if (rank == 0) {
      int v = 42;
      MPI_Barrier(MPI_COMM_WORLD);
      if (big_one)
        MPI_Send(big, BIG, MPI_CHAR, 1, tag, MPI_COMM_WORLD);
      else
        MPI_Ssend(&v, 1, MPI_INT, 1, tag, MPI_COMM_WORLD);
    } else {
      int v = -1;
      char *in = calloc(BIG, 1);
      CHECK(in != NULL);
      MPI_Request r;
      if (big_one)
        MPI_Irecv(in, BIG, MPI_CHAR, 0, tag, MPI_COMM_WORLD, &r);
      else
        MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &r);
      MPI_Barrier(MPI_COMM_WORLD);
      MPI_Cancel(&r);
      MPI_Wait(&r, &st);
      MPI_Test_cancelled(&st, &flag);
      if (flag) {
        CHECK(v == -1 && in[0] == 0 && in[BIG - 1] == 0); /* nothing written */
        if (big_one)
          MPI_Recv(in, BIG, MPI_CHAR, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else
          MPI_Recv(&v, 1, MPI_INT, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      CHECK(big_one ? in[0] == 7 && in[BIG - 1] == 7 : v == 42);
      free(in);
    }
  }

  free(big);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    printf("cancel_send: ok\n");
  MPI_Finalize();
  return 0;
}
