/* Cartesian topologies: a 2 x 2 grid, periodic in its second dimension, on 5 ranks (the
   fifth gets MPI_COMM_NULL); coordinates, ranks, shifts and a halo exchange over them,
   sub-grids, MPI_Cart_get, MPI_Topo_test, MPI_Comm_dup keeping the topology, errors. */
#include <mpi.h>
#include "check.h"

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size == 5);
  int dims[2] = {0, 0}, periods[2] = {0, 1}, t = 0;
  MPI_Dims_create(4, 2, dims);
  CHECK(dims[0] == 2 && dims[1] == 2);
  MPI_Comm grid;
  CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid) == MPI_SUCCESS);
  int newrank = -1;
  MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, &newrank);
  if (rank == 4) {
    CHECK(grid == MPI_COMM_NULL && newrank == MPI_UNDEFINED);
  } else {
    CHECK(grid != MPI_COMM_NULL && newrank == rank);
    int me, n, c[2], d[2], p[2], back;
    MPI_Comm_rank(grid, &me);
    MPI_Comm_size(grid, &n);
    CHECK(me == rank && n == 4);
    MPI_Topo_test(grid, &t);
    CHECK(t == MPI_CART);
    MPI_Cartdim_get(grid, &n);
    CHECK(n == 2);
    MPI_Cart_get(grid, 2, d, p, c);
    CHECK(d[0] == 2 && d[1] == 2 && p[0] == 0 && p[1] == 1);
    CHECK(c[0] == me / 2 && c[1] == me % 2);
    MPI_Cart_rank(grid, c, &back);
    CHECK(back == me);
    int up, down, left, right;
    MPI_Cart_shift(grid, 0, 1, &up, &down);
    MPI_Cart_shift(grid, 1, 1, &left, &right);
    CHECK(up == (c[0] == 0 ? MPI_PROC_NULL : me - 2));
    CHECK(down == (c[0] == 1 ? MPI_PROC_NULL : me + 2));
    CHECK(left == (me ^ 1) && right == (me ^ 1)); /* periodic, extent 2 */
    /* halo exchange along dimension 0: the edges talk to MPI_PROC_NULL */
    int from_up = -1;
    MPI_Sendrecv(&me, 1, MPI_INT, down, 0, &from_up, 1, MPI_INT, up, 0, grid, MPI_STATUS_IGNORE);
    CHECK(up == MPI_PROC_NULL ? from_up == -1 : from_up == up);
    /* rows */
    int keep[2] = {0, 1};
    MPI_Comm row;
    MPI_Cart_sub(grid, keep, &row);
    MPI_Comm_size(row, &n);
    int rr;
    MPI_Comm_rank(row, &rr);
    CHECK(n == 2 && rr == c[1]);
    MPI_Cartdim_get(row, &n);
    CHECK(n == 1);
    int sum = 0;
    MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, row);
    CHECK(sum == 2 * (me / 2) * 2 + 1);
    MPI_Comm_free(&row);
    /* a duplicate keeps the grid */
    MPI_Comm dup;
    MPI_Comm_dup(grid, &dup);
    MPI_Topo_test(dup, &t);
    CHECK(t == MPI_CART);
    MPI_Comm_free(&dup);
    /* errors */
    MPI_Comm_set_errhandler(grid, MPI_ERRORS_RETURN);
    int far[2] = {5, 0}, cls;
    CHECK(MPI_Cart_rank(grid, far, &back) != MPI_SUCCESS);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &up, &down);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TOPOLOGY);
    MPI_Comm_free(&grid);
  }
  MPI_Topo_test(MPI_COMM_WORLD, &t);
  CHECK(t == MPI_UNDEFINED);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("cart: ok\n");
  MPI_Finalize();
  return 0;
}
