/* An origin dies holding a lock on rank 0's window: rank 0's own exclusive MPI_Win_lock
   is granted once the death is known, not refused after the lock's bound of 120 s. The
   origin's lock is exclusive, shared or MPI_Win_lock_all's (argv[1]: exclusive, shared,
   all). On 2 nodes the target service gives the dead origin's lock back; on 1 node the
   waiter sees that the holder the lock line names (exclusive) or marks (shared) has ended.
   The dead origin's put, flushed before it died, is there. Run with --keep-going, 2 ranks;
   rank 0 ends with _exit, as the window's collective free cannot include the dead rank. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "check.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size == 2);
  int *base;
  MPI_Win win;
  MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  *base = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) {
    int v = 42, one = 1;
    const char *kind = argc > 1 ? argv[1] : "exclusive";
    if (strcmp(kind, "all") == 0)
      CHECK(MPI_Win_lock_all(0, win) == MPI_SUCCESS);
    else
      CHECK(MPI_Win_lock(strcmp(kind, "shared") == 0 ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE,
                         0, 0, win) == MPI_SUCCESS);
    CHECK(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win) == MPI_SUCCESS);
    /* The lock travels with the put; the flush returns once both are done at rank 0. */
    CHECK(MPI_Win_flush(0, win) == MPI_SUCCESS);
    CHECK(MPI_Send(&one, 1, MPI_INT, 0, 7, MPI_COMM_WORLD) == MPI_SUCCESS);
    _exit(3);
  }
  int held;
  CHECK(MPI_Recv(&held, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win) == MPI_SUCCESS);
  CHECK(*base == 42);
  CHECK(MPI_Win_unlock(0, win) == MPI_SUCCESS);
  printf("rma_dead_origin: ok, the dead origin's lock came back\n");
  fflush(stdout);
  _exit(0);
}
