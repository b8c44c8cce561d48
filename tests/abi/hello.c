/* Init, rank, size, processor name, versions, clocks, Finalize. */
#include <mpi.h>
#include <string.h>
#include "check.h"

int main(int argc, char **argv) {
  int flag = -1, rank = -1, size = -1, len = 0, v = 0, sv = 0, provided = -1;
  char name[MPI_MAX_PROCESSOR_NAME];
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  MPI_Initialized(&flag);
  CHECK(flag == 0);
  CHECK(MPI_Init(&argc, &argv) == MPI_SUCCESS);
  MPI_Initialized(&flag);
  CHECK(flag == 1);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size >= 1 && rank >= 0 && rank < size);
  MPI_Comm_size(MPI_COMM_SELF, &v);
  CHECK(v == 1);
  MPI_Comm_test_inter(MPI_COMM_WORLD, &flag);
  CHECK(flag == 0);
  MPI_Get_processor_name(name, &len);
  CHECK(len > 0 && (int)strlen(name) == len);
  MPI_Get_version(&v, &sv);
  CHECK(v == 5 && sv == 0);
  MPI_Get_library_version(lib, &len);
  CHECK(len > 0 && (int)strlen(lib) == len);
  MPI_Query_thread(&provided);
  CHECK(provided == MPI_THREAD_SINGLE);
  double t0 = MPI_Wtime();
  CHECK(MPI_Wtick() > 0.0 && MPI_Wtime() >= t0);
  MPI_Comm parent;
  MPI_Comm_get_parent(&parent);
  CHECK(parent == MPI_COMM_NULL);
  printf("hello from rank %d of %d\n", rank, size);
  CHECK(MPI_Finalize() == MPI_SUCCESS);
  MPI_Finalized(&flag);
  CHECK(flag == 1);
  return 0;
}
