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
  /* reduce_scatter with an array argument, int and MPI_Count forms */
  int rsin[16], rsout = 0;
  MPI_Count ccounts[16];
  for (int i = 0; i < size; i++) {
    rsin[i] = i;
    ccounts[i] = 1;
  }
  MPI_Request rs, rsc;
  CHECK(MPI_Reduce_scatter_init(rsin, &rsout, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                MPI_INFO_NULL, &rs) == MPI_SUCCESS);
  CHECK(MPI_Reduce_scatter_init_c(rsin, &rsout, ccounts, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                  MPI_INFO_NULL, &rsc) == MPI_SUCCESS);
  CHECK(MPI_Start(&rs) == MPI_SUCCESS && MPI_Wait(&rs, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(rsout == rank * size);
  rsout = 0;
  CHECK(MPI_Start(&rsc) == MPI_SUCCESS && MPI_Wait(&rsc, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(rsout == rank * size);
  MPI_Request_free(&rs);
  MPI_Request_free(&rsc);

  /* alltoallw, large-count persistent form: one int to every rank, types per peer */
  int wout[16], win[16];
  MPI_Count wc[16];
  MPI_Aint wd[16];
  MPI_Datatype wt[16];
  for (int i = 0; i < size; i++) {
    wout[i] = rank * 100 + i;
    wc[i] = 1;
    wd[i] = (MPI_Aint)(i * sizeof(int));
    wt[i] = MPI_INT;
  }
  MPI_Request aw;
  CHECK(MPI_Alltoallw_init_c(wout, wc, wd, wt, win, wc, wd, wt, MPI_COMM_WORLD, MPI_INFO_NULL,
                             &aw) == MPI_SUCCESS);
  for (int i = 0; i < size; i++) wc[i] = 0; /* the init call copied the arrays */
  CHECK(MPI_Start(&aw) == MPI_SUCCESS && MPI_Wait(&aw, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  for (int i = 0; i < size; i++) CHECK(win[i] == i * 100 + rank);
  MPI_Request_free(&aw);

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
