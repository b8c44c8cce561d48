/* Non-blocking collectives on an intercommunicator (a parent and the 2 children it spawns)
   do not wait for the other group at the call: each side starts one, then the parent sends a
   message that child 0 receives BEFORE it starts its own. A collective that ran to
   completion at the call would leave the parent waiting for child 0 and child 0 waiting for
   the message. Igather, Iscatter, Ireduce (root: the parent), Iallgather, Ialltoall,
   Ireduce_scatter_block and Ireduce_scatter, the v-forms Igatherv, Iscatterv, Iallgatherv
   and Ialltoallv, and Ialltoallw (a strided type on the parent's side), each checked for its
   data. The children then do the same with Ialltoallw on their own MPI_COMM_WORLD: child 0
   starts it and sends child 1 what it waits for before starting its own. */
#include <mpi.h>
#include "check.h"

#define KIDS 2

/* Child 0 takes the parent's go-ahead first; the parent sends it after starting. */
static void go_ahead(MPI_Comm inter, int parent, int rank, int tag) {
  int token = tag;
  if (parent) {
    CHECK(MPI_Send(&token, 1, MPI_INT, 0, tag, inter) == MPI_SUCCESS);
  } else if (rank == 0) {
    CHECK(MPI_Recv(&token, 1, MPI_INT, 0, tag, inter, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(token == tag);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm inter;
  MPI_Comm_get_parent(&inter);
  int parent = inter == MPI_COMM_NULL, rank;
  if (parent) {
    CHECK(MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, KIDS, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter,
                         MPI_ERRCODES_IGNORE) == MPI_SUCCESS);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int root = parent ? MPI_ROOT : 0;
  MPI_Request r;

  /* gather: the parent gets each child's rank + 10 */
  int mine = rank + 10, got[KIDS] = {0};
  if (parent) {
    CHECK(MPI_Igather(NULL, 0, MPI_INT, got, 1, MPI_INT, root, inter, &r) == MPI_SUCCESS);
    go_ahead(inter, parent, rank, 1);
  } else {
    go_ahead(inter, parent, rank, 1);
    CHECK(MPI_Igather(&mine, 1, MPI_INT, NULL, 0, MPI_INT, root, inter, &r) == MPI_SUCCESS);
  }
  CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  if (parent) CHECK(got[0] == 10 && got[1] == 11);

  /* scatter: child i gets 100 + i */
  int out[KIDS] = {100, 101}, in = -1;
  if (parent) {
    CHECK(MPI_Iscatter(out, 1, MPI_INT, NULL, 0, MPI_INT, root, inter, &r) == MPI_SUCCESS);
    go_ahead(inter, parent, rank, 2);
  } else {
    go_ahead(inter, parent, rank, 2);
    CHECK(MPI_Iscatter(NULL, 0, MPI_INT, &in, 1, MPI_INT, root, inter, &r) == MPI_SUCCESS);
  }
  CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  if (!parent) CHECK(in == 100 + rank);

  /* reduce: the parent gets the children's sum of (rank + 1, 2) */
  int contrib[2] = {rank + 1, 2}, sum[2] = {0, 0};
  if (parent) {
    CHECK(MPI_Ireduce(NULL, sum, 2, MPI_INT, MPI_SUM, root, inter, &r) == MPI_SUCCESS);
    go_ahead(inter, parent, rank, 3);
  } else {
    go_ahead(inter, parent, rank, 3);
    CHECK(MPI_Ireduce(contrib, NULL, 2, MPI_INT, MPI_SUM, root, inter, &r) == MPI_SUCCESS);
  }
  CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  if (parent) CHECK(sum[0] == 3 && sum[1] == 2 * KIDS);

  /* allgather: every process gets the other group's (rank + 1) * (parent ? 7 : 1) */
  int val = (rank + 1) * (parent ? 7 : 1), all[KIDS] = {0};
  if (parent) {
    CHECK(MPI_Iallgather(&val, 1, MPI_INT, all, 1, MPI_INT, inter, &r) == MPI_SUCCESS);
    go_ahead(inter, parent, rank, 4);
  } else {
    go_ahead(inter, parent, rank, 4);
    CHECK(MPI_Iallgather(&val, 1, MPI_INT, all, 1, MPI_INT, inter, &r) == MPI_SUCCESS);
  }
  CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  if (parent) CHECK(all[0] == 1 && all[1] == 2);
  else CHECK(all[0] == 7);

  /* alltoall: block j to remote rank j, tagged with both ranks */
  int send[KIDS], recv[KIDS] = {-1, -1};
  int remote = parent ? KIDS : 1;
  for (int j = 0; j < remote; j++) send[j] = (parent ? 1000 : 2000) + 10 * rank + j;
  if (parent) {
    CHECK(MPI_Ialltoall(send, 1, MPI_INT, recv, 1, MPI_INT, inter, &r) == MPI_SUCCESS);
    go_ahead(inter, parent, rank, 5);
  } else {
    go_ahead(inter, parent, rank, 5);
    CHECK(MPI_Ialltoall(send, 1, MPI_INT, recv, 1, MPI_INT, inter, &r) == MPI_SUCCESS);
  }
  CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  for (int i = 0; i < remote; i++)
    CHECK(recv[i] == (parent ? 2000 + 10 * i : 1000 + rank));

  /* reduce_scatter_block: both groups reduce vectors of 2 ints (the parent keeps 2 as its
     block, each child 1); each process gets its block of the other group's sum */
  int rc = parent ? 2 : 1, vec[2], part[2] = {-1, -1};
  for (int i = 0; i < 2; i++) vec[i] = parent ? 50 * (i + 1) : i + 1 + rank;
  if (parent) {
    CHECK(MPI_Ireduce_scatter_block(vec, part, rc, MPI_INT, MPI_SUM, inter, &r) == MPI_SUCCESS);
    go_ahead(inter, parent, rank, 6);
  } else {
    go_ahead(inter, parent, rank, 6);
    CHECK(MPI_Ireduce_scatter_block(vec, part, rc, MPI_INT, MPI_SUM, inter, &r) == MPI_SUCCESS);
  }
  CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  if (parent) CHECK(part[0] == 3 && part[1] == 5);
  else CHECK(part[0] == 50 * (rank + 1));

  /* reduce_scatter with counts: the same vectors cut by recvcounts ({2} in the parent's
     group, {1, 1} in the children's) */
  int counts_parent[1] = {2}, counts_kids[KIDS] = {1, 1}, piece[2] = {-1, -1};
  int *counts = parent ? counts_parent : counts_kids;
  if (parent) {
    CHECK(MPI_Ireduce_scatter(vec, piece, counts, MPI_INT, MPI_SUM, inter, &r) == MPI_SUCCESS);
    go_ahead(inter, parent, rank, 7);
  } else {
    go_ahead(inter, parent, rank, 7);
    CHECK(MPI_Ireduce_scatter(vec, piece, counts, MPI_INT, MPI_SUM, inter, &r) == MPI_SUCCESS);
  }
  CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  if (parent) CHECK(piece[0] == 3 && piece[1] == 5);
  else CHECK(piece[0] == 50 * (rank + 1));

  /* the v-forms: child i contributes (or gets) i + 1 ints; the parent 3 */
  int vbuf[8], vout[8], vcounts[KIDS] = {1, 2}, vdispls[KIDS] = {0, 1}, three[3] = {7, 8, 9};
  for (int i = 0; i < 8; i++) vbuf[i] = 40 + 10 * rank + i, vout[i] = -1;
  if (parent) {
    CHECK(MPI_Igatherv(NULL, 0, MPI_INT, vout, vcounts, vdispls, MPI_INT, root, inter, &r) ==
          MPI_SUCCESS);
    go_ahead(inter, parent, rank, 8);
  } else {
    go_ahead(inter, parent, rank, 8);
    CHECK(MPI_Igatherv(vbuf, rank + 1, MPI_INT, NULL, NULL, NULL, MPI_INT, root, inter, &r) ==
          MPI_SUCCESS);
  }
  CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  if (parent) CHECK(vout[0] == 40 && vout[1] == 50 && vout[2] == 51);

  for (int i = 0; i < 8; i++) vout[i] = -1;
  if (parent) {
    CHECK(MPI_Iscatterv(vbuf, vcounts, vdispls, MPI_INT, NULL, 0, MPI_INT, root, inter, &r) ==
          MPI_SUCCESS);
    go_ahead(inter, parent, rank, 9);
  } else {
    go_ahead(inter, parent, rank, 9);
    CHECK(MPI_Iscatterv(NULL, NULL, NULL, MPI_INT, vout, rank + 1, MPI_INT, root, inter, &r) ==
          MPI_SUCCESS);
  }
  CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  if (!parent) CHECK(vout[0] == 40 + rank && (rank == 0 || vout[1] == 42));

  for (int i = 0; i < 8; i++) vout[i] = -1;
  int one_count[1] = {3}, zero_displ[1] = {0};
  if (parent) {
    CHECK(MPI_Iallgatherv(three, 3, MPI_INT, vout, vcounts, vdispls, MPI_INT, inter, &r) ==
          MPI_SUCCESS);
    go_ahead(inter, parent, rank, 10);
  } else {
    go_ahead(inter, parent, rank, 10);
    CHECK(MPI_Iallgatherv(vbuf, rank + 1, MPI_INT, vout, one_count, zero_displ, MPI_INT, inter,
                          &r) == MPI_SUCCESS);
  }
  CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  if (parent) CHECK(vout[0] == 40 && vout[1] == 50 && vout[2] == 51);
  else CHECK(vout[0] == 7 && vout[1] == 8 && vout[2] == 9);

  /* alltoallv: the parent sends child j j + 1 ints; child i sends the parent i + 2 */
  for (int i = 0; i < 8; i++) vout[i] = -1;
  int kid_counts[1], kid_displs[1] = {0}, from_kids[KIDS] = {2, 3}, at_kids[KIDS] = {0, 2};
  if (parent) {
    CHECK(MPI_Ialltoallv(vbuf, vcounts, vdispls, MPI_INT, vout, from_kids, at_kids, MPI_INT, inter,
                         &r) == MPI_SUCCESS);
    go_ahead(inter, parent, rank, 11);
  } else {
    go_ahead(inter, parent, rank, 11);
    int mine_count[1] = {rank + 2};
    kid_counts[0] = rank + 1;
    CHECK(MPI_Ialltoallv(vbuf, mine_count, kid_displs, MPI_INT, vout, kid_counts, kid_displs,
                         MPI_INT, inter, &r) == MPI_SUCCESS);
  }
  CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  if (parent) CHECK(vout[0] == 40 && vout[1] == 41 && vout[2] == 50 && vout[4] == 52);
  else CHECK(vout[0] == 40 + rank && (rank == 0 || vout[1] == 42));

  /* alltoallw: child i gets {60 + 10i, 61 + 10i}; the parent gets {80 + i, 90 + i} from
     child i at ints 4i and 4i + 2 (a vector type), the ints between left alone */
  MPI_Datatype strided;
  MPI_Type_vector(2, 1, 2, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  int wout[4] = {60, 61, 70, 71}, win[8], kid_in[2] = {-1, -1};
  for (int i = 0; i < 8; i++) win[i] = -1;
  if (parent) {
    int sc[KIDS] = {2, 2}, sd[KIDS] = {0, 8}, rc[KIDS] = {1, 1}, rd[KIDS] = {0, 16};
    MPI_Datatype st[KIDS] = {MPI_INT, MPI_INT}, rt[KIDS] = {strided, strided};
    CHECK(MPI_Ialltoallw(wout, sc, sd, st, win, rc, rd, rt, inter, &r) == MPI_SUCCESS);
    go_ahead(inter, parent, rank, 12);
  } else {
    go_ahead(inter, parent, rank, 12);
    int mine_w[2] = {80 + rank, 90 + rank}, two[1] = {2}, zero[1] = {0};
    MPI_Datatype ints[1] = {MPI_INT};
    CHECK(MPI_Ialltoallw(mine_w, two, zero, ints, kid_in, two, zero, ints, inter, &r) ==
          MPI_SUCCESS);
  }
  CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  if (parent) {
    CHECK(win[0] == 80 && win[2] == 90 && win[4] == 81 && win[6] == 91);
    CHECK(win[1] == -1 && win[3] == -1 && win[5] == -1 && win[7] == -1);
  } else {
    CHECK(kid_in[0] == 60 + 10 * rank && kid_in[1] == 61 + 10 * rank);
  }

  /* the children's own Ialltoallw: child 0 starts it before child 1 has started its own */
  if (!parent) {
    int peer = 1 - rank, token = 7;
    int send2[KIDS] = {100 * rank, 100 * rank + 1}, got2[2 * KIDS];
    /* one int to the peer, nothing to itself */
    int counts[KIDS] = {1, 1}, sd2[KIDS] = {0, 4}, rd2[KIDS] = {0, 8};
    MPI_Datatype it[KIDS] = {MPI_INT, MPI_INT};
    counts[rank] = 0;
    for (int i = 0; i < 2 * KIDS; i++) got2[i] = -1;
    if (rank == 0) {
      CHECK(MPI_Ialltoallw(send2, counts, sd2, it, got2, counts, rd2, it, MPI_COMM_WORLD, &r) ==
            MPI_SUCCESS);
      CHECK(MPI_Send(&token, 1, MPI_INT, 1, 3, MPI_COMM_WORLD) == MPI_SUCCESS);
    } else {
      CHECK(MPI_Recv(&token, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS);
      CHECK(MPI_Ialltoallw(send2, counts, sd2, it, got2, counts, rd2, it, MPI_COMM_WORLD, &r) ==
            MPI_SUCCESS);
    }
    CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    /* block `peer` (at byte rd2[peer]) holds the peer's element for this rank */
    CHECK(got2[rd2[peer] / 4] == 100 * peer + rank);
  }
  MPI_Type_free(&strided);

  MPI_Barrier(inter);
  if (parent) printf("inter_nonblocking: ok with %d children\n", KIDS);
  MPI_Comm_disconnect(&inter);
  MPI_Finalize();
  return 0;
}
