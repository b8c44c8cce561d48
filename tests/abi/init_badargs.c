/* Persistent init calls check their arguments as the non-persistent forms do, and fail at
   the init call (not at MPI_Start) with the same error class: the peer's rank, the tag, the
   count, the buffer and the datatype of MPI_Send/Ssend/Bsend/Rsend/Recv_init; the count, the
   operation and the root of the collective _init calls, on an intra- and an intercommunicator. Good
   arguments still work afterwards. Rank 0 prints the error strings of four of them (which
   c_programs.rs compares with ibdyn's messages of the non-persistent forms). Needs an even
   number of processes. */
#include <mpi.h>
#include "check.h"

static int cls_of(int rc) {
  int cls;
  MPI_Error_class(rc, &cls);
  return cls;
}

#define FAILS(call, want)                                                                 \
  do {                                                                                    \
    MPI_Request r_ = MPI_REQUEST_NULL;                                                    \
    int rc_ = call;                                                                       \
    if (cls_of(rc_) != (want)) {                                                          \
      fprintf(stderr, "%s: class %d, want %d (%s)\n", #call, cls_of(rc_), want, #want);   \
      exit(1);                                                                            \
    }                                                                                     \
    (void)r_;                                                                             \
  } while (0)

/* A negative count of a reduction's _init: MPI_ERR_COUNT (MPICH 5 says MPI_ERR_OTHER). */
#define FAILS_COUNT(call)                                                                 \
  do {                                                                                    \
    MPI_Request r_ = MPI_REQUEST_NULL;                                                    \
    int c_ = cls_of(call);                                                                \
    if (c_ != MPI_ERR_COUNT && c_ != MPI_ERR_OTHER) {                                     \
      fprintf(stderr, "%s: class %d, want MPI_ERR_COUNT\n", #call, c_);                   \
      exit(1);                                                                            \
    }                                                                                     \
    (void)r_;                                                                             \
  } while (0)

int main(int argc, char **argv) {
  int me, np, x = 1, y = 0, v[64] = {0};
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  CHECK(np % 2 == 0 && np <= 64);
  MPI_Comm w = MPI_COMM_WORLD;
  MPI_Info ni = MPI_INFO_NULL;
  MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN);

  /* point-to-point */
  FAILS(MPI_Send_init(&x, 1, MPI_INT, np, 0, w, &r_), MPI_ERR_RANK);
  FAILS(MPI_Ssend_init(&x, 1, MPI_INT, np + 3, 0, w, &r_), MPI_ERR_RANK);
  FAILS(MPI_Bsend_init(&x, 1, MPI_INT, -5, 0, w, &r_), MPI_ERR_RANK);
  FAILS(MPI_Rsend_init(&x, 1, MPI_INT, np, 0, w, &r_), MPI_ERR_RANK);
  FAILS(MPI_Recv_init(&y, 1, MPI_INT, np, 0, w, &r_), MPI_ERR_RANK);
  FAILS(MPI_Send_init(&x, 1, MPI_INT, 0, -1, w, &r_), MPI_ERR_TAG);
  FAILS(MPI_Send_init(&x, 1, MPI_INT, 0, MPI_ANY_TAG, w, &r_), MPI_ERR_TAG);
  FAILS(MPI_Recv_init(&y, 1, MPI_INT, 0, -7, w, &r_), MPI_ERR_TAG);
  FAILS(MPI_Send_init(&x, -1, MPI_INT, 0, 0, w, &r_), MPI_ERR_COUNT);
  FAILS(MPI_Recv_init(&y, -2, MPI_INT, 0, 0, w, &r_), MPI_ERR_COUNT);
  FAILS(MPI_Send_init(NULL, 1, MPI_INT, 0, 0, w, &r_), MPI_ERR_BUFFER);
  FAILS(MPI_Send_init(&x, 1, MPI_DATATYPE_NULL, 0, 0, w, &r_), MPI_ERR_TYPE);

  /* the messages */
  MPI_Request r;
  int rcs[4] = {MPI_Send_init(&x, 1, MPI_INT, np, 0, w, &r),
                MPI_Recv_init(&y, 1, MPI_INT, 0, -7, w, &r),
                MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_OP_NULL, w, ni, &r),
                MPI_Bcast_init(&x, 1, MPI_INT, -3, w, ni, &r)};
  for (int i = 0; i < 4 && me == 0; i++) {
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    CHECK(rcs[i] != MPI_SUCCESS && MPI_Error_string(rcs[i], msg, &len) == MPI_SUCCESS);
    printf("init_badargs: %s\n", msg);
  }

  /* collectives */
  FAILS(MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_OP_NULL, w, ni, &r_), MPI_ERR_OP);
  FAILS(MPI_Reduce_init(&x, &y, 1, MPI_INT, MPI_OP_NULL, 0, w, ni, &r_), MPI_ERR_OP);
  FAILS(MPI_Scan_init(&x, &y, 1, MPI_INT, MPI_OP_NULL, w, ni, &r_), MPI_ERR_OP);
  FAILS(MPI_Exscan_init(&x, &y, 1, MPI_INT, MPI_OP_NULL, w, ni, &r_), MPI_ERR_OP);
  FAILS(MPI_Reduce_scatter_block_init(v, &y, 1, MPI_INT, MPI_OP_NULL, w, ni, &r_), MPI_ERR_OP);
  FAILS(MPI_Bcast_init(&x, -1, MPI_INT, 0, w, ni, &r_), MPI_ERR_COUNT);
  FAILS_COUNT(MPI_Allreduce_init(&x, &y, -2, MPI_INT, MPI_SUM, w, ni, &r_));
  FAILS_COUNT(MPI_Reduce_init(&x, &y, -1, MPI_INT, MPI_SUM, 0, w, ni, &r_));
  FAILS_COUNT(MPI_Scan_init(&x, &y, -1, MPI_INT, MPI_SUM, w, ni, &r_));
  FAILS_COUNT(MPI_Reduce_scatter_block_init(v, &y, -1, MPI_INT, MPI_SUM, w, ni, &r_));
  FAILS(MPI_Bcast_init(&x, 1, MPI_INT, -3, w, ni, &r_), MPI_ERR_ROOT);
  FAILS(MPI_Bcast_init(&x, 1, MPI_INT, np, w, ni, &r_), MPI_ERR_ROOT);
  FAILS(MPI_Reduce_init(&x, &y, 1, MPI_INT, MPI_SUM, np, w, ni, &r_), MPI_ERR_ROOT);
  FAILS(MPI_Gather_init(&x, 1, MPI_INT, v, 1, MPI_INT, -3, w, ni, &r_), MPI_ERR_ROOT);
  FAILS(MPI_Scatter_init(v, 1, MPI_INT, &y, 1, MPI_INT, np, w, ni, &r_), MPI_ERR_ROOT);

  /* on an intercommunicator of the even and the odd ranks */
  MPI_Comm local, ic;
  MPI_Comm_split(w, me % 2, me, &local);
  MPI_Intercomm_create(local, 0, w, me % 2 ? 0 : 1, 5, &ic);
  MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
  int rsize;
  MPI_Comm_remote_size(ic, &rsize);
  FAILS(MPI_Send_init(&x, 1, MPI_INT, rsize, 0, ic, &r_), MPI_ERR_RANK);
  FAILS(MPI_Bcast_init(&x, 1, MPI_INT, rsize, ic, ni, &r_), MPI_ERR_ROOT);
  FAILS(MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_OP_NULL, ic, ni, &r_), MPI_ERR_OP);
  /* (MPI_Scan_init on an intercommunicator is MPI_ERR_COMM on ibdyn; MPICH 5 fails an
     assertion instead, so this program does not ask) */

  /* good arguments still work: a ring of persistent sends, a bcast from the last rank */
  MPI_Request rq[3];
  int to = (me + 1) % np, from = (me + np - 1) % np, got = -1, b = me == np - 1 ? 42 : 0;
  CHECK(MPI_Send_init(&me, 1, MPI_INT, to, 3, w, &rq[0]) == MPI_SUCCESS);
  CHECK(MPI_Recv_init(&got, 1, MPI_INT, from, 3, w, &rq[1]) == MPI_SUCCESS);
  CHECK(MPI_Bcast_init(&b, 1, MPI_INT, np - 1, w, ni, &rq[2]) == MPI_SUCCESS);
  CHECK(MPI_Startall(3, rq) == MPI_SUCCESS);
  CHECK(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  CHECK(got == from && b == 42);
  for (int i = 0; i < 3; i++) MPI_Request_free(&rq[i]);

  MPI_Comm_free(&ic);
  MPI_Comm_free(&local);
  if (me == 0) printf("init_badargs: ok\n");
  MPI_Finalize();
  return 0;
}
