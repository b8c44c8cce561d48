/* Persistent collectives (MPI 4): an init call keeps the arguments, every MPI_Start runs the
   operation again with the buffers' current contents; MPI_Startall of several; the request
   stays until MPI_Request_free. */
#include <mpi.h>
#include "check.h"

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size >= 2 && size <= 16);
  int b = 0, in = 0, sum = 0, all[16], counts[16], displs[16];
  MPI_Request bar, bc, ar, gv, two[2];
  CHECK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &bar) == MPI_SUCCESS);
  CHECK(MPI_Bcast_init(&b, 1, MPI_INT, size - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &bc) == MPI_SUCCESS);
  CHECK(MPI_Allreduce_init(&in, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &ar) == MPI_SUCCESS);
  for (int i = 0; i < size; i++) {
    counts[i] = 1;
    displs[i] = size - 1 - i; /* reversed */
  }
  CHECK(MPI_Gatherv_init(&in, 1, MPI_INT, all, counts, displs, MPI_INT, 0, MPI_COMM_WORLD,
                         MPI_INFO_NULL, &gv) == MPI_SUCCESS);
  for (int round = 0; round < 3; round++) {
    if (rank == size - 1) b = 100 + round;
    in = rank + round;
    CHECK(MPI_Start(&bc) == MPI_SUCCESS);
    CHECK(MPI_Wait(&bc, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(bc != MPI_REQUEST_NULL); /* persistent: still there, inactive */
    CHECK(b == 100 + round);
    two[0] = ar;
    two[1] = gv;
    CHECK(MPI_Startall(2, two) == MPI_SUCCESS);
    CHECK(MPI_Waitall(2, two, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    CHECK(sum == size * (size - 1) / 2 + size * round);
    if (rank == 0)
      for (int i = 0; i < size; i++) CHECK(all[size - 1 - i] == i + round);
    CHECK(MPI_Start(&bar) == MPI_SUCCESS);
    int flag = 0;
    while (!flag) CHECK(MPI_Test(&bar, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  }
  /* starting an active request is an error */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK(MPI_Start(&bar) == MPI_SUCCESS);
  CHECK(MPI_Start(&bar) != MPI_SUCCESS);
  MPI_Wait(&bar, MPI_STATUS_IGNORE);
  MPI_Request_free(&bar);
  MPI_Request_free(&bc);
  MPI_Request_free(&ar);
  MPI_Request_free(&gv);
  CHECK(bar == MPI_REQUEST_NULL);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("persistent_coll: ok\n");
  MPI_Finalize();
  return 0;
}
