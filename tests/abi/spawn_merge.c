/* Dynamic processes: the world spawns 2 copies of this program (argument "child"); parents
   and children check the intercommunicator, exchange messages, run an intercommunicator
   Allreduce, Bcast and Barrier, merge it (parents low), Allreduce on the merged one, and
   disconnect. */
#include <mpi.h>
#include <string.h>
#include "check.h"

#define NCHILD 2

static void merged_checks(MPI_Comm inter, int high, int nparents) {
  MPI_Comm all;
  CHECK(MPI_Intercomm_merge(inter, high, &all) == MPI_SUCCESS);
  int r, n, flag;
  MPI_Comm_rank(all, &r);
  MPI_Comm_size(all, &n);
  MPI_Comm_test_inter(all, &flag);
  CHECK(n == nparents + NCHILD && !flag);
  int one = 1, total = 0;
  MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, all);
  CHECK(total == n);
  /* the low group comes first */
  int is_child = high, children_below = 0;
  MPI_Allreduce(&is_child, &children_below, 1, MPI_INT, MPI_SUM, all);
  if (!high) CHECK(r < nparents);
  MPI_Comm_free(&all);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm parent;
  MPI_Comm_get_parent(&parent);
  int rank, size, remote, flag;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (parent == MPI_COMM_NULL) {
    CHECK(argc < 2 || strcmp(argv[1], "child") != 0);
    char *args[] = {"child", NULL};
    MPI_Comm children;
    int codes[NCHILD] = {-1, -1};
    CHECK(MPI_Comm_spawn(argv[0], args, NCHILD, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &children, codes) == MPI_SUCCESS);
    CHECK(codes[0] == MPI_SUCCESS && codes[1] == MPI_SUCCESS);
    MPI_Comm_test_inter(children, &flag);
    MPI_Comm_remote_size(children, &remote);
    CHECK(flag && remote == NCHILD);
    if (rank == 0) {
      for (int c = 0; c < NCHILD; c++) {
        int msg = 1000 + c;
        MPI_Send(&msg, 1, MPI_INT, c, 1, children);
      }
    }
    /* intercommunicator allreduce: parents receive the children's sum, and vice versa */
    int mine = 1, theirs = 0;
    MPI_Allreduce(&mine, &theirs, 1, MPI_INT, MPI_SUM, children);
    CHECK(theirs == NCHILD * 10);
    int word = 0;
    if (rank == 0) {
      word = 4242;
      MPI_Bcast(&word, 1, MPI_INT, MPI_ROOT, children);
    } else {
      MPI_Bcast(&word, 1, MPI_INT, MPI_PROC_NULL, children);
    }
    MPI_Barrier(children);
    merged_checks(children, 0, size);
    CHECK(MPI_Comm_disconnect(&children) == MPI_SUCCESS && children == MPI_COMM_NULL);
    if (rank == 0) printf("spawn_merge: ok, %d parents, %d children\n", size, NCHILD);
  } else {
    CHECK(argc >= 2 && strcmp(argv[1], "child") == 0);
    MPI_Comm_test_inter(parent, &flag);
    MPI_Comm_remote_size(parent, &remote);
    CHECK(flag && size == NCHILD);
    int msg = -1;
    MPI_Status st;
    MPI_Recv(&msg, 1, MPI_INT, 0, 1, parent, &st);
    CHECK(msg == 1000 + rank && st.MPI_SOURCE == 0);
    int mine = 10, theirs = 0;
    MPI_Allreduce(&mine, &theirs, 1, MPI_INT, MPI_SUM, parent);
    CHECK(theirs == remote);
    int word = 0;
    MPI_Bcast(&word, 1, MPI_INT, 0, parent);
    CHECK(word == 4242);
    MPI_Barrier(parent);
    merged_checks(parent, 1, remote);
    CHECK(MPI_Comm_disconnect(&parent) == MPI_SUCCESS);
    /* Once disconnected, the parent is gone for good (MPI 4.1 section 11.8.2). */
    MPI_Comm again;
    MPI_Comm_get_parent(&again);
    CHECK(again == MPI_COMM_NULL);
    printf("spawn_merge: child %d has no parent after its disconnect\n", rank);
  }
  MPI_Finalize();
  return 0;
}
