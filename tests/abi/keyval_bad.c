/* Attribute calls with a key that is not one (negative, never created, freed and no
   longer used, MPI_KEYVAL_INVALID) fail with MPI_ERR_KEYVAL; the predefined keys work.
   (MPICH does not detect the freed key: using it is erroneous, so it is not a must.) */
#include <mpi.h>
#include "check.h"

static void expect_keyval_error(int rc) {
  int cls = -1;
  CHECK(rc != MPI_SUCCESS);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_KEYVAL);
}

static int copy_fails(MPI_Comm c, int key, void *extra, void *in, void *out, int *flag) {
  (void)c, (void)key, (void)extra, (void)in, (void)out;
  *flag = 0;
  return MPI_ERR_OTHER;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  int buf = 0, flag;
  void *v;
  MPI_Win w;
  MPI_Win_create(&buf, sizeof buf, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w);
  MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
  int gone;
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &gone, NULL);
  int saved = gone;
  MPI_Comm_free_keyval(&gone);
  int bad[] = {-12345, -1, 123456, MPI_KEYVAL_INVALID, saved};
  for (unsigned i = 0; i < sizeof bad / sizeof *bad; i++) {
    expect_keyval_error(MPI_Comm_get_attr(MPI_COMM_WORLD, bad[i], &v, &flag));
    expect_keyval_error(MPI_Comm_set_attr(MPI_COMM_WORLD, bad[i], NULL));
    expect_keyval_error(MPI_Comm_delete_attr(MPI_COMM_WORLD, bad[i]));
    expect_keyval_error(MPI_Type_get_attr(MPI_INT, bad[i], &v, &flag));
    expect_keyval_error(MPI_Win_get_attr(w, bad[i], &v, &flag));
  }
  expect_keyval_error(MPI_Comm_free_keyval(&saved));
  flag = 0;
  CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag) == MPI_SUCCESS);
  CHECK(flag && *(int *)v >= 32767);
  flag = 0;
  CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &v, &flag) == MPI_SUCCESS);
  flag = 0;
  CHECK(MPI_Win_get_attr(w, MPI_WIN_BASE, &v, &flag) == MPI_SUCCESS && flag && v == &buf);
  MPI_Win_free(&w);
  /* A copy function that fails fails the dup, which gives MPI_COMM_NULL (as MPICH). */
  int k;
  MPI_Comm_create_keyval(copy_fails, MPI_COMM_NULL_DELETE_FN, &k, NULL);
  MPI_Comm_set_attr(MPI_COMM_WORLD, k, &buf);
  MPI_Comm d = MPI_COMM_SELF;
  int cls = -1;
  CHECK(MPI_Error_class(MPI_Comm_dup(MPI_COMM_WORLD, &d), &cls) == MPI_SUCCESS);
  CHECK(cls == MPI_ERR_OTHER && d == MPI_COMM_NULL);
  MPI_Comm_delete_attr(MPI_COMM_WORLD, k);
  MPI_Comm_free_keyval(&k);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("keyval_bad: ok\n");
  MPI_Finalize();
  return 0;
}
