/* Every intracommunicator collective, blocking and non-blocking, with MPI_IN_PLACE where the
   standard allows it, a user operation, MINLOC and a derived datatype. Any number of ranks. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

static int nb; /* 0: blocking calls, 1: the non-blocking forms followed by MPI_Wait */
static MPI_Request req;
#define DO(blocking, nonblocking, ...)                   \
  do {                                                   \
    if (nb) {                                            \
      CHECK(MPI_##nonblocking(__VA_ARGS__, &req) == 0);  \
      CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == 0);     \
    } else {                                             \
      CHECK(MPI_##blocking(__VA_ARGS__) == 0);           \
    }                                                    \
  } while (0)

static void absmax(void *in, void *inout, int *len, MPI_Datatype *dt) {
  int *a = in, *b = inout;
  (void)dt;
  for (int i = 0; i < *len; i++) {
    int x = abs(a[i]), y = abs(b[i]);
    b[i] = x > y ? x : y;
  }
}

int main(int argc, char **argv) {
  int rank, p;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm c = MPI_COMM_WORLD;
  int *all = malloc(sizeof(int) * p * p), *got = malloc(sizeof(int) * p * p);
  int *counts = malloc(sizeof(int) * p), *displs = malloc(sizeof(int) * p);
  MPI_Op myop;
  MPI_Op_create(absmax, 1, &myop);
  for (nb = 0; nb < 2; nb++) {
    int root = (nb + 1) % p;
    if (nb) {
      MPI_Ibarrier(c, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
      MPI_Barrier(c);
    }
    /* bcast */
    int v[3] = {0, 0, 0};
    if (rank == root) v[0] = 7, v[1] = 8, v[2] = 9;
    DO(Bcast, Ibcast, v, 3, MPI_INT, root, c);
    CHECK(v[0] == 7 && v[2] == 9);
    /* reduce, allreduce, in place, user op */
    int mine = rank + 1, sum = 0;
    DO(Reduce, Ireduce, &mine, &sum, 1, MPI_INT, MPI_SUM, root, c);
    if (rank == root) CHECK(sum == p * (p + 1) / 2);
    sum = rank + 1;
    if (rank == root) DO(Reduce, Ireduce, MPI_IN_PLACE, &sum, 1, MPI_INT, MPI_SUM, root, c);
    else DO(Reduce, Ireduce, &sum, NULL, 1, MPI_INT, MPI_SUM, root, c);
    if (rank == root) CHECK(sum == p * (p + 1) / 2);
    double dm = rank, dmax = -1;
    DO(Allreduce, Iallreduce, &dm, &dmax, 1, MPI_DOUBLE, MPI_MAX, c);
    CHECK(dmax == p - 1);
    int neg = -rank * 3, am = 0;
    DO(Allreduce, Iallreduce, &neg, &am, 1, MPI_INT, myop, c);
    CHECK(am == (p - 1) * 3);
    int ip = rank;
    DO(Allreduce, Iallreduce, MPI_IN_PLACE, &ip, 1, MPI_INT, MPI_SUM, c);
    CHECK(ip == p * (p - 1) / 2);
    struct { double v; int i; } loc = {(double)(rank % 2), rank}, lr;
    DO(Allreduce, Iallreduce, &loc, &lr, 1, MPI_DOUBLE_INT, MPI_MAXLOC, c);
    CHECK(lr.v == (p > 1 ? 1.0 : 0.0) && lr.i == (p > 1 ? 1 : 0));
    /* gather, gather in place, gatherv */
    int two[2] = {rank, rank * 10};
    for (int i = 0; i < 2 * p; i++) got[i] = -1;
    DO(Gather, Igather, two, 2, MPI_INT, got, 2, MPI_INT, root, c);
    if (rank == root) for (int i = 0; i < p; i++) CHECK(got[2 * i] == i && got[2 * i + 1] == 10 * i);
    if (rank == root) {
      for (int i = 0; i < 2 * p; i++) got[i] = -1;
      got[2 * root] = root, got[2 * root + 1] = root * 10;
      DO(Gather, Igather, MPI_IN_PLACE, 2, MPI_INT, got, 2, MPI_INT, root, c);
      for (int i = 0; i < p; i++) CHECK(got[2 * i + 1] == 10 * i);
    } else {
      DO(Gather, Igather, two, 2, MPI_INT, NULL, 0, MPI_INT, root, c);
    }
    int total = 0;
    for (int i = 0; i < p; i++) counts[i] = i + 1, displs[i] = total, total += i + 1;
    int *mv = malloc(sizeof(int) * (rank + 1));
    for (int i = 0; i <= rank; i++) mv[i] = rank;
    for (int i = 0; i < total; i++) got[i] = -1;
    DO(Gatherv, Igatherv, mv, rank + 1, MPI_INT, got, counts, displs, MPI_INT, root, c);
    if (rank == root) for (int i = 0; i < p; i++) CHECK(got[displs[i]] == i && got[displs[i] + i] == i);
    /* allgather (also in place), allgatherv */
    DO(Allgather, Iallgather, &rank, 1, MPI_INT, got, 1, MPI_INT, c);
    for (int i = 0; i < p; i++) CHECK(got[i] == i);
    for (int i = 0; i < p; i++) got[i] = i == rank ? rank * 2 : -1;
    DO(Allgather, Iallgather, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, got, 1, MPI_INT, c);
    for (int i = 0; i < p; i++) CHECK(got[i] == 2 * i);
    DO(Allgatherv, Iallgatherv, mv, rank + 1, MPI_INT, got, counts, displs, MPI_INT, c);
    for (int i = 0; i < p; i++) CHECK(got[displs[i] + i] == i);
    /* scatter (also in place), scatterv */
    if (rank == root) for (int i = 0; i < 2 * p; i++) all[i] = 100 + i;
    int sc[2] = {-1, -1};
    DO(Scatter, Iscatter, all, 2, MPI_INT, sc, 2, MPI_INT, root, c);
    CHECK(sc[0] == 100 + 2 * rank && sc[1] == 101 + 2 * rank);
    if (rank == root) DO(Scatter, Iscatter, all, 2, MPI_INT, MPI_IN_PLACE, 2, MPI_INT, root, c);
    else DO(Scatter, Iscatter, NULL, 2, MPI_INT, sc, 2, MPI_INT, root, c);
    if (rank == root) for (int i = 0; i < total; i++) all[i] = i;
    for (int i = 0; i <= rank; i++) mv[i] = -1;
    DO(Scatterv, Iscatterv, all, counts, displs, MPI_INT, mv, rank + 1, MPI_INT, root, c);
    CHECK(mv[0] == displs[rank] && mv[rank] == displs[rank] + rank);
    /* alltoall (also in place), alltoallv, alltoallw */
    for (int i = 0; i < p; i++) all[i] = rank * 100 + i;
    DO(Alltoall, Ialltoall, all, 1, MPI_INT, got, 1, MPI_INT, c);
    for (int i = 0; i < p; i++) CHECK(got[i] == i * 100 + rank);
    DO(Alltoall, Ialltoall, MPI_IN_PLACE, 1, MPI_INT, got, 1, MPI_INT, c);
    for (int i = 0; i < p; i++) CHECK(got[i] == rank * 100 + i);
    int *sc2 = malloc(sizeof(int) * p), *sd2 = malloc(sizeof(int) * p), *rc2 = malloc(sizeof(int) * p), *rd2 = malloc(sizeof(int) * p);
    int so = 0, ro = 0;
    for (int i = 0; i < p; i++) {
      sc2[i] = i + 1, sd2[i] = so, so += i + 1; /* i+1 items to rank i */
      rc2[i] = rank + 1, rd2[i] = ro, ro += rank + 1;
    }
    for (int i = 0; i < so; i++) all[i] = rank;
    DO(Alltoallv, Ialltoallv, all, sc2, sd2, MPI_INT, got, rc2, rd2, MPI_INT, c);
    for (int i = 0; i < p; i++) CHECK(got[rd2[i]] == i && got[rd2[i] + rank] == i);
    MPI_Datatype *tw = malloc(sizeof(MPI_Datatype) * p);
    for (int i = 0; i < p; i++) {
      tw[i] = MPI_INT, sc2[i] = 1, sd2[i] = i * (int)sizeof(int), rc2[i] = 1, rd2[i] = i * (int)sizeof(int);
      all[i] = rank * 1000 + i;
    }
    DO(Alltoallw, Ialltoallw, all, sc2, sd2, tw, got, rc2, rd2, tw, c);
    for (int i = 0; i < p; i++) CHECK(got[i] == i * 1000 + rank);
    /* reduce_scatter_block, reduce_scatter, scan, exscan */
    for (int i = 0; i < 2 * p; i++) all[i] = i;
    int rsb[2];
    DO(Reduce_scatter_block, Ireduce_scatter_block, all, rsb, 2, MPI_INT, MPI_SUM, c);
    CHECK(rsb[0] == 2 * rank * p && rsb[1] == (2 * rank + 1) * p);
    for (int i = 0; i < total; i++) all[i] = 1;
    DO(Reduce_scatter, Ireduce_scatter, all, got, counts, MPI_INT, MPI_SUM, c);
    for (int i = 0; i <= rank; i++) CHECK(got[i] == p);
    int sv = rank + 1, sr = 0;
    DO(Scan, Iscan, &sv, &sr, 1, MPI_INT, MPI_SUM, c);
    CHECK(sr == (rank + 1) * (rank + 2) / 2);
    sr = -5;
    DO(Exscan, Iexscan, &sv, &sr, 1, MPI_INT, MPI_SUM, c);
    if (rank > 0) CHECK(sr == rank * (rank + 1) / 2);
    /* a derived datatype in a collective: every other int */
    MPI_Datatype every2;
    MPI_Type_vector(3, 1, 2, MPI_INT, &every2);
    MPI_Type_commit(&every2);
    int six[6] = {-1, -1, -1, -1, -1, -1};
    if (rank == root) for (int i = 0; i < 6; i++) six[i] = i;
    DO(Bcast, Ibcast, six, 1, every2, root, c);
    CHECK(six[0] == 0 && six[2] == 2 && six[4] == 4);
    if (rank != root) CHECK(six[1] == -1 && six[5] == -1);
    MPI_Type_free(&every2);
    free(mv), free(sc2), free(sd2), free(rc2), free(rd2), free(tw);
  }
  int lv[2] = {1, 2}, lo[2] = {10, 20};
  MPI_Reduce_local(lv, lo, 2, MPI_INT, MPI_SUM);
  CHECK(lo[0] == 11 && lo[1] == 22);
  int commute = 0;
  MPI_Op_commutative(myop, &commute);
  CHECK(commute);
  MPI_Op_free(&myop);
  CHECK(myop == MPI_OP_NULL);
  free(all), free(got), free(counts), free(displs);
  if (rank == 0) printf("coll_all: ok on %d ranks\n", p);
  MPI_Finalize();
  return 0;
}
