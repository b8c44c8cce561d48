/* Generalized requests as a program uses them for work of its own: completed by the same
   thread before MPI_Wait, by a worker thread while MPI_Wait waits, polled with MPI_Test,
   mixed with a receive in MPI_Waitall, freed before completion, and cancelled. The query
   function's status (source, tag, elements) is what MPI_Wait returns; free_fn runs once. */
#include <mpi.h>
#include <pthread.h>
#include <unistd.h>
#include "check.h"

struct op {
  int queried, freed, cancelled_with, value;
  MPI_Request req;
};

static int query(void *extra, MPI_Status *st) {
  struct op *o = extra;
  o->queried++;
  MPI_Status_set_elements(st, MPI_INT, 3);
  MPI_Status_set_cancelled(st, o->cancelled_with >= 0);
  st->MPI_SOURCE = 7;
  st->MPI_TAG = 99;
  return MPI_SUCCESS;
}

static int release(void *extra) {
  ((struct op *)extra)->freed++;
  return MPI_SUCCESS;
}

static int cancel(void *extra, int complete) {
  ((struct op *)extra)->cancelled_with = complete;
  return MPI_SUCCESS;
}

static void start(struct op *o) {
  o->queried = o->freed = o->value = 0;
  o->cancelled_with = -1;
  CHECK(MPI_Grequest_start(query, release, cancel, o, &o->req) == MPI_SUCCESS);
  CHECK(o->req != MPI_REQUEST_NULL);
}

static void *worker(void *arg) {
  struct op *o = arg;
  usleep(20000);
  o->value = 42;
  MPI_Grequest_complete(o->req);
  return NULL;
}

int main(int argc, char **argv) {
  int rank, size, provided, n, flag;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  struct op o;
  MPI_Status st;

  /* completed before the wait */
  start(&o);
  CHECK(MPI_Grequest_complete(o.req) == MPI_SUCCESS);
  CHECK(MPI_Wait(&o.req, &st) == MPI_SUCCESS);
  CHECK(o.req == MPI_REQUEST_NULL && o.queried == 1 && o.freed == 1);
  MPI_Get_count(&st, MPI_INT, &n);
  CHECK(n == 3 && st.MPI_SOURCE == 7 && st.MPI_TAG == 99);
  MPI_Test_cancelled(&st, &flag);
  CHECK(!flag);

  /* completed by another thread while MPI_Wait waits */
  start(&o);
  pthread_t t;
  pthread_create(&t, NULL, worker, &o);
  CHECK(MPI_Wait(&o.req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(o.value == 42 && o.freed == 1);
  pthread_join(t, NULL);

  /* polled: not done until completed */
  start(&o);
  CHECK(MPI_Test(&o.req, &flag, &st) == MPI_SUCCESS && !flag && o.queried == 0);
  MPI_Grequest_complete(o.req);
  CHECK(MPI_Test(&o.req, &flag, &st) == MPI_SUCCESS && flag && o.freed == 1);
  CHECK(o.req == MPI_REQUEST_NULL);

  /* with a receive in MPI_Waitall */
  start(&o);
  MPI_Request two[2];
  int got = -1, mine = rank, right = (rank + 1) % size, left = (rank + size - 1) % size;
  two[0] = o.req;
  MPI_Irecv(&got, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &two[1]);
  MPI_Send(&mine, 1, MPI_INT, right, 5, MPI_COMM_WORLD);
  MPI_Grequest_complete(o.req);
  CHECK(MPI_Waitall(2, two, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  CHECK(got == left && o.freed == 1 && two[0] == MPI_REQUEST_NULL);

  /* freed before completion: free_fn runs at MPI_Grequest_complete */
  start(&o);
  MPI_Request keep = o.req;
  CHECK(MPI_Request_free(&o.req) == MPI_SUCCESS && o.req == MPI_REQUEST_NULL);
  CHECK(o.freed == 0);
  CHECK(MPI_Grequest_complete(keep) == MPI_SUCCESS && o.freed == 1 && o.queried == 0);

  /* cancelled: cancel_fn is told it has not completed; the status says cancelled */
  start(&o);
  CHECK(MPI_Cancel(&o.req) == MPI_SUCCESS && o.cancelled_with == 0);
  MPI_Grequest_complete(o.req);
  CHECK(MPI_Wait(&o.req, &st) == MPI_SUCCESS);
  MPI_Test_cancelled(&st, &flag);
  CHECK(flag && o.freed == 1);

  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("grequest: ok on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
