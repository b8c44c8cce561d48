/* Error classes, codes and strings a program adds: numbered above MPI_ERR_LASTCODE,
   MPI_LASTUSEDCODE follows them, MPI_Error_class/string know them, a user error handler gets
   them from MPI_Comm_call_errhandler, and MPI 4.1's removal works in order. */
#include <mpi.h>
#include <string.h>
#include "check.h"

static int seen = 0;
static void handler(MPI_Comm *c, int *code, ...) {
  (void)c;
  seen = *code;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int cls, code, got, flag, *last, len;
  char text[MPI_MAX_ERROR_STRING];
  CHECK(MPI_Add_error_class(&cls) == MPI_SUCCESS && cls > MPI_ERR_LASTCODE);
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag);
  CHECK(flag && *last == cls);
  CHECK(MPI_Add_error_code(cls, &code) == MPI_SUCCESS && code > cls);
  CHECK(MPI_Add_error_string(code, "the widget broke") == MPI_SUCCESS);
  CHECK(MPI_Error_class(code, &got) == MPI_SUCCESS && got == cls);
  CHECK(MPI_Error_string(code, text, &len) == MPI_SUCCESS && strcmp(text, "the widget broke") == 0);
  CHECK(MPI_Error_string(cls, text, &len) == MPI_SUCCESS && len == 0);
  MPI_Errhandler eh;
  MPI_Comm_create_errhandler(handler, &eh);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
  CHECK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, code) == MPI_SUCCESS && seen == code);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  CHECK(MPI_Add_error_string(MPI_ERR_OTHER, "no") != MPI_SUCCESS);
  CHECK(MPI_Remove_error_class(cls) != MPI_SUCCESS); /* a code is attached */
  CHECK(MPI_Remove_error_code(code) != MPI_SUCCESS); /* a string is attached */
  CHECK(MPI_Remove_error_string(code) == MPI_SUCCESS);
  CHECK(MPI_Remove_error_code(code) == MPI_SUCCESS);
  CHECK(MPI_Remove_error_class(cls) == MPI_SUCCESS);
  CHECK(MPI_Error_class(code, &got) != MPI_SUCCESS);
  MPI_Errhandler_free(&eh);
  printf("user_errors: ok\n");
  MPI_Finalize();
  return 0;
}
