/* Point-to-point: a token round a ring (Send/Recv), a non-blocking exchange with every rank
   (Isend/Irecv/Waitall, Test, Wait), Sendrecv, Probe/Iprobe/Get_count, wildcards, PROC_NULL,
   and a split communicator. */
#include <mpi.h>
#include "check.h"

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  MPI_Status st;

  /* token ring: each rank adds its rank */
  long token = 0;
  if (rank == 0) {
    MPI_Send(&token, 1, MPI_LONG, next, 7, MPI_COMM_WORLD);
    MPI_Recv(&token, 1, MPI_LONG, prev, 7, MPI_COMM_WORLD, &st);
    CHECK(token == (long)size * (size - 1) / 2);
    CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == 7);
  } else {
    MPI_Recv(&token, 1, MPI_LONG, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == 7);
    token += rank;
    MPI_Send(&token, 1, MPI_LONG, next, 7, MPI_COMM_WORLD);
  }
  /* Nobody sends anything else before every rank has its token: the wildcard receive above
     would match it (MPI allows that). */
  MPI_Barrier(MPI_COMM_WORLD);

  /* all to all, non-blocking */
  int out[64], in[64];
  MPI_Request reqs[128];
  CHECK(size <= 64);
  for (int r = 0; r < size; r++) {
    out[r] = rank * 100 + r;
    MPI_Irecv(&in[r], 1, MPI_INT, r, 3, MPI_COMM_WORLD, &reqs[r]);
  }
  for (int r = 0; r < size; r++) MPI_Isend(&out[r], 1, MPI_INT, r, 3, MPI_COMM_WORLD, &reqs[size + r]);
  MPI_Status sts[128];
  CHECK(MPI_Waitall(2 * size, reqs, sts) == MPI_SUCCESS);
  for (int r = 0; r < size; r++) {
    CHECK(in[r] == r * 100 + rank);
    CHECK(sts[r].MPI_SOURCE == r && sts[r].MPI_ERROR == MPI_SUCCESS);
    CHECK(reqs[r] == MPI_REQUEST_NULL);
  }

  /* Test until done, then Wait on the null request */
  double d = 0, dsend = rank + 0.5;
  MPI_Request rq;
  MPI_Irecv(&d, 1, MPI_DOUBLE, prev, 4, MPI_COMM_WORLD, &rq);
  MPI_Send(&dsend, 1, MPI_DOUBLE, next, 4, MPI_COMM_WORLD);
  int flag = 0;
  while (!flag) MPI_Test(&rq, &flag, &st);
  CHECK(rq == MPI_REQUEST_NULL && d == prev + 0.5);
  CHECK(MPI_Wait(&rq, &st) == MPI_SUCCESS && st.MPI_SOURCE == MPI_ANY_SOURCE);

  /* Sendrecv round the ring, and to PROC_NULL */
  int a = rank, b = -1;
  MPI_Sendrecv(&a, 1, MPI_INT, next, 5, &b, 1, MPI_INT, prev, 5, MPI_COMM_WORLD, &st);
  CHECK(b == prev);
  MPI_Sendrecv(&a, 1, MPI_INT, MPI_PROC_NULL, 5, &b, 1, MPI_INT, MPI_PROC_NULL, 5, MPI_COMM_WORLD, &st);
  CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG);

  /* Probe, Get_count, then receive */
  short sh[3] = {1, 2, 3}, rsh[8];
  MPI_Send(sh, 3, MPI_SHORT, next, 6, MPI_COMM_WORLD);
  MPI_Probe(prev, 6, MPI_COMM_WORLD, &st);
  int count = -1;
  MPI_Get_count(&st, MPI_SHORT, &count);
  CHECK(count == 3);
  MPI_Get_count(&st, MPI_INT, &count);
  CHECK(count == MPI_UNDEFINED);
  flag = 0;
  while (!flag) MPI_Iprobe(MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, &flag, &st);
  MPI_Recv(rsh, 8, MPI_SHORT, prev, 6, MPI_COMM_WORLD, &st);
  MPI_Get_count(&st, MPI_SHORT, &count);
  CHECK(count == 3 && rsh[2] == 3);

  /* split by parity, duplicate, free */
  MPI_Comm half, dup;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
  int hr, hs;
  MPI_Comm_rank(half, &hr);
  MPI_Comm_size(half, &hs);
  CHECK(hs == (size + 1 - rank % 2) / 2);
  CHECK(hr == hs - 1 - rank / 2); /* key -rank reverses the order */
  MPI_Comm_dup(half, &dup);
  int x = hr, y = -1;
  MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_MAX, dup);
  CHECK(y == hs - 1);
  MPI_Comm_free(&dup);
  MPI_Comm_free(&half);
  CHECK(half == MPI_COMM_NULL);
  MPI_Comm none;
  MPI_Comm_split(MPI_COMM_WORLD, MPI_UNDEFINED, 0, &none);
  CHECK(none == MPI_COMM_NULL);

  if (rank == 0) printf("ring: ok on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
