/* A spawn the root refuses while reading its arguments (a command's info key env that is
 * not NAME=VALUE) fails on every rank with the root's reason, and nothing starts; the next
 * spawn works. The other ranks used to be told "spawn needs at least one command". */
#include <mpi.h>
#include <string.h>
#include "check.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm parent;
  MPI_Comm_get_parent(&parent);
  if (parent != MPI_COMM_NULL) {
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return 0;
  }
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  char *cmds[2] = {argv[0], argv[0]};
  int np[2] = {1, 1}, errs[2] = {-1, -1};
  MPI_Info infos[2];
  MPI_Info_create(&infos[0]);
  MPI_Info_create(&infos[1]);
  MPI_Info_set(infos[0], "env", "GOOD=1");
  MPI_Info_set(infos[1], "env", "NO_VALUE_HERE");
  MPI_Comm ic = MPI_COMM_WORLD;
  int rc = MPI_Comm_spawn_multiple(2, cmds, MPI_ARGVS_NULL, np, infos, 0, MPI_COMM_WORLD, &ic,
                                   errs);
  CHECK(rc != MPI_SUCCESS && ic == MPI_COMM_NULL);
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  CHECK(strstr(msg, "NO_VALUE_HERE") != NULL);
  CHECK(strstr(msg, "at least one command") == NULL);
  /* The same two commands with a good env start. */
  MPI_Info_set(infos[1], "env", "GOOD=2");
  rc = MPI_Comm_spawn_multiple(2, cmds, MPI_ARGVS_NULL, np, infos, 0, MPI_COMM_WORLD, &ic, errs);
  CHECK(rc == MPI_SUCCESS && errs[0] == MPI_SUCCESS && errs[1] == MPI_SUCCESS);
  MPI_Comm_disconnect(&ic);
  MPI_Info_free(&infos[0]);
  MPI_Info_free(&infos[1]);
  if (rank == 0) printf("spawn_refused: ok\n");
  MPI_Finalize();
  return 0;
}
