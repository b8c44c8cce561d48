/* A call before MPI_Init (argument "before") or after MPI_Finalize ("after") is an error
   that ends the job through the default error handler, naming the function and the cause;
   MPI_Initialized and MPI_Finalized work at any time. */
#include <mpi.h>
#include <string.h>
#include "check.h"

int main(int argc, char **argv) {
  int flag = -1, rank = 0;
  CHECK(argc == 2);
  MPI_Finalized(&flag);
  CHECK(flag == 0);
  if (strcmp(argv[1], "before") == 0) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("not reached\n");
    return 0;
  }
  MPI_Init(&argc, &argv);
  MPI_Finalize();
  MPI_Finalized(&flag);
  CHECK(flag == 1);
  MPI_Barrier(MPI_COMM_WORLD);
  printf("not reached\n");
  return 0;
}
