/* MPI_Status_set_elements(status, datatype, count) sets count basic elements ("Associating
   Information with Status" in MPI 4.1): MPI_Get_elements of the datatype returns count
   afterwards, MPI_Get_count the copies when count fills whole copies and MPI_UNDEFINED when
   not; also through _x and _c, for a vector, a struct of two kinds, a type of structs, a pair
   type and a predefined type. The expected answers are MPICH's. */
#include <mpi.h>
#include "check.h"

static void expect(MPI_Datatype t, int set, int copies_of) {
  MPI_Status st;
  int e = -1, n = -1;
  CHECK(MPI_Status_set_elements(&st, t, set) == MPI_SUCCESS);
  CHECK(MPI_Get_elements(&st, t, &e) == MPI_SUCCESS);
  CHECK(MPI_Get_count(&st, t, &n) == MPI_SUCCESS);
  if (e != set || n != (set % copies_of ? MPI_UNDEFINED : set / copies_of)) {
    fprintf(stderr, "set_elements(%d): Get_elements %d, Get_count %d (%d elements a copy)\n",
            set, e, n, copies_of);
    exit(1);
  }
  MPI_Count c = -1, cn = -1;
  CHECK(MPI_Status_set_elements_x(&st, t, set + copies_of) == MPI_SUCCESS);
  CHECK(MPI_Get_elements_x(&st, t, &c) == MPI_SUCCESS);
  CHECK(c == set + copies_of);
  CHECK(MPI_Status_set_elements_c(&st, t, set) == MPI_SUCCESS);
  CHECK(MPI_Get_elements_c(&st, t, &c) == MPI_SUCCESS);
  CHECK(MPI_Get_count_c(&st, t, &cn) == MPI_SUCCESS);
  CHECK(c == set && cn == (set % copies_of ? MPI_UNDEFINED : set / copies_of));
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Datatype vec3, mixed, two_mixed;
  MPI_Type_vector(3, 1, 2, MPI_INT, &vec3); /* 3 ints a copy */
  MPI_Type_commit(&vec3);
  int bl[2] = {1, 1};
  MPI_Aint dp[2] = {0, 8};
  MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Type_create_struct(2, bl, dp, ty, &mixed); /* an int and a double */
  MPI_Type_commit(&mixed);
  MPI_Type_contiguous(2, mixed, &two_mixed); /* 4 basic elements */
  MPI_Type_commit(&two_mixed);

  for (int k = 0; k <= 9; k++) {
    expect(vec3, k, 3);
    expect(mixed, k, 2);
    expect(two_mixed, k, 4);
    expect(MPI_DOUBLE_INT, k, 2);
    expect(MPI_INT, k, 1);
  }
  /* the bytes of 6 elements of vec3 are 6 ints */
  MPI_Status st;
  int e = -1, n = -1;
  CHECK(MPI_Status_set_elements(&st, vec3, 6) == MPI_SUCCESS);
  CHECK(MPI_Get_elements(&st, MPI_INT, &e) == MPI_SUCCESS && e == 6);
  CHECK(MPI_Get_count(&st, MPI_INT, &n) == MPI_SUCCESS && n == 6);

  MPI_Type_free(&two_mixed);
  MPI_Type_free(&mixed);
  MPI_Type_free(&vec3);
  printf("set_elements: ok\n");
  MPI_Finalize();
  return 0;
}
