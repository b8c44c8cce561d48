/* MPI_Dims_create makes the dimensions as close to each other as possible (MPI-4.1
   sec 8.5.2), in non-increasing order, keeps fixed entries, and rejects impossible
   requests. The expected answers are MPICH's. */
#include <mpi.h>
#include "check.h"

static void expect(int nnodes, int ndims, const int *given, const int *want) {
  int d[4];
  for (int i = 0; i < ndims; i++) d[i] = given ? given[i] : 0;
  CHECK(MPI_Dims_create(nnodes, ndims, d) == MPI_SUCCESS);
  for (int i = 0; i < ndims; i++) {
    if (d[i] != want[i]) {
      fprintf(stderr, "MPI_Dims_create(%d, %d): dim %d is %d, want %d\n", nnodes, ndims, i,
              d[i], want[i]);
      exit(1);
    }
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  expect(72, 2, NULL, (int[]){9, 8});
  expect(180, 2, NULL, (int[]){15, 12});
  expect(240, 2, NULL, (int[]){16, 15});
  expect(600, 2, NULL, (int[]){25, 24});
  expect(432, 3, NULL, (int[]){9, 8, 6});
  expect(720, 3, NULL, (int[]){10, 9, 8});
  expect(360, 3, NULL, (int[]){10, 6, 6});
  expect(2160, 4, NULL, (int[]){10, 6, 6, 6});
  expect(7, 2, NULL, (int[]){7, 1});
  expect(1, 3, NULL, (int[]){1, 1, 1});
  expect(144, 3, (int[]){0, 2, 0}, (int[]){9, 2, 8});
  expect(24, 3, (int[]){0, 0, 4}, (int[]){3, 2, 4});

  /* Errors of calls without a communicator are raised on MPI_COMM_SELF. */
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int bad[2] = {3, 0}, cls;
  CHECK(MPI_Error_class(MPI_Dims_create(10, 2, bad), &cls) == MPI_SUCCESS);
  CHECK(cls == MPI_ERR_DIMS);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("dims: ok\n");
  MPI_Finalize();
  return 0;
}
