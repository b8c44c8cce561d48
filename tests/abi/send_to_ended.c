/* A first message to a process of this node that has ended fails with MPI_ERR_PROC_ABORTED,
 * whether or not its shared-memory queue has been removed yet. Run with --keep-going on one
 * node, 3 ranks: rank 2 sends its pid to rank 1, which passes it on to rank 0, and leaves;
 * rank 0 waits (bounded) until no process has that pid, then sends to rank 2, with which it
 * has not exchanged anything yet. */
#include <errno.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, pid = (int)getpid(), one = 1, cls = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (rank == 2) {
    MPI_Send(&pid, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    _exit(0);
  }
  if (rank == 1) {
    MPI_Recv(&pid, 1, MPI_INT, 2, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&pid, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    _exit(0);
  }
  MPI_Recv(&pid, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  struct timespec ms = {0, 1000000};
  for (int i = 0; i < 60000 && (kill(pid, 0) == 0 || errno != ESRCH); i++) nanosleep(&ms, NULL);
  int rc = MPI_Send(&one, 1, MPI_INT, 2, 0, MPI_COMM_WORLD);
  MPI_Error_class(rc, &cls);
  printf("send_to_ended: %s\n", cls == MPI_ERR_PROC_ABORTED ? "proc aborted" : "other");
  if (cls != MPI_ERR_PROC_ABORTED) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    printf("send_to_ended: class %d: %s\n", cls, text);
  }
  fflush(stdout);
  _exit(0);
}
