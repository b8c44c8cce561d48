/* Arguments that MPI says are not significant may be anything: the receive side of a gather
   away from its root, the send side of a scatter, the root group's sides on an
   intercommunicator, and the datatype of an empty block of Alltoallw. Non-roots pass NULL,
   0 and MPI_DATATYPE_NULL here (as many programs do); every call must succeed and the root
   get its data. Three or more ranks. */
#include <mpi.h>
#include "check.h"

#define N 16

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size >= 3 && size <= N);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const MPI_Datatype null = MPI_DATATYPE_NULL;
  int root = size - 1, me = 100 + rank, all[N], counts[N], displs[N], got;
  for (int i = 0; i < size; i++) {
    counts[i] = 1;
    displs[i] = size - 1 - i;
  }
  int at_root = rank == root;

  /* Gather, Gatherv, Igather, Gather_init */
  for (int form = 0; form < 4; form++) {
    for (int i = 0; i < N; i++) all[i] = -1;
    int *rb = at_root ? all : NULL, rc = at_root ? 1 : 0;
    MPI_Datatype rt = at_root ? MPI_INT : null;
    MPI_Request r;
    switch (form) {
    case 0:
      CHECK(MPI_Gather(&me, 1, MPI_INT, rb, rc, rt, root, MPI_COMM_WORLD) == MPI_SUCCESS);
      break;
    case 1:
      CHECK(MPI_Gatherv(&me, 1, MPI_INT, rb, at_root ? counts : NULL, at_root ? displs : NULL,
                        rt, root, MPI_COMM_WORLD) == MPI_SUCCESS);
      break;
    case 2:
      CHECK(MPI_Igather(&me, 1, MPI_INT, rb, rc, rt, root, MPI_COMM_WORLD, &r) == MPI_SUCCESS);
      CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
      break;
    case 3:
      CHECK(MPI_Gather_init(&me, 1, MPI_INT, rb, rc, rt, root, MPI_COMM_WORLD, MPI_INFO_NULL,
                            &r) == MPI_SUCCESS);
      for (int k = 0; k < 2; k++) {
        CHECK(MPI_Start(&r) == MPI_SUCCESS);
        CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
      }
      MPI_Request_free(&r);
      break;
    }
    if (at_root)
      for (int i = 0; i < size; i++)
        CHECK(all[form == 1 ? displs[i] : i] == 100 + i);
  }

  /* Scatter, Scatterv, Iscatter */
  for (int i = 0; i < size; i++) all[i] = 200 + i;
  for (int form = 0; form < 3; form++) {
    got = -1;
    int *sb = at_root ? all : NULL, sc = at_root ? 1 : 0;
    MPI_Datatype stt = at_root ? MPI_INT : null;
    MPI_Request r;
    if (form == 0)
      CHECK(MPI_Scatter(sb, sc, stt, &got, 1, MPI_INT, root, MPI_COMM_WORLD) == MPI_SUCCESS);
    if (form == 1)
      CHECK(MPI_Scatterv(sb, at_root ? counts : NULL, at_root ? displs : NULL, stt, &got, 1,
                         MPI_INT, root, MPI_COMM_WORLD) == MPI_SUCCESS);
    if (form == 2) {
      CHECK(MPI_Iscatter(sb, sc, stt, &got, 1, MPI_INT, root, MPI_COMM_WORLD, &r) ==
            MPI_SUCCESS);
      CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    }
    CHECK(got == 200 + (form == 1 ? displs[rank] : rank));
  }

  /* Intercommunicator: group A (ranks 0, 1) gathers from group B (the others) at A's rank
     0; A's rank 1 takes no part (MPI_PROC_NULL). Only B's send and the root's receive
     arguments are significant. */
  MPI_Comm local, inter;
  int in_a = rank < 2;
  MPI_Comm_split(MPI_COMM_WORLD, in_a, rank, &local);
  MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, in_a ? 2 : 0, 7, &inter);
  MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
  int remote;
  MPI_Comm_remote_size(inter, &remote);
  for (int i = 0; i < N; i++) all[i] = -1;
  if (rank == 0) {
    CHECK(MPI_Gather(NULL, 0, null, all, 1, MPI_INT, MPI_ROOT, inter) == MPI_SUCCESS);
    for (int i = 0; i < remote; i++) CHECK(all[i] == 102 + i);
  } else if (rank == 1) {
    CHECK(MPI_Gather(NULL, 0, null, NULL, 0, null, MPI_PROC_NULL, inter) == MPI_SUCCESS);
  } else {
    CHECK(MPI_Gather(&me, 1, MPI_INT, NULL, 0, null, 0, inter) == MPI_SUCCESS);
  }
  /* and scatters back: B's receive and the root's send arguments are significant */
  got = -1;
  if (rank == 0) {
    for (int i = 0; i < remote; i++) all[i] = 300 + i;
    CHECK(MPI_Scatter(all, 1, MPI_INT, NULL, 0, null, MPI_ROOT, inter) == MPI_SUCCESS);
  } else if (rank == 1) {
    CHECK(MPI_Scatter(NULL, 0, null, NULL, 0, null, MPI_PROC_NULL, inter) == MPI_SUCCESS);
  } else {
    CHECK(MPI_Scatter(NULL, 0, null, &got, 1, MPI_INT, 0, inter) == MPI_SUCCESS);
    CHECK(got == 300 + rank - 2);
  }
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);

  /* Alltoallw where only the next rank gets a block: the empty blocks' types are NULL */
  int sc[N] = {0}, sd[N] = {0}, rcnt[N] = {0}, rd[N] = {0};
  MPI_Datatype st[N], rt[N];
  for (int i = 0; i < size; i++) st[i] = rt[i] = null;
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  sc[next] = 1;
  st[next] = MPI_INT;
  rcnt[prev] = 1;
  rt[prev] = MPI_INT;
  got = -1;
  CHECK(MPI_Alltoallw(&me, sc, sd, st, &got, rcnt, rd, rt, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(got == 100 + prev);

  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    printf("coll_ignored: ok\n");
  MPI_Finalize();
  return 0;
}
