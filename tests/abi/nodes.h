/* Shared by the tests that run on several emulated nodes. */
#include <mpi.h>

/* Whether world rank r runs on this process's node (`node`: its shared-memory communicator). */
static int on_my_node(MPI_Comm node, int r) {
  int same;
  MPI_Group wg, ng;
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  MPI_Comm_group(node, &ng);
  MPI_Group_translate_ranks(wg, 1, &r, ng, &same);
  MPI_Group_free(&wg);
  MPI_Group_free(&ng);
  return same != MPI_UNDEFINED;
}
