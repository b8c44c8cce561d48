/* A spawn of a program that does not exist fails with MPI_ERR_SPAWN (MPI_ERRORS_RETURN) and
   an error code per child, and the job goes on. (ibdyn's behaviour: the standard leaves it to
   the implementation; MPICH's mpiexec ends the job instead.) */
#include <mpi.h>
#include "check.h"

int main(int argc, char **argv) {
  int rank, size, cls = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm children;
  int bad[2] = {-1, -1};
  int code = MPI_Comm_spawn("/nonexistent/ibdyn-abi-test", MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0,
                            MPI_COMM_WORLD, &children, bad);
  MPI_Error_class(code, &cls);
  CHECK(cls == MPI_ERR_SPAWN && children == MPI_COMM_NULL);
  if (rank == 0) CHECK(bad[0] == MPI_ERR_SPAWN && bad[1] == MPI_ERR_SPAWN);
  /* a bad argument at the root (maxprocs 0): every process gets the error, none waits */
  code = MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, rank == 0 ? 0 : 5, MPI_INFO_NULL, 0, MPI_COMM_WORLD,
                        &children, MPI_ERRCODES_IGNORE);
  MPI_Error_class(code, &cls);
  CHECK(cls == MPI_ERR_SPAWN && children == MPI_COMM_NULL);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("spawn_fail: ok on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
