/* The default error handler is MPI_ERRORS_ARE_FATAL: a bad call ends the job with a message
   naming the function, the error class and the handler, and never returns. With the argument
   "abort" the handler is MPI_ERRORS_ABORT, which the message names. With "call" the program
   calls MPI_Abort on MPI_COMM_WORLD with code 7. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int size;
  MPI_Init(&argc, &argv);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc > 1 && argv[1][0] == 'c') MPI_Abort(MPI_COMM_WORLD, 7);
  if (argc > 1) MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ABORT);
  int x = 0;
  MPI_Send(&x, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD);
  printf("not reached\n");
  MPI_Finalize();
  return 0;
}
