/* Datatype attributes: keys, set/get/delete, the delete function on MPI_Type_free and on
   replacement, MPI_TYPE_DUP_FN and a user copy function on MPI_Type_dup. One rank is
   enough; every rank checks. */
#include <mpi.h>
#include "check.h"

static int deleted = 0;

static int count_delete(MPI_Datatype t, int k, void *v, void *extra) {
  (void)t, (void)k, (void)extra;
  deleted += *(int *)v;
  return MPI_SUCCESS;
}

static int double_copy(MPI_Datatype t, int k, void *extra, void *in, void *out, int *flag) {
  (void)t, (void)k, (void)extra;
  static int copy;
  copy = *(int *)in * 2;
  *(void **)out = &copy;
  *flag = 1;
  return MPI_SUCCESS;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int k1, k2, flag = 0, one = 1, ten = 10, *got = NULL;
  CHECK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, count_delete, &k1, NULL) == MPI_SUCCESS);
  CHECK(MPI_Type_create_keyval(double_copy, MPI_TYPE_NULL_DELETE_FN, &k2, NULL) == MPI_SUCCESS);
  MPI_Datatype pair, dup;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  CHECK(MPI_Type_get_attr(pair, k1, &got, &flag) == MPI_SUCCESS && !flag);
  CHECK(MPI_Type_set_attr(pair, k1, &one) == MPI_SUCCESS);
  CHECK(MPI_Type_set_attr(pair, k2, &ten) == MPI_SUCCESS);
  CHECK(MPI_Type_get_attr(pair, k1, &got, &flag) == MPI_SUCCESS && flag && *got == 1);
  CHECK(MPI_Type_set_attr(pair, k1, &one) == MPI_SUCCESS); /* replaces: delete runs */
  CHECK(deleted == 1);
  CHECK(MPI_Type_dup(pair, &dup) == MPI_SUCCESS);
  CHECK(MPI_Type_get_attr(dup, k1, &got, &flag) == MPI_SUCCESS && flag && *got == 1);
  CHECK(MPI_Type_get_attr(dup, k2, &got, &flag) == MPI_SUCCESS && flag && *got == 20);
  CHECK(MPI_Type_delete_attr(dup, k1) == MPI_SUCCESS && deleted == 2);
  CHECK(MPI_Type_get_attr(dup, k1, &got, &flag) == MPI_SUCCESS && !flag);
  MPI_Type_free(&dup);
  CHECK(deleted == 2);
  MPI_Type_free(&pair); /* k1 still set on pair: its delete runs */
  CHECK(deleted == 3);
  /* on a predefined type too */
  CHECK(MPI_Type_set_attr(MPI_INT, k2, &ten) == MPI_SUCCESS);
  CHECK(MPI_Type_get_attr(MPI_INT, k2, &got, &flag) == MPI_SUCCESS && flag && *got == 10);
  CHECK(MPI_Type_delete_attr(MPI_INT, k2) == MPI_SUCCESS);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  CHECK(MPI_Type_get_attr(MPI_INT, MPI_KEYVAL_INVALID, &got, &flag) != MPI_SUCCESS);
  MPI_Type_free_keyval(&k1);
  MPI_Type_free_keyval(&k2);
  CHECK(k1 == MPI_KEYVAL_INVALID);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("type_attr: ok\n");
  MPI_Finalize();
  return 0;
}
