/* Graph topologies and neighbor collectives: a periodic 1-D grid of extent 2 (both
   neighbors are the same process, so the two edges must not be mixed up), a ring as a
   distributed graph (adjacent and general forms, weighted), an MPI-1 graph, and the
   neighbor allgather/alltoall(v) over them. Four ranks. */
#include <mpi.h>
#include "check.h"

int main(int argc, char **argv) {
  int rank, size, t;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size == 4);
  /* 2 x 2 grid, periodic in dimension 1 (extent 2): neighbors -1/+1 per dimension */
  int dims[2] = {2, 2}, periods[2] = {0, 1};
  MPI_Comm grid;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
  int out[4], in[4] = {-7, -7, -7, -7};
  for (int j = 0; j < 4; j++) out[j] = rank * 10 + j; /* block j goes to neighbor j */
  CHECK(MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, grid) == MPI_SUCCESS);
  int r = rank / 2, c = rank % 2;
  /* dimension 0 (open): -1 neighbor exists only for r == 1, +1 only for r == 0 */
  CHECK(r == 1 ? in[0] == (rank - 2) * 10 + 1 : in[0] == -7);
  CHECK(r == 0 ? in[1] == (rank + 2) * 10 + 0 : in[1] == -7);
  /* dimension 1 (periodic, extent 2): the -1 block holds what the neighbor sent to its +1 */
  int other = r * 2 + (1 - c);
  CHECK(in[2] == other * 10 + 3 && in[3] == other * 10 + 2);
  int all[4];
  CHECK(MPI_Neighbor_allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, grid) == MPI_SUCCESS);
  CHECK(all[2] == other && all[3] == other);
  MPI_Comm_free(&grid);

  /* a ring as a distributed graph: receive from the left, send to the right */
  int left = (rank + 3) % 4, right = (rank + 1) % 4, w = 5;
  MPI_Comm ring;
  CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, &w, 1, &right, &w,
                                       MPI_INFO_NULL, 0, &ring) == MPI_SUCCESS);
  MPI_Topo_test(ring, &t);
  CHECK(t == MPI_DIST_GRAPH);
  int indeg, outdeg, weighted, src, dst, sw, dw;
  MPI_Dist_graph_neighbors_count(ring, &indeg, &outdeg, &weighted);
  CHECK(indeg == 1 && outdeg == 1 && weighted);
  MPI_Dist_graph_neighbors(ring, 1, &src, &sw, 1, &dst, &dw);
  CHECK(src == left && dst == right && sw == 5 && dw == 5);
  int got = -1;
  MPI_Neighbor_allgather(&rank, 1, MPI_INT, &got, 1, MPI_INT, ring);
  CHECK(got == left);
  MPI_Comm_free(&ring);
  /* the same ring, every edge named by rank 0 */
  int srcs[4] = {0, 1, 2, 3}, degs[4] = {1, 1, 1, 1}, dsts[4] = {1, 2, 3, 0};
  CHECK(MPI_Dist_graph_create(MPI_COMM_WORLD, rank == 0 ? 4 : 0, srcs, degs, dsts,
                              MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &ring) == MPI_SUCCESS);
  MPI_Dist_graph_neighbors_count(ring, &indeg, &outdeg, &weighted);
  CHECK(indeg == 1 && outdeg == 1 && !weighted);
  MPI_Dist_graph_neighbors(ring, 1, &src, MPI_UNWEIGHTED, 1, &dst, MPI_UNWEIGHTED);
  CHECK(src == left && dst == right);
  /* alltoallv: two ints to the right, at displacement 1 of a 3-int buffer */
  int sv[3] = {0, rank, rank + 100}, rv[3] = {-1, -1, -1}, two = 2, one = 1;
  CHECK(MPI_Neighbor_alltoallv(sv, &two, &one, MPI_INT, rv, &two, &one, MPI_INT, ring) == MPI_SUCCESS);
  CHECK(rv[0] == -1 && rv[1] == left && rv[2] == left + 100);
  MPI_Request q;
  got = -1;
  CHECK(MPI_Ineighbor_alltoall(&rank, 1, MPI_INT, &got, 1, MPI_INT, ring, &q) == MPI_SUCCESS);
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  CHECK(got == left);
  MPI_Comm_free(&ring);

  /* MPI-1 graph: a star around rank 0 */
  int index[4] = {3, 4, 5, 6}, edges[6] = {1, 2, 3, 0, 0, 0}, nn, ne, nb[3];
  MPI_Comm star;
  CHECK(MPI_Graph_create(MPI_COMM_WORLD, 4, index, edges, 0, &star) == MPI_SUCCESS);
  MPI_Topo_test(star, &t);
  CHECK(t == MPI_GRAPH);
  MPI_Graphdims_get(star, &nn, &ne);
  CHECK(nn == 4 && ne == 6);
  MPI_Graph_neighbors_count(star, rank, &nn);
  CHECK(nn == (rank == 0 ? 3 : 1));
  MPI_Graph_neighbors(star, rank, 3, nb);
  CHECK(rank == 0 ? nb[0] == 1 && nb[2] == 3 : nb[0] == 0);
  int from[3] = {-1, -1, -1};
  MPI_Neighbor_allgather(&rank, 1, MPI_INT, from, 1, MPI_INT, star);
  CHECK(rank == 0 ? from[0] == 1 && from[1] == 2 && from[2] == 3 : from[0] == 0);
  MPI_Comm_free(&star);
  /* no topology: a clear error */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int cls, rc = MPI_Neighbor_allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_TOPOLOGY);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("neighbor: ok\n");
  MPI_Finalize();
  return 0;
}
