/* MPICH's _x extensions and the Fortran details of the standard ABI, as a language binding
   uses them: an operation and error handlers that carry extra state, whose destructors run
   once they are freed (by MPI_Finalize at the latest), and the LOGICAL values and Fortran
   info a binding tells MPI. Two or more ranks. ibdyn only: MPICH 5's wheel declares the MPIX
   _x functions in its mpi_abi.h, but its library does not export them. */
#include <mpi.h>
#include <string.h>
#include "check.h"

static int destroyed = 0, handled = 0;
static MPI_Comm seen = MPI_COMM_NULL;

static void add_counted(void *in, void *inout, MPI_Count n, MPI_Datatype dt, void *calls) {
  CHECK(dt == MPI_INT);
  for (MPI_Count i = 0; i < n; i++) ((int *)inout)[i] += ((int *)in)[i];
  (*(int *)calls)++;
}

static void on_error(MPI_Comm comm, int code, void *weight) {
  int cls;
  MPI_Error_class(code, &cls);
  CHECK(cls == MPI_ERR_RANK);
  seen = comm;
  handled += *(int *)weight;
}

static void on_win_error(MPI_Win win, int code, void *extra) { (void)win, (void)code, (void)extra; }
static void on_file_error(MPI_File f, int code, void *extra) { (void)f, (void)code, (void)extra; }
static void on_session_error(MPI_Session s, int code, void *extra) {
  (void)s, (void)code, (void)extra;
}
static void destroy(void *extra) {
  (void)extra;
  destroyed++;
}

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size >= 2);

  /* an operation with extra state: a sum that counts its calls */
  static int calls = 0;
  MPI_Op op;
  CHECK(MPIX_Op_create_x(add_counted, destroy, 1, &calls, &op) == MPI_SUCCESS);
  int mine[3] = {rank, 1, 2 * rank}, sum[3];
  CHECK(MPI_Allreduce(mine, sum, 3, MPI_INT, op, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(sum[0] == size * (size - 1) / 2 && sum[1] == size && sum[2] == size * (size - 1));
  int all_calls = 0;
  MPI_Allreduce(&calls, &all_calls, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(all_calls >= 1);
  CHECK(MPI_Op_free(&op) == MPI_SUCCESS && op == MPI_OP_NULL);

  /* an error handler with extra state: the communicator and the code by value */
  static int weight = 10;
  MPI_Comm dup;
  MPI_Errhandler eh;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  CHECK(MPIX_Comm_create_errhandler_x(on_error, destroy, &weight, &eh) == MPI_SUCCESS);
  CHECK(MPI_Comm_set_errhandler(dup, eh) == MPI_SUCCESS);
  int x = 0, rc = MPI_Send(&x, 1, MPI_INT, size + 5, 0, dup), cls;
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_RANK && handled == 10 && seen == dup);
  CHECK(MPI_Comm_call_errhandler(dup, MPI_ERR_RANK) == MPI_SUCCESS && handled == 20);
  MPI_Comm_free(&dup);
  CHECK(MPI_Errhandler_free(&eh) == MPI_SUCCESS && eh == MPI_ERRHANDLER_NULL);

  /* the other kinds are made and freed alike */
  MPI_Errhandler w, f, s;
  CHECK(MPIX_Win_create_errhandler_x(on_win_error, destroy, NULL, &w) == MPI_SUCCESS);
  CHECK(MPIX_File_create_errhandler_x(on_file_error, destroy, NULL, &f) == MPI_SUCCESS);
  CHECK(MPIX_Session_create_errhandler_x(on_session_error, NULL, NULL, &s) == MPI_SUCCESS);
  MPI_Errhandler_free(&w);
  MPI_Errhandler_free(&f);
  MPI_Errhandler_free(&s);

  /* Fortran LOGICAL values: told once, read back */
  int yes = -1, no = -1, is_set = -1;
  CHECK(MPI_Abi_get_fortran_booleans(4, &yes, &no, &is_set) == MPI_SUCCESS);
  if (!is_set) {
    int t = 1, z = 0;
    CHECK(MPI_Abi_set_fortran_booleans(4, &t, &z) == MPI_SUCCESS);
    CHECK(MPI_Abi_get_fortran_booleans(4, &yes, &no, &is_set) == MPI_SUCCESS);
    CHECK(is_set && yes == 1 && no == 0);
  }
  CHECK(is_set && yes != no);

  /* Fortran details: when MPI has none, a binding sets them and reads them back */
  MPI_Info fi;
  CHECK(MPI_Abi_get_fortran_info(&fi) == MPI_SUCCESS);
  if (fi == MPI_INFO_NULL) {
    MPI_Info mine_info;
    MPI_Info_create(&mine_info);
    MPI_Info_set(mine_info, "mpi_logical_size", "4");
    CHECK(MPI_Abi_set_fortran_info(mine_info) == MPI_SUCCESS);
    MPI_Info_free(&mine_info);
    CHECK(MPI_Abi_get_fortran_info(&fi) == MPI_SUCCESS && fi != MPI_INFO_NULL);
    char v[8];
    int vlen = sizeof v, flag = 0;
    CHECK(MPI_Info_get_string(fi, "mpi_logical_size", &vlen, v, &flag) == MPI_SUCCESS);
    CHECK(flag && strcmp(v, "4") == 0);
  }
  MPI_Info_free(&fi);

  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("extensions_x: ok on %d ranks\n", size);
  MPI_Finalize();
  /* the operation and the three handlers with a destructor: each destroyed once */
  CHECK(destroyed == 4);
  return 0;
}
