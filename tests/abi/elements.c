/* MPI_Get_elements and MPI_Get_count on derived types: basic elements of mixed-type structs,
 * nested types, pair types, and messages that end inside a copy of the type (the basic
 * elements wholly received count, as in MPICH). Run on 1 rank. */
#include <mpi.h>

#include "check.h"

/* Sends `sbytes` bytes to self and returns the status of receiving them as `n` of `ty`. */
static MPI_Status echo(int sbytes, int n, MPI_Datatype ty) {
  static char src[4096], dst[1 << 16];
  MPI_Status st;
  MPI_Sendrecv(src, sbytes, MPI_BYTE, 0, 1, dst, n, ty, 0, 1, MPI_COMM_SELF, &st);
  return st;
}

static int elements(MPI_Status st, MPI_Datatype ty) {
  int n = -1;
  MPI_Count c = -1;
  MPI_Get_elements(&st, ty, &n);
  MPI_Get_elements_c(&st, ty, &c);
  CHECK(c == n);
  return n;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Datatype vec, st2, nested, pairs, mixed;
  MPI_Type_vector(2, 3, 4, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  int bl[2] = {3, 1};
  MPI_Aint dp[2] = {0, 16};
  MPI_Datatype tys[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Type_create_struct(2, bl, dp, tys, &st2); /* 3 ints, 1 double: 20 bytes, 4 elements */
  MPI_Type_commit(&st2);
  MPI_Type_contiguous(3, st2, &nested);
  MPI_Type_commit(&nested);
  MPI_Type_contiguous(2, MPI_DOUBLE_INT, &pairs);
  MPI_Type_commit(&pairs);
  MPI_Datatype t3[3] = {MPI_CHAR, st2, MPI_SHORT};
  int b3[3] = {2, 2, 1};
  MPI_Aint d3[3] = {0, 8, 64};
  MPI_Type_create_struct(3, b3, d3, t3, &mixed); /* 2 + 2*20 + 2 = 44 bytes, 2+8+1 elements */
  MPI_Type_commit(&mixed);

  int n;
  CHECK(elements(echo(48, 2, vec), vec) == 12);
  CHECK(elements(echo(40, 2, st2), st2) == 8);
  /* 1 whole copy (4) + 3 ints; the double not reached */
  MPI_Status s = echo(32, 2, st2);
  CHECK(elements(s, st2) == 7);
  MPI_Get_count(&s, st2, &n);
  CHECK(n == MPI_UNDEFINED);
  /* ends inside the double: it is not counted (as in MPICH) */
  CHECK(elements(echo(36, 2, st2), st2) == 7);
  CHECK(elements(echo(0, 2, st2), st2) == 0);
  /* nested: 1 copy of 3 structs (12) + 1 struct (4) + 2 ints */
  CHECK(elements(echo(60 + 20 + 8, 2, nested), nested) == 18);
  /* a pair type counts two basic elements per pair */
  int pair;
  MPI_Type_size(MPI_DOUBLE_INT, &pair);
  s = echo(2 * pair, 2, MPI_DOUBLE_INT);
  CHECK(elements(s, MPI_DOUBLE_INT) == 4);
  MPI_Get_count(&s, MPI_DOUBLE_INT, &n);
  CHECK(n == 2);
  CHECK(elements(echo(2 * pair, 1, pairs), pairs) == 4);
  /* a struct of a char run, a struct run and a short */
  CHECK(elements(echo(44, 1, mixed), mixed) == 11);
  CHECK(elements(echo(44 + 2 + 20 + 4, 2, mixed), mixed) == 11 + 2 + 4 + 1);
  CHECK(elements(echo(44 + 1, 2, mixed), mixed) == 11 + 1);
  MPI_Type_free(&vec);
  MPI_Type_free(&st2);
  MPI_Type_free(&nested);
  MPI_Type_free(&pairs);
  MPI_Type_free(&mixed);
  MPI_Finalize();
  printf("elements: ok\n");
  return 0;
}
