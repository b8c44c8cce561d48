/* A wait for one non-blocking collective while another is in flight, with a process of the
 * communicator dead: the wait fails naming the dead process instead of waiting for ever
 * (the wait that moves the other collectives on checks the peers' liveness too). Run with
 * --keep-going; rank 2 leaves at once. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (rank == 2) _exit(3);
  int one = 1, all = 0, cls = -1;
  MPI_Request q[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  /* A start may already see the dead process: then that is the failure. */
  int rc = MPI_Ibarrier(MPI_COMM_WORLD, &q[0]);
  if (rc == MPI_SUCCESS) rc = MPI_Iallreduce(&one, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q[1]);
  int waited = rc == MPI_SUCCESS;
  if (waited) rc = MPI_Wait(&q[1], MPI_STATUS_IGNORE);
  MPI_Error_class(rc, &cls);
  /* The wait names the dead process (a start that saw it first may say it otherwise). */
  int failed = rc != MPI_SUCCESS && (cls == MPI_ERR_PROC_ABORTED || !waited);
  printf("nbc_dead: rank %d wait failed: %d\n", rank, failed);
  fflush(stdout);
  _exit(0);
}
