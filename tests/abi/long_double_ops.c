/* MPI_SUM, MPI_PROD, MPI_MIN and MPI_MAX on MPI_LONG_DOUBLE, in C's long double precision:
 * each rank's value differs from 1 by a multiple of 2^-60, which a double cannot hold, so a
 * reduction done in double precision gives other answers. Also MPI_Reduce_local, a derived
 * type of long doubles (MPICH refuses predefined operations on derived types with
 * MPI_ERR_OP, which counts as an answer), MPI_BAND refused with MPI_ERR_OP, and MPI_MINLOC
 * and MPI_MAXLOC on MPI_LONG_DOUBLE_INT, whose values tie in double precision. 2 ranks or
 * more. */
#include <mpi.h>
#include "check.h"

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long double tiny = 1.0L / (1ULL << 60);
  long double mine = 1.0L + (rank + 1) * tiny, got = 0, want = 0;

  CHECK(MPI_Allreduce(&mine, &got, 1, MPI_LONG_DOUBLE, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
  want = size + tiny * size * (size + 1) / 2;
  CHECK(got == want);

  long double f = 1.0L + tiny * (1ULL << 30);
  long double factor = rank < 2 ? f : 1.0L, prod = 0;
  CHECK(MPI_Allreduce(&factor, &prod, 1, MPI_LONG_DOUBLE, MPI_PROD, MPI_COMM_WORLD) ==
        MPI_SUCCESS);
  CHECK(prod == f * f);

  CHECK(MPI_Allreduce(&mine, &got, 1, MPI_LONG_DOUBLE, MPI_MIN, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(got == 1.0L + tiny);
  CHECK(MPI_Allreduce(&mine, &got, 1, MPI_LONG_DOUBLE, MPI_MAX, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(got == 1.0L + size * tiny);

  long double in[3] = {1.0L + tiny, 2, 3}, inout[3] = {tiny, 5, -1};
  CHECK(MPI_Reduce_local(in, inout, 3, MPI_LONG_DOUBLE, MPI_SUM) == MPI_SUCCESS);
  CHECK(inout[0] == 1.0L + 2 * tiny && inout[1] == 7 && inout[2] == 2);

  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Datatype pair;
  CHECK(MPI_Type_contiguous(2, MPI_LONG_DOUBLE, &pair) == MPI_SUCCESS);
  CHECK(MPI_Type_commit(&pair) == MPI_SUCCESS);
  long double two[2] = {mine, -mine}, sums[2] = {0, 0};
  int cls = -1, rc = MPI_Allreduce(two, sums, 1, pair, MPI_SUM, MPI_COMM_WORLD);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_OP || (rc == MPI_SUCCESS && sums[0] == want && sums[1] == -want));
  MPI_Type_free(&pair);

  rc = MPI_Allreduce(&mine, &got, 1, MPI_LONG_DOUBLE, MPI_BAND, MPI_COMM_WORLD);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_OP);

  /* Rank 1 holds the smallest value; the others tie at the largest, so the smaller index
     wins; in double precision every value is 1. */
  struct { long double value; int index; } loc_in, loc_out;
  loc_in.value = rank == 1 ? 1.0L : 1.0L + 2 * tiny;
  loc_in.index = 10 + rank;
  CHECK(MPI_Allreduce(&loc_in, &loc_out, 1, MPI_LONG_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD) ==
        MPI_SUCCESS);
  CHECK(loc_out.value == 1.0L && loc_out.index == 11);
  CHECK(MPI_Allreduce(&loc_in, &loc_out, 1, MPI_LONG_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD) ==
        MPI_SUCCESS);
  CHECK(loc_out.value == 1.0L + 2 * tiny && loc_out.index == 10);

  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("long_double_ops: ok on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
