/* The MPI-1 attribute calls old codes still make (deprecated, in the standard ABI):
   MPI_Attr_get of a predefined attribute, MPI_Keyval_create with copy and delete
   functions, MPI_Attr_put, MPI_Attr_delete, and what MPI_Comm_dup copies. */
#include <mpi.h>
#include "check.h"

static int deleted = 0, copied = 0;

static int copy_fn(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag) {
  (void)comm;
  (void)keyval;
  CHECK(*(int *)extra == 42);
  copied++;
  *(void **)out = (char *)in + 1;
  *flag = 1;
  return MPI_SUCCESS;
}

static int delete_fn(MPI_Comm comm, int keyval, void *val, void *extra) {
  (void)comm;
  (void)keyval;
  (void)val;
  (void)extra;
  deleted++;
  return MPI_SUCCESS;
}

int main(int argc, char **argv) {
  int rank, flag, *tag_ub;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);

  CHECK(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag) == MPI_SUCCESS);
  CHECK(flag && *tag_ub >= 32767);

  static int extra = 42;
  static char data[4];
  int copying, plain;
  CHECK(MPI_Keyval_create(copy_fn, delete_fn, &copying, &extra) == MPI_SUCCESS);
  CHECK(MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &plain, NULL) == MPI_SUCCESS);

  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  CHECK(MPI_Attr_put(dup, copying, data) == MPI_SUCCESS);
  CHECK(MPI_Attr_put(dup, plain, data + 2) == MPI_SUCCESS);
  void *v;
  CHECK(MPI_Attr_get(dup, copying, &v, &flag) == MPI_SUCCESS && flag && v == data);

  /* a dup copies through copy_fn and leaves out MPI_NULL_COPY_FN's attribute */
  MPI_Comm dup2;
  MPI_Comm_dup(dup, &dup2);
  CHECK(copied == 1);
  CHECK(MPI_Attr_get(dup2, copying, &v, &flag) == MPI_SUCCESS && flag && v == data + 1);
  CHECK(MPI_Attr_get(dup2, plain, &v, &flag) == MPI_SUCCESS && !flag);

  /* putting again deletes the old value first; deleting calls delete_fn */
  CHECK(MPI_Attr_put(dup, copying, data + 3) == MPI_SUCCESS && deleted == 1);
  CHECK(MPI_Attr_delete(dup, copying) == MPI_SUCCESS && deleted == 2);
  CHECK(MPI_Attr_get(dup, copying, &v, &flag) == MPI_SUCCESS && !flag);
  MPI_Comm_free(&dup2);
  CHECK(deleted == 3);
  MPI_Comm_free(&dup);

  CHECK(MPI_Keyval_free(&copying) == MPI_SUCCESS && copying == MPI_KEYVAL_INVALID);
  CHECK(MPI_Keyval_free(&plain) == MPI_SUCCESS);

  /* a bad key is an error, not a crash */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK(MPI_Attr_get(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &v, &flag) != MPI_SUCCESS);

  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("attr_mpi1: ok\n");
  MPI_Finalize();
  return 0;
}
