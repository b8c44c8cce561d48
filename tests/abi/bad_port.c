/* Connecting to a name that is not a port fails with MPI_ERR_PORT on every rank, the root
 * (whose argument it is) and the others (told the root refused it); nothing waits. */
#include <mpi.h>
#include <string.h>
#include "check.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char *names[] = {"this-is-not-a-port", "", "ibdyn-port:zz", "ibdyn-port:00"};
  for (int i = 0; i < 4; i++) {
    MPI_Comm ic = MPI_COMM_WORLD;
    int rc = MPI_Comm_connect(names[i], MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_PORT);
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    CHECK(strstr(msg, "port") != NULL);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("bad_port: ok\n");
  MPI_Finalize();
  return 0;
}
