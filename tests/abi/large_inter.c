/* MPI_Alltoallw on an intercommunicator (the even and odd ranks of the world, with a zero
 * block and per-peer datatypes), MPI_Reduce_scatter_c, and the _c type constructors
 * (contiguous, vector, hvector, indexed, struct, resized) checked against their int forms by
 * a send to self. Run with 4 ranks. */
#include <mpi.h>
#include <string.h>

#include "check.h"

/* Sends `n` ints described by type `a` (count 1) to self and receives them as `b`. */
static void same_layout(MPI_Datatype a, MPI_Datatype b) {
  int src[64], x[64], y[64];
  for (int i = 0; i < 64; i++) src[i] = i + 1;
  memset(x, 0, sizeof x);
  memset(y, 0, sizeof y);
  MPI_Sendrecv(src, 1, a, 0, 0, x, 1, a, 0, 0, MPI_COMM_SELF, MPI_STATUS_IGNORE);
  MPI_Sendrecv(src, 1, b, 0, 0, y, 1, b, 0, 0, MPI_COMM_SELF, MPI_STATUS_IGNORE);
  CHECK(memcmp(x, y, sizeof x) == 0);
  MPI_Aint lba, exa, lbb, exb;
  MPI_Type_get_extent(a, &lba, &exa);
  MPI_Type_get_extent(b, &lbb, &exb);
  CHECK(lba == lbb && exa == exb);
  int sa, sb;
  MPI_Type_size(a, &sa);
  MPI_Type_size(b, &sb);
  CHECK(sa == sb);
}

static void commit_pair(MPI_Datatype *a, MPI_Datatype *b) {
  MPI_Type_commit(a);
  MPI_Type_commit(b);
  same_layout(*a, *b);
  MPI_Type_free(a);
  MPI_Type_free(b);
}

static void type_constructors(void) {
  MPI_Datatype a, b;
  MPI_Type_contiguous(5, MPI_INT, &a);
  CHECK(MPI_Type_contiguous_c(5, MPI_INT, &b) == MPI_SUCCESS);
  commit_pair(&a, &b);
  MPI_Type_vector(3, 2, 4, MPI_INT, &a);
  CHECK(MPI_Type_vector_c(3, 2, 4, MPI_INT, &b) == MPI_SUCCESS);
  commit_pair(&a, &b);
  MPI_Type_create_hvector(3, 2, 5 * sizeof(int), MPI_INT, &a);
  CHECK(MPI_Type_create_hvector_c(3, 2, 5 * sizeof(int), MPI_INT, &b) == MPI_SUCCESS);
  commit_pair(&a, &b);
  int il[3] = {2, 1, 3}, id[3] = {0, 5, 9};
  MPI_Count cl[3] = {2, 1, 3}, cd[3] = {0, 5, 9};
  MPI_Type_indexed(3, il, id, MPI_INT, &a);
  CHECK(MPI_Type_indexed_c(3, cl, cd, MPI_INT, &b) == MPI_SUCCESS);
  commit_pair(&a, &b);
  MPI_Aint ad[2] = {0, 8 * sizeof(int)};
  MPI_Count sd[2] = {0, 8 * sizeof(int)};
  int sl[2] = {3, 2};
  MPI_Count scl[2] = {3, 2};
  MPI_Datatype tys[2] = {MPI_INT, MPI_INT};
  MPI_Type_create_struct(2, sl, ad, tys, &a);
  CHECK(MPI_Type_create_struct_c(2, scl, sd, tys, &b) == MPI_SUCCESS);
  commit_pair(&a, &b);
  MPI_Type_create_resized(MPI_INT, 0, 3 * sizeof(int), &a);
  CHECK(MPI_Type_create_resized_c(MPI_INT, 0, 3 * sizeof(int), &b) == MPI_SUCCESS);
  commit_pair(&a, &b);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size >= 2);
  type_constructors();

  /* Reduce_scatter_c: rank r gets (r + 1) elements, each the sum over ranks. */
  MPI_Count counts[64];
  int total = 0;
  for (int i = 0; i < size; i++) {
    counts[i] = i + 1;
    total += i + 1;
  }
  int send[256], recv[64];
  for (int i = 0; i < total; i++) send[i] = i * 10 + rank;
  CHECK(MPI_Reduce_scatter_c(send, recv, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD) ==
        MPI_SUCCESS);
  int first = rank * (rank + 1) / 2;
  for (int j = 0; j <= rank; j++)
    CHECK(recv[j] == size * (first + j) * 10 + size * (size - 1) / 2);

  /* Alltoallw on an intercommunicator: the evens and the odds. Local rank l sends to remote
   * rank q the ints {100*rank + q, ...} (q + 1 of them, as MPI_INT, or none to remote 0 from
   * local 0); the receiver takes them as (q+1) ints. */
  MPI_Comm half, inter;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 1 : 0, 7, &inter);
  int lrank, rsize;
  MPI_Comm_rank(inter, &lrank);
  MPI_Comm_remote_size(inter, &rsize);
  int sc[32], sdsp[32], rc[32], rdsp[32];
  MPI_Datatype st[32], rt[32];
  int sbuf[256], rbuf[256];
  int at = 0;
  for (int q = 0; q < rsize; q++) {
    sc[q] = (lrank == 0 && q == 0) ? 0 : lrank + 1;
    sdsp[q] = at * (int)sizeof(int);
    st[q] = MPI_INT;
    for (int k = 0; k < sc[q]; k++) sbuf[at + k] = 100 * rank + q;
    at += sc[q];
  }
  at = 0;
  for (int q = 0; q < rsize; q++) {
    /* Remote rank q sends me (q + 1) ints, none when both are rank 0. */
    rc[q] = (lrank == 0 && q == 0) ? 0 : q + 1;
    rdsp[q] = at * (int)sizeof(int);
    rt[q] = MPI_INT;
    at += rc[q];
  }
  for (int i = 0; i < 256; i++) rbuf[i] = -1;
  CHECK(MPI_Alltoallw(sbuf, sc, sdsp, st, rbuf, rc, rdsp, rt, inter) == MPI_SUCCESS);
  at = 0;
  for (int q = 0; q < rsize; q++) {
    int world_q = 2 * q + (rank % 2 == 0 ? 1 : 0);
    for (int k = 0; k < rc[q]; k++) CHECK(rbuf[at + k] == 100 * world_q + lrank);
    at += rc[q];
  }
  /* The next collective on the communicator is not disturbed (no block left behind). */
  int one = 1, sum = 0;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, inter);
  CHECK(sum == rsize);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
  if (rank == 0) printf("large_inter: ok\n");
  MPI_Finalize();
  return 0;
}
