/* MPI's progress rule: a process blocked in a receive or in a blocking collective moves its
 * non-blocking collectives on, since its peers may wait in them before they send what it
 * waits for. Every rank starts a barrier, a large broadcast from the last rank, an allgather
 * and a large allreduce; rank 0 then receives from rank 1 (MPI_Recv, MPI_Wait on MPI_Irecv, MPI_Probe,
 * MPI_Sendrecv, MPI_Waitany, MPI_Waitsome, a loop of MPI_Test, a loop of MPI_Iprobe in turn) while the others complete the
 * collectives first and only then does rank 1 send; or rank 0 runs a blocking MPI_Allreduce
 * that the others join only once their collectives are complete. A call that only waited
 * for its own message hung here. 3 ranks or more. */
#include <mpi.h>
#include <stdlib.h>
#include "check.h"

#define BIG (1 << 20)
#define PART 4096

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size >= 3);
  char *big = malloc(BIG), *parts = malloc((size_t)PART * size), mine[PART];
  int *ints = malloc(BIG), *sums = malloc(BIG), nints = BIG / (int)sizeof(int);
  for (int round = 0; round < 18; round++) {
    int root = size - 1, kind = round % 9, v = -1;
    for (int i = 0; i < BIG; i++) big[i] = rank == root ? (char)(i + round) : 0;
    for (int i = 0; i < PART; i++) mine[i] = (char)(rank + i + round);
    for (int i = 0; i < nints; i++) ints[i] = rank + i + round;
    MPI_Request q[4];
    CHECK(MPI_Ibarrier(MPI_COMM_WORLD, &q[0]) == MPI_SUCCESS);
    CHECK(MPI_Ibcast(big, BIG, MPI_CHAR, root, MPI_COMM_WORLD, &q[1]) == MPI_SUCCESS);
    CHECK(MPI_Iallgather(mine, PART, MPI_CHAR, parts, PART, MPI_CHAR, MPI_COMM_WORLD, &q[2]) ==
          MPI_SUCCESS);
    CHECK(MPI_Iallreduce(ints, sums, nints, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q[3]) ==
          MPI_SUCCESS);
    if (rank == 0) {
      MPI_Request r;
      MPI_Status st;
      int out = 0;
      switch (kind) {
        case 0: CHECK(MPI_Recv(&v, 1, MPI_INT, 1, round, MPI_COMM_WORLD, &st) == MPI_SUCCESS); break;
        case 1:
          CHECK(MPI_Irecv(&v, 1, MPI_INT, 1, round, MPI_COMM_WORLD, &r) == MPI_SUCCESS);
          CHECK(MPI_Wait(&r, &st) == MPI_SUCCESS);
          break;
        case 2:
          CHECK(MPI_Probe(1, round, MPI_COMM_WORLD, &st) == MPI_SUCCESS);
          CHECK(MPI_Recv(&v, 1, MPI_INT, 1, round, MPI_COMM_WORLD, &st) == MPI_SUCCESS);
          break;
        case 3:
          CHECK(MPI_Sendrecv(&out, 1, MPI_INT, 1, round, &v, 1, MPI_INT, 1, round, MPI_COMM_WORLD,
                             &st) == MPI_SUCCESS);
          break;
        case 4: {
          int at = -1;
          CHECK(MPI_Irecv(&v, 1, MPI_INT, 1, round, MPI_COMM_WORLD, &r) == MPI_SUCCESS);
          CHECK(MPI_Waitany(1, &r, &at, &st) == MPI_SUCCESS && at == 0);
          break;
        }
        case 5: {
          int n = 0, at = -1;
          CHECK(MPI_Irecv(&v, 1, MPI_INT, 1, round, MPI_COMM_WORLD, &r) == MPI_SUCCESS);
          CHECK(MPI_Waitsome(1, &r, &n, &at, &st) == MPI_SUCCESS && n == 1 && at == 0);
          break;
        }
        case 6:
          CHECK(MPI_Allreduce(&out, &v, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
          v += 100 + round;
          break;
        case 7: {
          int done = 0;
          CHECK(MPI_Irecv(&v, 1, MPI_INT, 1, round, MPI_COMM_WORLD, &r) == MPI_SUCCESS);
          while (!done) CHECK(MPI_Test(&r, &done, &st) == MPI_SUCCESS);
          break;
        }
        default: {
          int found = 0;
          while (!found) CHECK(MPI_Iprobe(1, round, MPI_COMM_WORLD, &found, &st) == MPI_SUCCESS);
          CHECK(MPI_Recv(&v, 1, MPI_INT, 1, round, MPI_COMM_WORLD, &st) == MPI_SUCCESS);
        }
      }
      CHECK(v == 100 + round);
      CHECK(MPI_Waitall(4, q, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    } else {
      CHECK(MPI_Waitall(4, q, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
      if (kind == 6) {
        int zero = 0;
        CHECK(MPI_Allreduce(&zero, &v, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
        CHECK(v == 0);
      } else if (rank == 1) {
        v = 100 + round;
        if (kind == 3) {
          int in = -1;
          CHECK(MPI_Sendrecv(&v, 1, MPI_INT, 0, round, &in, 1, MPI_INT, 0, round, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE) == MPI_SUCCESS);
        } else {
          CHECK(MPI_Send(&v, 1, MPI_INT, 0, round, MPI_COMM_WORLD) == MPI_SUCCESS);
        }
      }
    }
    for (int i = 0; i < BIG; i++) CHECK(big[i] == (char)(i + round));
    for (int r = 0; r < size; r++)
      for (int i = 0; i < PART; i++) CHECK(parts[(size_t)r * PART + i] == (char)(r + i + round));
    for (int i = 0; i < nints; i++) CHECK(sums[i] == size * (i + round) + size * (size - 1) / 2);
  }
  CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS);
  if (rank == 0) printf("nbc_progress: ok on %d ranks\n", size);
  free(big);
  free(parts);
  free(ints);
  free(sums);
  MPI_Finalize();
  return 0;
}
