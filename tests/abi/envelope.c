/* Datatype decoding: MPI_Type_get_envelope/contents return each constructor and its
   arguments (old types as new handles the program frees; named types as themselves), a type
   still decodes after its old type was freed; MPI_Type_match_size and
   MPI_Type_get_value_index. One rank. */
#include <mpi.h>
#include "check.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int ni, na, nd, comb, ints[8];
  MPI_Aint addrs[4];
  MPI_Datatype types[4], vec, st, sub, back;
  MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &comb);
  CHECK(comb == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nd == 0);
  MPI_Type_vector(3, 2, 5, MPI_DOUBLE, &vec);
  MPI_Type_get_envelope(vec, &ni, &na, &nd, &comb);
  CHECK(comb == MPI_COMBINER_VECTOR && ni == 3 && na == 0 && nd == 1);
  MPI_Type_get_contents(vec, 8, 4, 4, ints, addrs, types);
  CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 5 && types[0] == MPI_DOUBLE);
  int bl[2] = {1, 2};
  MPI_Aint disp[2] = {0, 16};
  MPI_Datatype tys[2] = {MPI_INT, vec};
  MPI_Type_create_struct(2, bl, disp, tys, &st);
  MPI_Type_free(&vec); /* st still decodes, and hands back a usable copy of it */
  MPI_Type_get_envelope(st, &ni, &na, &nd, &comb);
  CHECK(comb == MPI_COMBINER_STRUCT && ni == 3 && na == 2 && nd == 2);
  MPI_Type_get_contents(st, 8, 4, 4, ints, addrs, types);
  CHECK(ints[0] == 2 && ints[1] == 1 && ints[2] == 2 && addrs[1] == 16 && types[0] == MPI_INT);
  MPI_Type_get_envelope(types[1], &ni, &na, &nd, &comb);
  CHECK(comb == MPI_COMBINER_VECTOR);
  int size;
  MPI_Type_size(types[1], &size);
  CHECK(size == 6 * (int)sizeof(double));
  MPI_Type_free(&types[1]);
  int gs[2] = {4, 5}, ss[2] = {2, 3}, s0[2] = {1, 1};
  MPI_Type_create_subarray(2, gs, ss, s0, MPI_ORDER_FORTRAN, MPI_INT, &sub);
  MPI_Type_get_envelope(sub, &ni, &na, &nd, &comb);
  CHECK(comb == MPI_COMBINER_SUBARRAY && ni == 8 && nd == 1);
  MPI_Type_get_contents(sub, 8, 4, 4, ints, addrs, types);
  CHECK(ints[0] == 2 && ints[1] == 4 && ints[3] == 2 && ints[5] == 1 && ints[7] == MPI_ORDER_FORTRAN);
  MPI_Type_dup(sub, &back);
  MPI_Type_get_envelope(back, &ni, &na, &nd, &comb);
  CHECK(comb == MPI_COMBINER_DUP && nd == 1);
  MPI_Type_free(&back);
  MPI_Type_free(&sub);
  MPI_Type_free(&st);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  CHECK(MPI_Type_get_contents(MPI_INT, 8, 4, 4, ints, addrs, types) != MPI_SUCCESS);
  MPI_Datatype m;
  CHECK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &m) == MPI_SUCCESS);
  MPI_Type_size(m, &size);
  CHECK(size == 8); /* which type of that size is the library's choice */
  CHECK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &m) == MPI_SUCCESS);
  MPI_Type_size(m, &size);
  CHECK(size == 4);
  CHECK(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &m) == MPI_SUCCESS && m == MPI_DOUBLE_INT);
  CHECK(MPI_Type_get_value_index(MPI_CHAR, MPI_INT, &m) == MPI_SUCCESS && m == MPI_DATATYPE_NULL);
  printf("envelope: ok\n");
  MPI_Finalize();
  return 0;
}
