/* MPI_Comm_spawn with the info key "env" as Open MPI takes it: NAME=VALUE lines separated by
   newlines (a value may hold spaces); the children find them in their environment. Also an
   argument with a newline, which reaches the children whole. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm parent;
  MPI_Comm_get_parent(&parent);
  if (parent != MPI_COMM_NULL) {
    const char *a = getenv("SPAWN_ENV_A"), *b = getenv("SPAWN_ENV_B");
    int ok = a && strcmp(a, "1") == 0 && b && strcmp(b, "two words") == 0 && argc == 2 &&
             strcmp(argv[1], "line one\nline two") == 0;
    MPI_Send(&ok, 1, MPI_INT, 0, 1, parent);
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return 0;
  }
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "env", "SPAWN_ENV_A=1\nSPAWN_ENV_B=two words\n");
  char *args[] = {"line one\nline two", NULL};
  MPI_Comm children;
  int codes[2];
  CHECK(MPI_Comm_spawn(argv[0], args, 2, info, 0, MPI_COMM_SELF, &children, codes) == MPI_SUCCESS);
  MPI_Info_free(&info);
  for (int r = 0; r < 2; r++) {
    int ok = 0;
    MPI_Recv(&ok, 1, MPI_INT, r, 1, children, MPI_STATUS_IGNORE);
    CHECK(ok);
  }
  MPI_Comm_disconnect(&children);
  printf("spawn_env: ok, 2 children with the env of the info and their argument whole\n");
  MPI_Finalize();
  return 0;
}
