/* MPI_THREAD_MULTIPLE: two threads of rank 0 wait in MPI_Recv for messages from rank 1,
 * which has left. Each wait hands the state to the other thread between its tests, and both
 * fail with MPI_ERR_PROC_ABORTED, returned under MPI_ERRORS_RETURN. (A wait that met the
 * failure while it looked whether its requests had completed took MPI_COMM_SELF's handler,
 * fatal, and ended the job.) Run with --keep-going, 2 ranks. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static int failed[2];

static void *receive(void *arg) {
  int tag = (int)(long)arg, v, cls = -1;
  int rc = MPI_Recv(&v, 1, MPI_INT, 1, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Error_class(rc, &cls);
  failed[tag] = rc != MPI_SUCCESS && cls == MPI_ERR_PROC_ABORTED;
  return NULL;
}

int main(int argc, char **argv) {
  int provided, rank;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) _exit(3);
  if (rank == 0) {
    pthread_t t[2];
    for (long i = 0; i < 2; i++) pthread_create(&t[i], NULL, receive, (void *)i);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    printf("threads_dead: both waits failed: %d\n", failed[0] && failed[1]);
    fflush(stdout);
  }
  _exit(0);
}
