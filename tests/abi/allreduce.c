/* Collectives: Barrier, Bcast, Reduce (with MPI_IN_PLACE at the root), Allreduce of several
   types and operations (and MPI_IN_PLACE). */
#include <mpi.h>
#include <stdint.h>
#include "check.h"

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Barrier(MPI_COMM_WORLD);

  int root = size - 1;
  double data[5] = {0};
  if (rank == root)
    for (int i = 0; i < 5; i++) data[i] = i * 1.5;
  MPI_Bcast(data, 5, MPI_DOUBLE, root, MPI_COMM_WORLD);
  for (int i = 0; i < 5; i++) CHECK(data[i] == i * 1.5);

  long v[2] = {rank, 1}, s[2] = {-1, -1};
  MPI_Reduce(v, s, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) CHECK(s[0] == (long)size * (size - 1) / 2 && s[1] == size);
  int mine = rank + 1;
  if (rank == root) {
    MPI_Reduce(MPI_IN_PLACE, &mine, 1, MPI_INT, MPI_PROD, root, MPI_COMM_WORLD);
    int f = 1;
    for (int i = 1; i <= size; i++) f *= i;
    CHECK(mine == f);
  } else {
    MPI_Reduce(&mine, NULL, 1, MPI_INT, MPI_PROD, root, MPI_COMM_WORLD);
  }

  float fm = (float)rank, fr = -1;
  MPI_Allreduce(&fm, &fr, 1, MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD);
  CHECK(fr == (float)(size - 1));
  int64_t im = 10 + rank, ir = -1;
  MPI_Allreduce(&im, &ir, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
  CHECK(ir == 10);
  unsigned u = 1u << rank, ur = 0;
  MPI_Allreduce(&u, &ur, 1, MPI_UNSIGNED, MPI_BOR, MPI_COMM_WORLD);
  CHECK(ur == (1u << size) - 1);
  int l = rank != 0, lr = -1;
  MPI_Allreduce(&l, &lr, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  CHECK(lr == (size == 1 ? 0 : 0));
  int big[1000];
  for (int i = 0; i < 1000; i++) big[i] = i + rank;
  MPI_Allreduce(MPI_IN_PLACE, big, 1000, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  for (int i = 0; i < 1000; i++) CHECK(big[i] == i * size + size * (size - 1) / 2);

  if (rank == 0) printf("allreduce: ok on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
