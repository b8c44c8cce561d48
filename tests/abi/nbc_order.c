/* Non-blocking collectives started in the same order everywhere but completed in different
 * orders: rank 0 with Waitall, rank 1 in reverse with Wait, the others one by one in start
 * order. A wait on one collective must move the others on (MPI's progress rule); between
 * nodes a rank waiting in its Ibarrier used to leave the Ireduce_scatter its peers waited in
 * unmoved, and the job hung. */
#include <mpi.h>
#include "check.h"

#define N 3

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int in[64], counts[64], scattered = -1, sum = -1, mine = rank + 1;
  CHECK(size <= 64);
  for (int i = 0; i < size; i++) {
    in[i] = i + 1;
    counts[i] = 1;
  }
  for (int round = 0; round < 20; round++) {
    MPI_Request q[N];
    MPI_Ireduce_scatter(in, &scattered, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q[0]);
    MPI_Ibarrier(MPI_COMM_WORLD, &q[1]);
    MPI_Iallreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q[2]);
    if (rank == 0) {
      MPI_Waitall(N, q, MPI_STATUSES_IGNORE);
    } else if (rank == 1) {
      for (int i = N - 1; i >= 0; i--) MPI_Wait(&q[i], MPI_STATUS_IGNORE);
    } else {
      for (int i = 0; i < N; i++) MPI_Wait(&q[i], MPI_STATUS_IGNORE);
    }
    CHECK(scattered == size * (rank + 1));
    CHECK(sum == size * (size + 1) / 2);
  }
  if (rank == 0) printf("nbc_order: ok\n");
  MPI_Finalize();
  return 0;
}
