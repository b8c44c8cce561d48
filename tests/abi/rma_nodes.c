/* A window must lie within one node in ibdyn (data moves by cross-memory attach): on a
   communicator spanning nodes MPI_Win_allocate says so (MPI_ERR_UNSUPPORTED_OPERATION),
   and the usual remedy, a window on MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)'s
   communicator, works. Run on 2 nodes. */
#include <mpi.h>
#include "check.h"

int main(int argc, char **argv) {
  int rank, size, cls = -1, *mem;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Win win;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rc = MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_UNSUPPORTED_OPERATION);

  MPI_Comm node;
  int nrank, nsize;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &nrank);
  MPI_Comm_size(node, &nsize);
  CHECK(nsize < size);
  CHECK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, node, &mem, &win) ==
        MPI_SUCCESS);
  *mem = -1;
  MPI_Win_fence(0, win);
  MPI_Put(&nrank, 1, MPI_INT, (nrank + 1) % nsize, 0, 1, MPI_INT, win);
  MPI_Win_fence(0, win);
  CHECK(*mem == (nrank + nsize - 1) % nsize);
  MPI_Win_free(&win);
  MPI_Comm_free(&node);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("rma_nodes: ok\n");
  MPI_Finalize();
  return 0;
}
