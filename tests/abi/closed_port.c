/* A connect to a port its process has closed fails with MPI_ERR_PORT at once: the process
 * refuses it as it arrives. It used to wait out IBDYN_CONNECT_TIMEOUT (the test sets it to
 * 600 s, so a connect left waiting fails the test by its bound). */
#include <mpi.h>
#include <string.h>
#include "check.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char port[MPI_MAX_PORT_NAME];
  if (rank == 0) {
    MPI_Open_port(MPI_INFO_NULL, port);
    MPI_Close_port(port);
    MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
    int cls = -1;
    MPI_Recv(&cls, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(cls == MPI_ERR_PORT);
    /* A port still open is not refused: a second one is accepted on. */
    MPI_Open_port(MPI_INFO_NULL, port);
    MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 1, 2, MPI_COMM_WORLD);
    MPI_Comm ic;
    CHECK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic) == MPI_SUCCESS);
    MPI_Comm_disconnect(&ic);
    MPI_Close_port(port);
    printf("closed_port: ok\n");
  } else if (rank == 1) {
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Comm ic = MPI_COMM_WORLD;
    int rc = MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    CHECK(strstr(msg, "closed") != NULL);
    MPI_Send(&cls, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
    MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic) == MPI_SUCCESS);
    MPI_Comm_disconnect(&ic);
  }
  MPI_Finalize();
  return 0;
}
