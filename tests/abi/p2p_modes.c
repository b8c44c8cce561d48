/* Point-to-point beyond send/recv: the send modes, Sendrecv_replace, matched probes, the
   any/some/all completions, cancel, request_free and persistent requests. Two or more ranks;
   ranks 0 and 1 talk, the others only take part in the barriers. */
#include <mpi.h>
#include <string.h>
#include "check.h"

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size >= 2);
  int peer = 1 - rank;
  int me = rank < 2;
  MPI_Status st;
  int x = 0, flag = 0, n = 0;

  /* synchronous send: not complete before the receiver has matched it (the receiver posts
     only after the barrier that follows rank 0's test) */
  if (rank == 0) {
    MPI_Request r;
    x = 42;
    MPI_Issend(&x, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &r);
    MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    CHECK(!flag);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(r == MPI_REQUEST_NULL);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
      MPI_Recv(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &st);
      CHECK(x == 42 && st.MPI_SOURCE == 0 && st.MPI_TAG == 1);
    }
  }
  if (me) {
    /* Ssend, and Rsend to a posted receive */
    MPI_Request r;
    int y = -1;
    MPI_Irecv(&y, 1, MPI_INT, peer, 2, MPI_COMM_WORLD, &r);
    MPI_Sendrecv(&rank, 1, MPI_INT, peer, 3, &x, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Rsend(&rank, 1, MPI_INT, peer, 2, MPI_COMM_WORLD);
    MPI_Wait(&r, &st);
    CHECK(y == peer);
    if (rank == 0) MPI_Ssend(&rank, 1, MPI_INT, 1, 4, MPI_COMM_WORLD);
    else MPI_Recv(&x, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);

    /* buffered sends within an attached buffer */
    char buf[3 * (sizeof(int) * 4 + MPI_BSEND_OVERHEAD)];
    MPI_Buffer_attach(buf, sizeof buf);
    int v[4] = {rank, rank + 1, rank + 2, rank + 3}, w[4];
    for (int i = 0; i < 3; i++) MPI_Bsend(v, 4, MPI_INT, peer, 10 + i, MPI_COMM_WORLD);
    for (int i = 2; i >= 0; i--) {
      MPI_Recv(w, 4, MPI_INT, peer, 10 + i, MPI_COMM_WORLD, &st);
      CHECK(w[0] == peer && w[3] == peer + 3);
      MPI_Get_count(&st, MPI_INT, &n);
      CHECK(n == 4);
    }
    void *back;
    int back_size;
    MPI_Buffer_detach(&back, &back_size);
    CHECK(back == (void *)buf && back_size == (int)sizeof buf);
    /* A library's idiom: take whatever buffer is attached (none here: NULL and 0, with
       success), attach its own, and restore the caller's at the end. */
    back = buf;
    back_size = 1;
    CHECK(MPI_Buffer_detach(&back, &back_size) == MPI_SUCCESS);
    CHECK(back == NULL && back_size == 0);
    CHECK(MPI_Comm_detach_buffer(MPI_COMM_WORLD, &back, &back_size) == MPI_SUCCESS);
    CHECK(back == NULL && back_size == 0);
    /* A buffered send to MPI_PROC_NULL buffers nothing: no buffer needed. */
    MPI_Request nr;
    CHECK(MPI_Bsend(v, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(MPI_Ibsend(v, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &nr) == MPI_SUCCESS);
    CHECK(MPI_Wait(&nr, MPI_STATUS_IGNORE) == MPI_SUCCESS);

    /* Sendrecv_replace */
    x = rank * 100;
    MPI_Sendrecv_replace(&x, 1, MPI_INT, peer, 5, peer, 5, MPI_COMM_WORLD, &st);
    CHECK(x == peer * 100 && st.MPI_SOURCE == peer);

    /* matched probe */
    double d[3] = {1.5 * rank, 2.5, 3.5};
    MPI_Send(d, 3, MPI_DOUBLE, peer, 6, MPI_COMM_WORLD);
    MPI_Message msg;
    MPI_Mprobe(peer, 6, MPI_COMM_WORLD, &msg, &st);
    MPI_Get_count(&st, MPI_DOUBLE, &n);
    CHECK(n == 3);
    double e[3];
    MPI_Mrecv(e, n, MPI_DOUBLE, &msg, &st);
    CHECK(msg == MPI_MESSAGE_NULL && e[0] == 1.5 * peer && e[2] == 3.5);
    MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st);
    CHECK(msg == MPI_MESSAGE_NO_PROC);
    MPI_Mrecv(NULL, 0, MPI_INT, &msg, &st);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL);

    /* several requests: Waitany, Waitsome, Testall */
    enum { K = 6 };
    MPI_Request rs[K];
    int in[K], outv[K];
    for (int i = 0; i < K; i++) {
      outv[i] = rank * 10 + i;
      MPI_Irecv(&in[i], 1, MPI_INT, peer, 20 + i, MPI_COMM_WORLD, &rs[i]);
    }
    for (int i = K - 1; i >= 0; i--) MPI_Send(&outv[i], 1, MPI_INT, peer, 20 + i, MPI_COMM_WORLD);
    int idx = -1;
    MPI_Waitany(K, rs, &idx, &st);
    CHECK(idx >= 0 && idx < K && rs[idx] == MPI_REQUEST_NULL && in[idx] == peer * 10 + idx);
    int outcount = 0, indices[K];
    MPI_Status sts[K];
    int done = 1;
    while (done < K) {
      MPI_Waitsome(K, rs, &outcount, indices, sts);
      CHECK(outcount >= 1);
      for (int j = 0; j < outcount; j++) CHECK(in[indices[j]] == peer * 10 + indices[j]);
      done += outcount;
    }
    MPI_Waitsome(K, rs, &outcount, indices, sts);
    CHECK(outcount == MPI_UNDEFINED);
    MPI_Testall(K, rs, &flag, MPI_STATUSES_IGNORE);
    CHECK(flag);
    MPI_Waitany(K, rs, &idx, MPI_STATUS_IGNORE);
    CHECK(idx == MPI_UNDEFINED);

    /* cancel a receive nobody sends to */
    MPI_Request c;
    MPI_Irecv(&x, 1, MPI_INT, peer, 77, MPI_COMM_WORLD, &c);
    MPI_Cancel(&c);
    MPI_Wait(&c, &st);
    MPI_Test_cancelled(&st, &flag);
    CHECK(flag);

    /* request_free on a send, then the message still arrives */
    MPI_Request f;
    x = 7 + rank;
    MPI_Isend(&x, 1, MPI_INT, peer, 8, MPI_COMM_WORLD, &f);
    MPI_Request_free(&f);
    CHECK(f == MPI_REQUEST_NULL);
    int got;
    MPI_Recv(&got, 1, MPI_INT, peer, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(got == 7 + peer);

    /* persistent requests, started three times */
    int ps = 0, pr = -1;
    MPI_Request p[2];
    MPI_Send_init(&ps, 1, MPI_INT, peer, 30, MPI_COMM_WORLD, &p[0]);
    MPI_Recv_init(&pr, 1, MPI_INT, peer, 30, MPI_COMM_WORLD, &p[1]);
    for (int it = 0; it < 3; it++) {
      ps = rank * 1000 + it;
      MPI_Startall(2, p);
      MPI_Waitall(2, p, MPI_STATUSES_IGNORE);
      CHECK(p[0] != MPI_REQUEST_NULL && pr == peer * 1000 + it);
    }
    MPI_Request_free(&p[0]);
    MPI_Request_free(&p[1]);

    /* large-count variants */
    MPI_Count cnt = 0;
    MPI_Send_c(d, (MPI_Count)3, MPI_DOUBLE, peer, 40, MPI_COMM_WORLD);
    MPI_Recv_c(e, (MPI_Count)3, MPI_DOUBLE, peer, 40, MPI_COMM_WORLD, &st);
    MPI_Get_count_c(&st, MPI_DOUBLE, &cnt);
    CHECK(cnt == 3);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("p2p_modes: ok on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
