/* Partitioned communication (MPI 4) as a halo exchange with threads would use it, here
   from one thread: rank 0 sends 4 partitions of 8 ints to rank 1, three rounds of
   MPI_Start; partitions are marked ready out of order (MPI_Pready, _range, _list), the
   receiver polls MPI_Parrived, then both wait. The send does not complete before its last
   partition is ready. Then matching: partitioned calls match in the order of their init
   calls and never an ordinary message with the same tag, whatever order the data leaves in. */
#include <mpi.h>
#include "check.h"

#define PARTS 4
#define COUNT 8

/* Rank 0 inits sends A then B to rank 1 (same tag), readies B first, then A, then sends an
   ordinary message with the same tag. Rank 1 receives the ordinary message first, then its
   receives X and Y (inited in that order): X gets A, Y gets B. */
static void matching(int rank) {
  enum { N = 8, TAG = 5 };
  int a[N], b[N], plain[N];
  MPI_Request r[2];
  if (rank == 0) {
    for (int i = 0; i < N; i++) a[i] = 100 + i, b[i] = 200 + i, plain[i] = 300 + i;
    CHECK(MPI_Psend_init(a, 2, N / 2, MPI_INT, 1, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]) ==
          MPI_SUCCESS);
    CHECK(MPI_Psend_init(b, 2, N / 2, MPI_INT, 1, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]) ==
          MPI_SUCCESS);
    CHECK(MPI_Start(&r[1]) == MPI_SUCCESS && MPI_Pready_range(0, 1, r[1]) == MPI_SUCCESS);
    CHECK(MPI_Start(&r[0]) == MPI_SUCCESS && MPI_Pready_range(0, 1, r[0]) == MPI_SUCCESS);
    CHECK(MPI_Send(plain, N, MPI_INT, 1, TAG, MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  } else if (rank == 1) {
    for (int i = 0; i < N; i++) a[i] = b[i] = plain[i] = -1;
    CHECK(MPI_Recv(plain, N, MPI_INT, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(MPI_Precv_init(a, 2, N / 2, MPI_INT, 0, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]) ==
          MPI_SUCCESS);
    CHECK(MPI_Precv_init(b, 2, N / 2, MPI_INT, 0, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]) ==
          MPI_SUCCESS);
    CHECK(MPI_Startall(2, r) == MPI_SUCCESS);
    CHECK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    for (int i = 0; i < N; i++) CHECK(plain[i] == 300 + i);
    for (int i = 0; i < N; i++) CHECK(a[i] == 100 + i && b[i] == 200 + i);
  }
  if (rank <= 1) {
    CHECK(MPI_Request_free(&r[0]) == MPI_SUCCESS && MPI_Request_free(&r[1]) == MPI_SUCCESS);
  }
}

int main(int argc, char **argv) {
  int rank, size, flag;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size >= 2);
  int buf[PARTS * COUNT];
  MPI_Request req = MPI_REQUEST_NULL;
  if (rank == 0)
    CHECK(MPI_Psend_init(buf, PARTS, COUNT, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_INFO_NULL,
                         &req) == MPI_SUCCESS);
  else if (rank == 1)
    CHECK(MPI_Precv_init(buf, PARTS, COUNT, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_INFO_NULL,
                         &req) == MPI_SUCCESS);
  for (int round = 0; round < 3; round++) {
    if (rank == 0) {
      CHECK(MPI_Start(&req) == MPI_SUCCESS);
      for (int p = PARTS - 1; p >= 0; p--) {
        for (int i = 0; i < COUNT; i++) buf[p * COUNT + i] = round * 1000 + p * COUNT + i;
        if (p == PARTS - 1) {
          CHECK(MPI_Pready(p, req) == MPI_SUCCESS);
          CHECK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && !flag);
        } else if (p == 2) {
          CHECK(MPI_Pready_range(2, 2, req) == MPI_SUCCESS);
        }
      }
      int rest[2] = {1, 0};
      CHECK(MPI_Pready_list(2, rest, req) == MPI_SUCCESS);
      CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
      CHECK(req != MPI_REQUEST_NULL); /* persistent */
    } else if (rank == 1) {
      for (int i = 0; i < PARTS * COUNT; i++) buf[i] = -1;
      CHECK(MPI_Start(&req) == MPI_SUCCESS);
      flag = 0;
      while (!flag) CHECK(MPI_Parrived(req, PARTS - 1, &flag) == MPI_SUCCESS);
      MPI_Status st;
      CHECK(MPI_Wait(&req, &st) == MPI_SUCCESS);
      for (int i = 0; i < PARTS * COUNT; i++) CHECK(buf[i] == round * 1000 + i);
      int n;
      MPI_Get_count(&st, MPI_INT, &n);
      CHECK(n == PARTS * COUNT && st.MPI_SOURCE == 0 && st.MPI_TAG == 3);
    }
  }
  if (req != MPI_REQUEST_NULL) MPI_Request_free(&req);
  matching(rank);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("partitioned: ok on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
