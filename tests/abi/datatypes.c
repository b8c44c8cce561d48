/* Derived datatypes: construction, bounds, names, and sending and receiving with them
   (vector columns, structs, indexed blocks, resized extents, absolute addresses from
   MPI_BOTTOM). Ranks 0 and 1 exchange; the others only check the local queries. */
#include <mpi.h>
#include <stddef.h>
#include <string.h>
#include "check.h"

struct particle {
  int id;
  double pos[3];
  char tag;
};

int main(int argc, char **argv) {
  int rank, size, n, len;
  MPI_Aint lb, extent;
  char name[MPI_MAX_OBJECT_NAME];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  MPI_Type_get_name(MPI_INT, name, &len);
  CHECK(strcmp(name, "MPI_INT") == 0 && len == 7);

  /* a column of a 4x4 matrix */
  MPI_Datatype col;
  MPI_Type_vector(4, 1, 4, MPI_DOUBLE, &col);
  MPI_Type_commit(&col);
  MPI_Type_size(col, &n);
  MPI_Type_get_extent(col, &lb, &extent);
  CHECK(n == 4 * 8 && lb == 0 && extent == (3 * 4 + 1) * 8);
  /* the MPI-3 _x forms and the large-count _c forms */
  MPI_Count csize, clb, cextent;
  CHECK(MPI_Type_size_x(col, &csize) == MPI_SUCCESS && csize == 4 * 8);
  CHECK(MPI_Type_get_extent_x(col, &clb, &cextent) == MPI_SUCCESS && cextent == extent);
  CHECK(MPI_Type_get_true_extent_c(col, &clb, &cextent) == MPI_SUCCESS && clb == 0);
  CHECK(cextent == extent);
  MPI_Type_set_name(col, "column");
  MPI_Type_get_name(col, name, &len);
  CHECK(strcmp(name, "column") == 0);

  /* a struct, with the padding of its extent */
  MPI_Datatype pt;
  int lens[3] = {1, 3, 1};
  MPI_Aint disps[3] = {offsetof(struct particle, id), offsetof(struct particle, pos),
                       offsetof(struct particle, tag)};
  MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
  MPI_Type_create_struct(3, lens, disps, types, &pt);
  MPI_Type_commit(&pt);
  MPI_Type_size(pt, &n);
  MPI_Type_get_extent(pt, &lb, &extent);
  CHECK(n == 4 + 24 + 1 && extent == sizeof(struct particle));
  MPI_Aint tlb, text;
  MPI_Type_get_true_extent(pt, &tlb, &text);
  CHECK(tlb == 0 && text == (MPI_Aint)offsetof(struct particle, tag) + 1);

  /* indexed: elements 0-1 and 5 of an int array; resized to stride 8 ints */
  MPI_Datatype idx, idx8;
  int bl[2] = {2, 1}, dp[2] = {0, 5};
  MPI_Type_indexed(2, bl, dp, MPI_INT, &idx);
  MPI_Type_create_resized(idx, 0, 8 * sizeof(int), &idx8);
  MPI_Type_commit(&idx8);
  MPI_Type_get_extent(idx8, &lb, &extent);
  CHECK(extent == 8 * sizeof(int));

  /* contiguous of a contiguous */
  MPI_Datatype c3;
  MPI_Type_contiguous(3, MPI_INT, &c3);
  MPI_Type_commit(&c3);

  if (rank < 2) {
    int peer = 1 - rank;
    double m[16];
    for (int i = 0; i < 16; i++) m[i] = rank * 100 + i;
    /* my column 1 goes to the peer's column 2 */
    double r[16];
    for (int i = 0; i < 16; i++) r[i] = -1;
    MPI_Sendrecv(&m[1], 1, col, peer, 1, &r[2], 1, col, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < 4; i++) CHECK(r[i * 4 + 2] == peer * 100 + i * 4 + 1);
    CHECK(r[0] == -1 && r[3] == -1);
    /* a column received as 4 contiguous doubles */
    double flat[4];
    MPI_Status st;
    MPI_Sendrecv(&m[3], 1, col, peer, 2, flat, 4, MPI_DOUBLE, peer, 2, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_DOUBLE, &n);
    CHECK(n == 4 && flat[3] == peer * 100 + 15);
    MPI_Get_count(&st, col, &n);
    CHECK(n == 1);

    struct particle ps[2], pr[2];
    memset(ps, 0, sizeof ps);
    for (int i = 0; i < 2; i++) {
      ps[i].id = rank * 10 + i;
      ps[i].pos[2] = 0.5 + i;
      ps[i].tag = 'a' + rank;
    }
    MPI_Request q;
    MPI_Irecv(pr, 2, pt, peer, 3, MPI_COMM_WORLD, &q);
    MPI_Send(ps, 2, pt, peer, 3, MPI_COMM_WORLD);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    CHECK(pr[1].id == peer * 10 + 1 && pr[1].pos[2] == 1.5 && pr[0].tag == 'a' + peer);

    int a[16], b[16];
    for (int i = 0; i < 16; i++) a[i] = rank * 100 + i, b[i] = -1;
    MPI_Sendrecv(a, 2, idx8, peer, 4, b, 2, idx8, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(b[0] == peer * 100 && b[1] == peer * 100 + 1 && b[5] == peer * 100 + 5);
    CHECK(b[8] == peer * 100 + 8 && b[13] == peer * 100 + 13 && b[2] == -1 && b[7] == -1);

    /* absolute addresses from MPI_BOTTOM */
    int one = rank + 1;
    double two = rank + 0.25;
    MPI_Aint addr[2];
    MPI_Get_address(&one, &addr[0]);
    MPI_Get_address(&two, &addr[1]);
    int l2[2] = {1, 1};
    MPI_Datatype t2[2] = {MPI_INT, MPI_DOUBLE}, abs;
    MPI_Type_create_struct(2, l2, addr, t2, &abs);
    MPI_Type_commit(&abs);
    if (rank == 0) {
      MPI_Send(MPI_BOTTOM, 1, abs, 1, 5, MPI_COMM_WORLD);
    } else {
      MPI_Recv(MPI_BOTTOM, 1, abs, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      CHECK(one == 1 && two == 0.25);
    }
    MPI_Type_free(&abs);

    int t3[6] = {0}, s3[6] = {1, 2, 3, 4, 5, 6};
    MPI_Sendrecv(s3, 2, c3, peer, 6, t3, 2, c3, peer, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(t3[5] == 6);
  }
  /* an uncommitted type cannot communicate */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int class = 0, code = MPI_Send(&n, 1, idx, 0, 0, MPI_COMM_WORLD);
  MPI_Error_class(code, &class);
  CHECK(class == MPI_ERR_TYPE);
  MPI_Type_free(&col);
  CHECK(col == MPI_DATATYPE_NULL);
  MPI_Type_free(&pt);
  MPI_Type_free(&idx);
  MPI_Type_free(&idx8);

  /* darray: rank 1 of a 2x2 grid owns rows 0-1, columns 2-3 of a 4x4 block-block array */
  int gs[2] = {4, 4}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK},
      darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, ps[2] = {2, 2};
  MPI_Datatype quarter;
  CHECK(MPI_Type_create_darray(4, 1, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &quarter) ==
        MPI_SUCCESS);
  MPI_Type_commit(&quarter);
  MPI_Type_size(quarter, &n);
  MPI_Type_get_extent(quarter, &lb, &extent);
  CHECK(n == 4 * (int)sizeof(int) && lb == 0 && extent == 16 * (MPI_Aint)sizeof(int));
  int grid[16], picked[4], pos = 0;
  for (int i = 0; i < 16; i++) grid[i] = i;
  MPI_Pack(grid, 1, quarter, picked, sizeof picked, &pos, MPI_COMM_SELF);
  CHECK(picked[0] == 2 && picked[1] == 3 && picked[2] == 6 && picked[3] == 7);
  int ni, na, nt, comb;
  MPI_Type_get_envelope(quarter, &ni, &na, &nt, &comb);
  CHECK(comb == MPI_COMBINER_DARRAY && ni == 4 * 2 + 4 && nt == 1);
  MPI_Type_free(&quarter);
  MPI_Type_free(&c3);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("datatypes: ok on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
