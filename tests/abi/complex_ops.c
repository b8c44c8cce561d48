/* MPI_SUM and MPI_PROD on the complex datatypes (MPI 4.1 sec 6.9.2, "Complex"): every C,
   C++ and Fortran complex type of the ABI, compared with C's own complex arithmetic; long
   double complex in x87 extended precision ((1 + 2^-30)^2 keeps its 2^-60, which a double
   drops); a derived type of a complex type; Allreduce, Reduce and Iallreduce over the
   processes; MPI_MAX refused with MPI_ERR_OP. */
#include <mpi.h>
#include <complex.h>
#include <math.h>
#include "check.h"

#define N 3

static int err_class(int rc) {
  int cls;
  MPI_Error_class(rc, &cls);
  return cls;
}

#define LOCAL(ctype, mpitype)                                                            \
  do {                                                                                   \
    ctype in[N] = {1.5 + 2 * I, -3 + 0.25 * I, 0.5 - 4 * I};                             \
    ctype io[N] = {2 - I, 4 + 8 * I, -0.75 + 1.5 * I}, want[N];                          \
    for (int i = 0; i < N; i++) want[i] = in[i] + io[i];                                 \
    CHECK(MPI_Reduce_local(in, io, N, mpitype, MPI_SUM) == MPI_SUCCESS);                 \
    for (int i = 0; i < N; i++) CHECK(io[i] == want[i]);                                 \
    for (int i = 0; i < N; i++) want[i] = in[i] * io[i];                                 \
    CHECK(MPI_Reduce_local(in, io, N, mpitype, MPI_PROD) == MPI_SUCCESS);                \
    for (int i = 0; i < N; i++) CHECK(io[i] == want[i]);                                 \
    CHECK(err_class(MPI_Reduce_local(in, io, N, mpitype, MPI_MAX)) == MPI_ERR_OP);       \
  } while (0)

int main(int argc, char **argv) {
  int me, np;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

  LOCAL(float complex, MPI_C_COMPLEX);
  LOCAL(float complex, MPI_C_FLOAT_COMPLEX);
  LOCAL(float complex, MPI_CXX_FLOAT_COMPLEX);
  LOCAL(double complex, MPI_C_DOUBLE_COMPLEX);
  LOCAL(double complex, MPI_CXX_DOUBLE_COMPLEX);
  LOCAL(long double complex, MPI_C_LONG_DOUBLE_COMPLEX);
  LOCAL(long double complex, MPI_CXX_LONG_DOUBLE_COMPLEX);
  LOCAL(float complex, MPI_COMPLEX);
  LOCAL(float complex, MPI_COMPLEX8);
  LOCAL(double complex, MPI_DOUBLE_COMPLEX);
  LOCAL(double complex, MPI_COMPLEX16);

  /* long double precision: (1 + 2^-30)^2 = 1 + 2^-29 + 2^-60 */
  long double complex a = 1 + ldexpl(1, -30), b = a;
  CHECK(MPI_Reduce_local(&a, &b, 1, MPI_C_LONG_DOUBLE_COMPLEX, MPI_PROD) == MPI_SUCCESS);
  CHECK(creall(b) == 1 + ldexpl(1, -29) + ldexpl(1, -60) && cimagl(b) == 0);

  /* a derived type of one complex type: right, or MPI_ERR_OP (MPICH's answer: the
     standard defines the predefined operations on predefined types) */
  MPI_Datatype two;
  MPI_Type_contiguous(2, MPI_C_DOUBLE_COMPLEX, &two);
  MPI_Type_commit(&two);
  double complex dx[2] = {1 + I, 2 - 3 * I}, dy[2] = {0.5 - I, 4 + I};
  double complex dw[2] = {dx[0] * dy[0], dx[1] * dy[1]};
  int rc = MPI_Reduce_local(dx, dy, 1, two, MPI_PROD);
  CHECK(rc == MPI_SUCCESS ? dy[0] == dw[0] && dy[1] == dw[1] : err_class(rc) == MPI_ERR_OP);
  MPI_Type_free(&two);

  /* over the processes: rank r gives (r + 1) + i; the product in rank order */
  double complex mine = (me + 1) + I, prod = 1, sum = 0, got = 0;
  for (int r = 0; r < np; r++) {
    prod *= (r + 1) + I;
    sum += (r + 1) + I;
  }
  CHECK(MPI_Allreduce(&mine, &got, 1, MPI_C_DOUBLE_COMPLEX, MPI_PROD, MPI_COMM_WORLD) ==
        MPI_SUCCESS);
  CHECK(got == prod);
  got = 0;
  CHECK(MPI_Reduce(&mine, &got, 1, MPI_C_DOUBLE_COMPLEX, MPI_SUM, 0, MPI_COMM_WORLD) ==
        MPI_SUCCESS);
  if (me == 0) CHECK(got == sum);
  float complex fmine = (me + 1) - 2 * I, fsum = 0, fwant = 0;
  for (int r = 0; r < np; r++) fwant += (r + 1) - 2 * I;
  MPI_Request req;
  CHECK(MPI_Iallreduce(&fmine, &fsum, 1, MPI_C_FLOAT_COMPLEX, MPI_SUM, MPI_COMM_WORLD, &req) ==
        MPI_SUCCESS);
  CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(fsum == fwant);
  /* ranks 0 and 1 give 1 + 2^-30 and 1 + 2^-30 + i, the others 1: one rounded product */
  long double complex lmine = me < 2 ? 1 + ldexpl(1, -30) + I * me : 1, lgot = 0;
  long double complex lwant = (1 + ldexpl(1, -30)) * (1 + ldexpl(1, -30) + I);
  CHECK(MPI_Allreduce(&lmine, &lgot, 1, MPI_C_LONG_DOUBLE_COMPLEX, MPI_PROD, MPI_COMM_WORLD) ==
        MPI_SUCCESS);
  CHECK(lgot == lwant);

  if (me == 0) printf("complex_ops: ok\n");
  MPI_Finalize();
  return 0;
}
