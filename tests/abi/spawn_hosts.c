/* Comm_spawn_multiple with a `host` per command (a node daemon's index), on 2 nodes: two
 * commands of one process each, on node 0 and node 1, then both on node 1. The children see
 * where they run through MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) of their world, and each
 * tells its parent its node's size. A host that is not one of the job's is refused by name. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

static int spawn_on(const char *host0, const char *host1, char *self) {
  char *cmds[2] = {self, self};
  int np[2] = {1, 1}, errs[2] = {-1, -1};
  MPI_Info infos[2];
  MPI_Info_create(&infos[0]);
  MPI_Info_create(&infos[1]);
  MPI_Info_set(infos[0], "host", host0);
  MPI_Info_set(infos[1], "host", host1);
  MPI_Comm ic;
  int rc = MPI_Comm_spawn_multiple(2, cmds, MPI_ARGVS_NULL, np, infos, 0, MPI_COMM_WORLD, &ic,
                                   errs);
  MPI_Info_free(&infos[0]);
  MPI_Info_free(&infos[1]);
  if (rc != MPI_SUCCESS) return rc;
  CHECK(errs[0] == MPI_SUCCESS && errs[1] == MPI_SUCCESS);
  int sizes[2] = {0, 0}, rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    for (int c = 0; c < 2; c++)
      CHECK(MPI_Recv(&sizes[c], 1, MPI_INT, c, 5, ic, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  }
  MPI_Bcast(sizes, 2, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Comm_disconnect(&ic);
  return sizes[0] * 10 + sizes[1];
}

/* A child: tells its parent how many of its world share its node. */
static void report_node(MPI_Comm parent) {
  MPI_Comm node;
  int nsize;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &nsize);
  MPI_Comm_free(&node);
  CHECK(MPI_Send(&nsize, 1, MPI_INT, 0, 5, parent) == MPI_SUCCESS);
  MPI_Comm_disconnect(&parent);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm parent;
  MPI_Comm_get_parent(&parent);
  if (parent != MPI_COMM_NULL) report_node(parent);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (parent != MPI_COMM_NULL) {
    MPI_Finalize();
    return 0;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  /* apart: each child alone on its node; together: both on node 1 */
  CHECK(spawn_on("0", "1", argv[0]) == 11);
  CHECK(spawn_on("1", "1", argv[0]) == 22);
  int rc = spawn_on("0", "no-such-host", argv[0]);
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0, cls = -1;
  MPI_Error_class(rc, &cls);
  MPI_Error_string(rc, msg, &len);
  CHECK(cls == MPI_ERR_SPAWN && strstr(msg, "no-such-host") != NULL);
  if (rank == 0) printf("spawn_hosts: ok\n");
  MPI_Finalize();
  return 0;
}
