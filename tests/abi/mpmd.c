/* MPMD: `ibdyn run -n A mpmd 0 A B : -n B mpmd 1 A B`. One MPI_COMM_WORLD across both
 * applications, ranks numbered in order; MPI_APPNUM says each rank's application; splitting
 * the world by it gives each application its own communicator. */
#include <mpi.h>
#include <stdlib.h>
#include "check.h"

int main(int argc, char **argv) {
  CHECK(argc == 4);
  int mine = atoi(argv[1]), a = atoi(argv[2]), b = atoi(argv[3]);
  CHECK(MPI_Init(&argc, &argv) == MPI_SUCCESS);
  int rank, size, flag = 0, *appnum = NULL;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size == a + b);
  CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag) == MPI_SUCCESS);
  CHECK(flag == 1 && *appnum == mine);
  CHECK(mine == (rank < a ? 0 : 1));
  MPI_Comm app;
  CHECK(MPI_Comm_split(MPI_COMM_WORLD, *appnum, rank, &app) == MPI_SUCCESS);
  int app_size, app_rank;
  MPI_Comm_size(app, &app_size);
  MPI_Comm_rank(app, &app_rank);
  CHECK(app_size == (mine == 0 ? a : b));
  CHECK(app_rank == (mine == 0 ? rank : rank - a));
  /* Every rank learns every rank's application across the world. */
  int *all = malloc(sizeof(int) * size);
  CHECK(MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS);
  for (int r = 0; r < size; r++) CHECK(all[r] == (r < a ? 0 : 1));
  free(all);
  MPI_Comm_free(&app);
  if (rank == 0) printf("mpmd: ok, %d + %d ranks\n", a, b);
  CHECK(MPI_Finalize() == MPI_SUCCESS);
  return 0;
}
