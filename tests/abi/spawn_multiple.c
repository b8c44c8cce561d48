/* Comm_spawn_multiple: two commands (this program with "A", once, in a working directory
   whose name has a space; and with "B", twice), per-child error codes, MPI_APPNUM per
   command, the parent communicator's name, merge and disconnect. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm parent;
  MPI_Comm_get_parent(&parent);
  int rank, size, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (parent != MPI_COMM_NULL) {
    char name[MPI_MAX_OBJECT_NAME];
    MPI_Comm_get_name(parent, name, &n);
    CHECK(strcmp(name, "MPI_COMM_PARENT") == 0);
    int *appnum, flag;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
    CHECK(flag && argc >= 2);
    CHECK(*appnum == (strcmp(argv[1], "A") == 0 ? 0 : 1));
    CHECK(size == 3);
    if (*appnum == 0) {
      char cwd[256];
      CHECK(argc == 3 && getcwd(cwd, sizeof cwd) && strcmp(cwd, argv[2]) == 0);
    }
    MPI_Comm all;
    MPI_Intercomm_merge(parent, 1, &all);
    int one = 1, total = 0;
    MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, all);
    MPI_Comm_free(&all);
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return 0;
  }
  char *cmds[2] = {argv[0], argv[0]};
  char wdir[64];
  snprintf(wdir, sizeof wdir, "/tmp/ibdyn wdir %d", (int)getpid());
  if (rank == 0) CHECK(mkdir(wdir, 0700) == 0);
  char *args_a[] = {"A", wdir, NULL}, *args_b[] = {"B", NULL};
  char **argvs[2] = {args_a, args_b};
  int maxprocs[2] = {1, 2};
  MPI_Info infos[2];
  MPI_Info_create(&infos[0]);
  MPI_Info_set(infos[0], "wdir", wdir);
  infos[1] = MPI_INFO_NULL;
  int codes[3] = {-1, -1, -1};
  MPI_Comm children;
  CHECK(MPI_Comm_spawn_multiple(2, cmds, argvs, maxprocs, infos, 0, MPI_COMM_WORLD, &children, codes) == MPI_SUCCESS);
  CHECK(codes[0] == MPI_SUCCESS && codes[1] == MPI_SUCCESS && codes[2] == MPI_SUCCESS);
  MPI_Info_free(&infos[0]);
  MPI_Comm_remote_size(children, &n);
  CHECK(n == 3);
  MPI_Comm all;
  MPI_Intercomm_merge(children, 0, &all);
  int one = 1, total = 0;
  MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, all);
  CHECK(total == size + 3);
  MPI_Comm_free(&all);
  MPI_Comm_disconnect(&children);
  if (rank == 0) CHECK(rmdir(wdir) == 0);

  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("spawn_multiple: ok, %d parents, 3 children\n", size);
  MPI_Finalize();
  return 0;
}
