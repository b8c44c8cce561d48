/* Errors: with MPI_ERRORS_RETURN each bad call returns the class the standard names, with a
   text from MPI_Error_string; MPI_ERRORS_ARE_FATAL is the default. */
#include <mpi.h>
#include <string.h>
#include "check.h"

/* A function of the standard ABI that ibdyn does not implement (no prototype in ibdyn's mpi.h). */
int MPI_File_close(MPI_File *fh);

static void expect(int code, int class) {
  int c = -1, len = 0;
  char text[MPI_MAX_ERROR_STRING];
  if (code == MPI_SUCCESS) {
    fprintf(stderr, "expected error class %d, the call succeeded\n", class);
    exit(1);
  }
  CHECK(MPI_Error_class(code, &c) == MPI_SUCCESS);
  if (c != class) {
    MPI_Error_string(code, text, &len);
    fprintf(stderr, "expected error class %d, got %d: %s\n", class, c, text);
    exit(1);
  }
  CHECK(MPI_Error_string(code, text, &len) == MPI_SUCCESS);
  CHECK(len > 0 && (int)strlen(text) == len);
}

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Errhandler eh;
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
  CHECK(eh == MPI_ERRORS_ARE_FATAL);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
  CHECK(eh == MPI_ERRORS_RETURN);

  int x = 0;
  expect(MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
  expect(MPI_Send(&x, 1, MPI_INT, -7, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
  expect(MPI_Send(&x, 1, MPI_INT, 0, -5, MPI_COMM_WORLD), MPI_ERR_TAG);
  expect(MPI_Send(&x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
  expect(MPI_Send(&x, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
  expect(MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
  expect(MPI_Send(NULL, 1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
  expect(MPI_Allreduce(&x, &x, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
  expect(MPI_Bcast(&x, 1, MPI_INT, size, MPI_COMM_WORLD), MPI_ERR_ROOT);
  MPI_Request r = (MPI_Request)(intptr_t)0x2000;
  expect(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
  MPI_Comm freed;
  MPI_Comm_dup(MPI_COMM_WORLD, &freed);
  MPI_Comm keep = freed;
  MPI_Comm_free(&freed);
  expect(MPI_Barrier(keep), MPI_ERR_COMM);
  expect(MPI_Comm_free(&keep), MPI_ERR_COMM);
  MPI_Comm world = MPI_COMM_WORLD;
  expect(MPI_Comm_free(&world), MPI_ERR_COMM);
  expect(MPI_Comm_remote_size(MPI_COMM_WORLD, &x), MPI_ERR_COMM);
  expect(MPI_Init(&argc, &argv), MPI_ERR_OTHER);
  {
    MPI_File fh = MPI_FILE_NULL;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0, code = MPI_File_close(&fh);
    expect(code, MPI_ERR_UNSUPPORTED_OPERATION);
    MPI_Error_string(code, text, &len);
    CHECK(strstr(text, "MPI_File_close") != NULL);
  }

  /* a truncated receive */
  if (size >= 2 && rank < 2) {
    int two[2] = {1, 2}, one = 0;
    if (rank == 0) {
      MPI_Send(two, 2, MPI_INT, 1, 9, MPI_COMM_WORLD);
    } else {
      expect(MPI_Recv(&one, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_TRUNCATE);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("errors: ok\n");
  MPI_Finalize();
  return 0;
}
