/* Freeing a key still in use (MPI-4.1 sec 7.7): the caller's handle becomes
   MPI_KEYVAL_INVALID, but the attributes set with it stay readable, are copied by
   MPI_Comm_dup and deleted (their delete function runs) when deleted or when their
   object is freed. Communicators, datatypes and windows. */
#include <mpi.h>
#include "check.h"

static int comm_deletes, type_deletes, win_deletes;

static int comm_del(MPI_Comm c, int k, void *v, void *extra) {
  (void)c, (void)k, (void)v, (void)extra;
  comm_deletes++;
  return MPI_SUCCESS;
}
static int type_del(MPI_Datatype t, int k, void *v, void *extra) {
  (void)t, (void)k, (void)v, (void)extra;
  type_deletes++;
  return MPI_SUCCESS;
}
static int win_del(MPI_Win w, int k, void *v, void *extra) {
  (void)w, (void)k, (void)v, (void)extra;
  win_deletes++;
  return MPI_SUCCESS;
}

static void comm_case(void) {
  int k, flag = 0;
  void *v = NULL;
  MPI_Comm a, b, c;
  CHECK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, comm_del, &k, NULL) == MPI_SUCCESS);
  MPI_Comm_dup(MPI_COMM_WORLD, &a);
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  CHECK(MPI_Comm_set_attr(a, k, (void *)7) == MPI_SUCCESS);
  CHECK(MPI_Comm_set_attr(c, k, (void *)9) == MPI_SUCCESS);
  int saved = k;
  CHECK(MPI_Comm_free_keyval(&k) == MPI_SUCCESS && k == MPI_KEYVAL_INVALID);
  CHECK(MPI_Comm_get_attr(a, saved, &v, &flag) == MPI_SUCCESS && flag && v == (void *)7);
  /* The copy function still runs. */
  CHECK(MPI_Comm_dup(a, &b) == MPI_SUCCESS);
  flag = 0;
  CHECK(MPI_Comm_get_attr(b, saved, &v, &flag) == MPI_SUCCESS && flag && v == (void *)7);
  CHECK(MPI_Comm_free(&a) == MPI_SUCCESS && comm_deletes == 1);
  CHECK(MPI_Comm_delete_attr(c, saved) == MPI_SUCCESS && comm_deletes == 2);
  CHECK(MPI_Comm_free(&c) == MPI_SUCCESS && comm_deletes == 2);
  CHECK(MPI_Comm_free(&b) == MPI_SUCCESS && comm_deletes == 3);
}

static void type_case(void) {
  int k, flag = 0;
  void *v = NULL;
  MPI_Datatype t, u;
  CHECK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, type_del, &k, NULL) == MPI_SUCCESS);
  MPI_Type_contiguous(2, MPI_INT, &t);
  CHECK(MPI_Type_set_attr(t, k, (void *)5) == MPI_SUCCESS);
  int saved = k;
  CHECK(MPI_Type_free_keyval(&k) == MPI_SUCCESS && k == MPI_KEYVAL_INVALID);
  CHECK(MPI_Type_get_attr(t, saved, &v, &flag) == MPI_SUCCESS && flag && v == (void *)5);
  CHECK(MPI_Type_dup(t, &u) == MPI_SUCCESS);
  /* (MPICH runs t's delete function only once u, made from t, is gone too.) */
  CHECK(MPI_Type_free(&t) == MPI_SUCCESS);
  flag = 0;
  CHECK(MPI_Type_get_attr(u, saved, &v, &flag) == MPI_SUCCESS && flag && v == (void *)5);
  CHECK(MPI_Type_free(&u) == MPI_SUCCESS && type_deletes == 2);
}

static void win_case(void) {
  int k, flag = 0, buf = 0;
  void *v = NULL;
  MPI_Win w;
  CHECK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, win_del, &k, NULL) == MPI_SUCCESS);
  MPI_Win_create(&buf, sizeof buf, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w);
  CHECK(MPI_Win_set_attr(w, k, (void *)3) == MPI_SUCCESS);
  int saved = k;
  CHECK(MPI_Win_free_keyval(&k) == MPI_SUCCESS && k == MPI_KEYVAL_INVALID);
  CHECK(MPI_Win_get_attr(w, saved, &v, &flag) == MPI_SUCCESS && flag && v == (void *)3);
  CHECK(MPI_Win_free(&w) == MPI_SUCCESS && win_deletes == 1);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  comm_case();
  type_case();
  win_case();
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("keyval_free: ok\n");
  MPI_Finalize();
  return 0;
}
