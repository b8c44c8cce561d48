/* Intercommunicators made by MPI_Intercomm_create and by MPI_Comm_connect/accept through the
   name service: every collective with MPI_ROOT / MPI_PROC_NULL / remote roots, blocking and
   non-blocking, merge, MPI_Comm_create on subgroups of each side, disconnect; an unknown
   service name fails with MPI_ERR_NAME.
   Run with an even number of ranks >= 2: the low half is group A, the high half group B. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

static int rank, size, half, in_a, lr, ls, rs;

static void collectives(MPI_Comm ic) {
  MPI_Comm_rank(ic, &lr);
  MPI_Comm_size(ic, &ls);
  MPI_Comm_remote_size(ic, &rs);
  int flag;
  MPI_Comm_test_inter(ic, &flag);
  CHECK(flag && ls == half && rs == size - half);
  MPI_Barrier(ic);
  MPI_Request q;
  MPI_Ibarrier(ic, &q);
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  /* bcast from A's rank 0 to B */
  int v = -1;
  if (in_a) {
    v = 42;
    MPI_Bcast(&v, 1, MPI_INT, lr == 0 ? MPI_ROOT : MPI_PROC_NULL, ic);
  } else {
    MPI_Bcast(&v, 1, MPI_INT, 0, ic);
    CHECK(v == 42);
  }
  /* non-blocking bcast from B's rank 0 to A */
  v = -1;
  if (!in_a) {
    v = 43;
    MPI_Ibcast(&v, 1, MPI_INT, lr == 0 ? MPI_ROOT : MPI_PROC_NULL, ic, &q);
  } else {
    MPI_Ibcast(&v, 1, MPI_INT, 0, ic, &q);
  }
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  if (in_a) CHECK(v == 43);
  /* allreduce: each group gets the sum of the other's */
  int mine = in_a ? 1 : 100, sum = 0;
  MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, ic);
  CHECK(sum == (in_a ? 100 * rs : rs));
  MPI_Iallreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, ic, &q);
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  CHECK(sum == (in_a ? 100 * rs : rs));
  /* reduce to A's rank 0 */
  sum = 0;
  if (in_a) {
    MPI_Reduce(NULL, &sum, 1, MPI_INT, MPI_SUM, lr == 0 ? MPI_ROOT : MPI_PROC_NULL, ic);
    if (lr == 0) CHECK(sum == 100 * rs);
  } else {
    MPI_Reduce(&mine, NULL, 1, MPI_INT, MPI_SUM, 0, ic);
  }
  /* allgather: each gets the other group's ranks */
  int *all = malloc(sizeof(int) * (size + 1));
  MPI_Allgather(&lr, 1, MPI_INT, all, 1, MPI_INT, ic);
  for (int i = 0; i < rs; i++) CHECK(all[i] == i);
  /* gather to B's rank 0, scatter from it */
  if (!in_a) {
    MPI_Gather(NULL, 0, MPI_INT, all, 1, MPI_INT, lr == 0 ? MPI_ROOT : MPI_PROC_NULL, ic);
    if (lr == 0) for (int i = 0; i < rs; i++) CHECK(all[i] == i);
    for (int i = 0; i < rs; i++) all[i] = 1000 + i;
    MPI_Scatter(all, 1, MPI_INT, NULL, 0, MPI_INT, lr == 0 ? MPI_ROOT : MPI_PROC_NULL, ic);
  } else {
    MPI_Gather(&lr, 1, MPI_INT, NULL, 0, MPI_INT, 0, ic);
    v = -1;
    MPI_Scatter(NULL, 0, MPI_INT, &v, 1, MPI_INT, 0, ic);
    CHECK(v == 1000 + lr);
  }
  /* alltoall: block j to remote rank j */
  int *out = malloc(sizeof(int) * (size + 1));
  for (int j = 0; j < rs; j++) out[j] = (in_a ? 0 : 10000) + lr * 100 + j;
  MPI_Alltoall(out, 1, MPI_INT, all, 1, MPI_INT, ic);
  for (int i = 0; i < rs; i++) CHECK(all[i] == (in_a ? 10000 : 0) + i * 100 + lr);
  /* reduce_scatter_block: the other group's sum, one element each */
  for (int j = 0; j < ls; j++) out[j] = 1;
  MPI_Reduce_scatter_block(out, &v, 1, MPI_INT, MPI_SUM, ic);
  CHECK(v == rs);
  /* the v-forms: remote rank i contributes i + 1 ints */
  int *cnt = malloc(sizeof(int) * (size + 1)), *dsp = malloc(sizeof(int) * (size + 1)), tot = 0;
  for (int i = 0; i < rs; i++) cnt[i] = i + 1, dsp[i] = tot, tot += i + 1;
  int *mv = malloc(sizeof(int) * (lr + 1)), *big = malloc(sizeof(int) * (tot + 1));
  for (int i = 0; i <= lr; i++) mv[i] = lr;
  MPI_Allgatherv(mv, lr + 1, MPI_INT, big, cnt, dsp, MPI_INT, ic);
  for (int i = 0; i < rs; i++) CHECK(big[dsp[i]] == i && big[dsp[i] + i] == i);
  if (in_a) {
    for (int i = 0; i < tot; i++) big[i] = -1;
    MPI_Gatherv(NULL, 0, MPI_INT, big, cnt, dsp, MPI_INT, lr == 0 ? MPI_ROOT : MPI_PROC_NULL, ic);
    if (lr == 0) for (int i = 0; i < rs; i++) CHECK(big[dsp[i] + i] == i);
    for (int i = 0; i < tot; i++) big[i] = 500 + i;
    MPI_Scatterv(big, cnt, dsp, MPI_INT, NULL, 0, MPI_INT, lr == 0 ? MPI_ROOT : MPI_PROC_NULL, ic);
  } else {
    MPI_Gatherv(mv, lr + 1, MPI_INT, NULL, NULL, NULL, MPI_INT, 0, ic);
    for (int i = 0; i <= lr; i++) mv[i] = -1;
    MPI_Scatterv(NULL, NULL, NULL, MPI_INT, mv, lr + 1, MPI_INT, 0, ic);
    /* A's displacements for B's rank lr: lr(lr+1)/2 */
    CHECK(mv[0] == 500 + lr * (lr + 1) / 2 && mv[lr] == 500 + lr * (lr + 1) / 2 + lr);
  }
  /* alltoallv: one int to each remote rank, as a v-form */
  int *ones = malloc(sizeof(int) * (size + 1)), *od = malloc(sizeof(int) * (size + 1));
  int *sv = malloc(sizeof(int) * (size + 1)), *rv = malloc(sizeof(int) * (size + 1));
  int *od2 = malloc(sizeof(int) * (size + 1)), *ones2 = malloc(sizeof(int) * (size + 1));
  for (int j = 0; j < rs; j++) ones[j] = 1, od[j] = j, sv[j] = lr * 10 + j;
  for (int j = 0; j < rs; j++) ones2[j] = 1, od2[j] = j;
  MPI_Alltoallv(sv, ones, od, MPI_INT, rv, ones2, od2, MPI_INT, ic);
  for (int i = 0; i < rs; i++) CHECK(rv[i] == i * 10 + lr);
  free(cnt), free(dsp), free(mv), free(big), free(ones), free(od), free(sv), free(rv), free(od2), free(ones2);
  free(all), free(out);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size >= 2 && size % 2 == 0);
  half = size / 2;
  in_a = rank < half;
  MPI_Comm local;
  MPI_Comm_split(MPI_COMM_WORLD, in_a, rank, &local);

  /* 1. Intercomm_create over MPI_COMM_WORLD */
  MPI_Comm ic;
  MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, in_a ? half : 0, 7, &ic);
  collectives(ic);
  MPI_Group rg;
  MPI_Comm_remote_group(ic, &rg);
  int n;
  MPI_Group_size(rg, &n);
  CHECK(n == size - half);
  MPI_Group_free(&rg);
  /* MPI_Comm_create on the intercommunicator: on each side a subgroup in reverse order (the
     whole group in A, all but local rank 0 in B); the new intercommunicator's groups follow
     the subgroups' order, and B's local rank 0 gets MPI_COMM_NULL. */
  MPI_Group lg, sub;
  MPI_Comm_group(ic, &lg);
  int order[64], keep = in_a ? ls : ls - 1;
  for (int i = 0; i < keep; i++) order[i] = ls - 1 - i;
  MPI_Group_incl(lg, keep, order, &sub);
  MPI_Comm made;
  CHECK(MPI_Comm_create(ic, sub, &made) == MPI_SUCCESS);
  if ((!in_a && lr == 0) || half == 1) { /* B's subgroup empty: nobody gets one */
    CHECK(made == MPI_COMM_NULL);
  } else {
    int mrank, mremote, theirs = -1;
    CHECK(made != MPI_COMM_NULL);
    MPI_Comm_rank(made, &mrank);
    MPI_Comm_remote_size(made, &mremote);
    CHECK(mrank == ls - 1 - lr && mremote == (in_a ? rs - 1 : rs));
    /* Each side's new rank 0 (its old highest) tells the other side its world rank. */
    MPI_Bcast(in_a ? (void *)&rank : (void *)&theirs, 1, MPI_INT,
              in_a ? (mrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, made);
    if (!in_a) CHECK(theirs == half - 1);
    MPI_Comm_free(&made);
  }
  MPI_Group_free(&sub);
  MPI_Group_free(&lg);
  MPI_Comm merged;
  MPI_Intercomm_merge(ic, !in_a, &merged);
  int mr;
  MPI_Comm_rank(merged, &mr);
  CHECK(mr == rank);
  MPI_Comm_free(&merged);
  MPI_Comm_free(&ic);

  /* 2. connect/accept through the name service */
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  char port[MPI_MAX_PORT_NAME] = "";
  int cls = 0, code = MPI_Lookup_name("ibdyn-abi-test-no-such-service", MPI_INFO_NULL, port);
  MPI_Error_class(code, &cls);
  CHECK(cls == MPI_ERR_NAME);
  if (in_a) {
    if (rank == 0) {
      MPI_Open_port(MPI_INFO_NULL, port);
      MPI_Publish_name("ibdyn-abi-test", MPI_INFO_NULL, port);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_accept(port, MPI_INFO_NULL, 0, local, &ic);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == half) CHECK(MPI_Lookup_name("ibdyn-abi-test", MPI_INFO_NULL, port) == MPI_SUCCESS);
    MPI_Comm_connect(port, MPI_INFO_NULL, 0, local, &ic);
  }
  collectives(ic);
  MPI_Comm_disconnect(&ic);
  CHECK(ic == MPI_COMM_NULL);
  if (rank == 0) {
    MPI_Unpublish_name("ibdyn-abi-test", MPI_INFO_NULL, port);
    MPI_Close_port(port);
  }
  MPI_Comm_free(&local);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("intercomm: ok on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
