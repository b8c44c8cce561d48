/* One-sided communication as programs use it: a ring of puts and gets between fences, a sum
   by accumulate, a ticket counter by fetch-and-op and a flag by compare-and-swap under
   passive-target locks, shared memory read by load through MPI_Win_shared_query, a
   post/start/complete/wait epoch, a strided (vector) target type, the request forms and the
   window's attributes, and the datatypes the atomics refuse. Needs at least 2 ranks. */
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"

#define N 16

static int win_deleted = 0;
static int count_delete(MPI_Win win, int key, void *val, void *extra) {
  (void)win;
  (void)key;
  (void)extra;
  CHECK(*(int *)val == 42);
  win_deleted++;
  return MPI_SUCCESS;
}

static void active_target(int rank, int size) {
  int local[N], left = (rank + size - 1) % size, right = (rank + 1) % size;
  for (int i = 0; i < N; i++) local[i] = -1;
  local[N - 1] = 0;
  MPI_Win win;
  CHECK(MPI_Win_create(local, sizeof local, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win) ==
        MPI_SUCCESS);

  void *base;
  MPI_Aint *wsize;
  int *unit, *flavor, *model, flag;
  MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag);
  CHECK(flag && base == local);
  MPI_Win_get_attr(win, MPI_WIN_SIZE, &wsize, &flag);
  CHECK(flag && *wsize == (MPI_Aint)sizeof local);
  MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unit, &flag);
  CHECK(flag && *unit == (int)sizeof(int));
  MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
  CHECK(flag && *flavor == MPI_WIN_FLAVOR_CREATE);
  MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag);
  CHECK(flag && *model == MPI_WIN_UNIFIED);
  MPI_Group g;
  int gsize;
  MPI_Win_get_group(win, &g);
  MPI_Group_size(g, &gsize);
  CHECK(gsize == size);
  MPI_Group_free(&g);

  /* an attribute of the program's own: set, read, replaced (deleted), deleted by free */
  static int answer = 42;
  int key, *got_attr;
  CHECK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, count_delete, &key, NULL) == MPI_SUCCESS);
  CHECK(MPI_Win_set_attr(win, key, &answer) == MPI_SUCCESS);
  CHECK(MPI_Win_get_attr(win, key, &got_attr, &flag) == MPI_SUCCESS && flag && *got_attr == 42);
  CHECK(MPI_Win_set_attr(win, key, &answer) == MPI_SUCCESS && win_deleted == 1);
  CHECK(MPI_Win_delete_attr(win, key) == MPI_SUCCESS && win_deleted == 2);
  CHECK(MPI_Win_get_attr(win, key, &got_attr, &flag) == MPI_SUCCESS && !flag);
  CHECK(MPI_Win_set_attr(win, key, &answer) == MPI_SUCCESS);

  /* a ring of puts: my rank into slot `rank` of my right neighbour */
  MPI_Win_fence(0, win);
  MPI_Put(&rank, 1, MPI_INT, right, rank, 1, MPI_INT, win);
  MPI_Win_fence(0, win);
  CHECK(local[left] == left);

  /* a get of the left neighbour's slot it received from its own left */
  int got = -5, ll = (left + size - 1) % size;
  MPI_Get(&got, 1, MPI_INT, left, ll, 1, MPI_INT, win);
  /* everyone adds its rank + 1 into rank 0's last slot */
  int mine = rank + 1;
  MPI_Accumulate(&mine, 1, MPI_INT, 0, N - 1, 1, MPI_INT, MPI_SUM, win);
  MPI_Win_fence(0, win);
  CHECK(got == ll);
  if (rank == 0) CHECK(local[N - 1] == size * (size + 1) / 2);

  /* a request-based put, then read back with an atomic get (NO_OP) */
  MPI_Request req;
  int seven = 7, back = 0;
  MPI_Rput(&seven, 1, MPI_INT, right, N - 2, 1, MPI_INT, win, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  MPI_Win_fence(0, win);
  CHECK(local[N - 2] == 7);
  MPI_Get_accumulate(NULL, 0, MPI_INT, &back, 1, MPI_INT, right, N - 2, 1, MPI_INT, MPI_NO_OP,
                     win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  CHECK(back == 7);
  MPI_Win_free(&win);
  CHECK(win == MPI_WIN_NULL && win_deleted == 3);
  MPI_Win_free_keyval(&key);
  CHECK(key == MPI_KEYVAL_INVALID);
}

static void passive_target(int rank, int size) {
  int64_t *mem;
  MPI_Win win;
  CHECK(MPI_Win_allocate(4 * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD,
                         &mem, &win) == MPI_SUCCESS);
  int *flavor, flag;
  MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
  CHECK(flag && *flavor == MPI_WIN_FLAVOR_ALLOCATE);
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
  memset(mem, 0, 4 * sizeof(int64_t));
  MPI_Win_unlock(rank, win);
  MPI_Barrier(MPI_COMM_WORLD);

  /* a ticket counter at rank 0: every rank draws a different ticket */
  int64_t one = 1, ticket = -1;
  MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
  MPI_Fetch_and_op(&one, &ticket, MPI_INT64_T, 0, 0, MPI_SUM, win);
  MPI_Win_unlock(0, win);
  int64_t all[64];
  MPI_Allgather(&ticket, 1, MPI_INT64_T, all, 1, MPI_INT64_T, MPI_COMM_WORLD);
  int64_t seen = 0;
  for (int i = 0; i < size; i++) {
    CHECK(all[i] >= 0 && all[i] < size);
    seen |= (int64_t)1 << all[i];
  }
  CHECK(seen == ((int64_t)1 << size) - 1);

  /* a flag at rank 0 set once: exactly one compare-and-swap wins */
  int64_t zero = 0, me = rank + 1, was = -1;
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
  MPI_Compare_and_swap(&me, &zero, &was, MPI_INT64_T, 0, 1, win);
  MPI_Win_unlock(0, win);
  int won = was == 0, winners = 0;
  MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(winners == 1);

  /* lock_all, read the counter everywhere, flush */
  int64_t count = -1;
  MPI_Win_lock_all(0, win);
  MPI_Get(&count, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, win);
  MPI_Win_flush(0, win);
  CHECK(count == size);
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
}

/* Accumulates from every rank at once on one counter lose nothing (each read-modify-write
   holds the target's mutex), and an exclusive lock keeps a reader out until the writer's
   epoch ends: the reader sees only the final value. */
static void exclusion(int rank, int size) {
  int64_t *mem;
  MPI_Win win;
  MPI_Win_allocate(2 * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
  mem[0] = mem[1] = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  int64_t one = 1, old;
  MPI_Win_lock_all(0, win);
  for (int i = 0; i < 20; i++) MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 0, 0, MPI_SUM, win);
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) CHECK(mem[0] == 20 * size);

  int64_t v1 = 1, v2 = 2, seen = -1;
  if (rank == 0) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    MPI_Put(&v1, 1, MPI_INT64_T, 0, 1, 1, MPI_INT64_T, win);
    MPI_Send(NULL, 0, MPI_BYTE, 1, 9, MPI_COMM_WORLD);
    usleep(50000);
    MPI_Put(&v2, 1, MPI_INT64_T, 0, 1, 1, MPI_INT64_T, win);
    MPI_Win_unlock(0, win);
  } else if (rank == 1) {
    MPI_Recv(NULL, 0, MPI_BYTE, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    MPI_Get(&seen, 1, MPI_INT64_T, 0, 1, 1, MPI_INT64_T, win);
    MPI_Win_unlock(0, win);
    CHECK(seen == 2);
  }
  MPI_Win_free(&win);
}

static void shared_memory(int rank, int size) {
  int *mine;
  MPI_Win win;
  CHECK(MPI_Win_allocate_shared(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mine,
                                &win) == MPI_SUCCESS);
  MPI_Win_lock_all(0, win);
  for (int i = 0; i < 4; i++) mine[i] = rank * 100 + i;
  MPI_Win_sync(win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_sync(win);
  int right = (rank + 1) % size, *theirs, unit;
  MPI_Aint sz;
  MPI_Win_shared_query(win, right, &sz, &unit, &theirs);
  CHECK(sz == 4 * (MPI_Aint)sizeof(int) && unit == (int)sizeof(int));
  for (int i = 0; i < 4; i++) CHECK(theirs[i] == right * 100 + i);
  /* the memory of consecutive ranks is contiguous (MPI's default) */
  int *first;
  MPI_Win_shared_query(win, 0, &sz, &unit, &first);
  CHECK(first + 4 * rank == mine);
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
}

static void general_active_target(int rank, int size) {
  int slots[64] = {0};
  MPI_Win win;
  MPI_Win_create(slots, sizeof slots, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Group world, zero, others;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int r0 = 0;
  MPI_Group_incl(world, 1, &r0, &zero);
  MPI_Group_excl(world, 1, &r0, &others);
  if (rank == 0) {
    MPI_Win_post(others, 0, win);
    MPI_Win_wait(win);
    for (int r = 1; r < size; r++) CHECK(slots[r] == r * 10);
  } else {
    int v = rank * 10;
    MPI_Win_start(zero, 0, win);
    MPI_Put(&v, 1, MPI_INT, 0, rank, 1, MPI_INT, win);
    MPI_Win_complete(win);
  }
  MPI_Group_free(&world);
  MPI_Group_free(&zero);
  MPI_Group_free(&others);
  MPI_Win_free(&win);
}

static void strided_target(int rank, int size) {
  double m[16], col[4] = {1, 2, 3, 4};
  for (int i = 0; i < 16; i++) m[i] = 0;
  MPI_Win win;
  MPI_Win_create(m, sizeof m, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Datatype column;
  MPI_Type_vector(4, 1, 4, MPI_DOUBLE, &column);
  MPI_Type_commit(&column);
  MPI_Win_fence(0, win);
  /* column 2 of the right neighbour's 4x4 matrix */
  MPI_Put(col, 4, MPI_DOUBLE, (rank + 1) % size, 2, 1, column, win);
  MPI_Win_fence(0, win);
  for (int i = 0; i < 16; i++) CHECK(m[i] == (i % 4 == 2 ? 1 + i / 4 : 0));
  double back[4] = {0};
  MPI_Get(back, 4, MPI_DOUBLE, (rank + 1) % size, 2, 1, column, win);
  MPI_Win_fence(0, win);
  for (int i = 0; i < 4; i++) CHECK(back[i] == col[i]);
  MPI_Type_free(&column);
  MPI_Win_free(&win);
}

/* A dynamic window: each rank attaches a buffer and publishes its address; the left
   neighbour puts into it by that address. */
static void dynamic_window(int rank, int size) {
  MPI_Win win;
  CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win) == MPI_SUCCESS);
  int *flavor, flag;
  MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
  CHECK(flag && *flavor == MPI_WIN_FLAVOR_DYNAMIC);
  int64_t *region = calloc(8, sizeof(int64_t));
  CHECK(MPI_Win_attach(win, region, 8 * sizeof(int64_t)) == MPI_SUCCESS);
  MPI_Aint mine, addrs[64];
  MPI_Get_address(region, &mine);
  MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int64_t v = 1000 + rank;
  MPI_Win_lock_all(0, win);
  MPI_Put(&v, 1, MPI_INT64_T, right, addrs[right] + 3 * (MPI_Aint)sizeof(int64_t), 1,
          MPI_INT64_T, win);
  MPI_Win_flush_all(win);
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(region[3] == 1000 + left);
  CHECK(MPI_Win_detach(win, region) == MPI_SUCCESS);
  MPI_Win_free(&win);
  free(region);
}

/* Small accumulates (a few elements of one predefined type) are done in place on memory
   this process maps, larger ones and derived types by the general path: both give MPI's
   results and stay atomic with each other on one element. */
static void small_accumulates(int rank, int size) {
  int *mem;
  MPI_Win win;
  CHECK(MPI_Win_allocate(32 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                         &win) == MPI_SUCCESS);
  for (int i = 0; i < 32; i++) mem[i] = 0;
  MPI_Datatype one_int;
  MPI_Type_contiguous(1, MPI_INT, &one_int);
  MPI_Type_commit(&one_int);
  MPI_Barrier(MPI_COMM_WORLD);
  int v[20], ones[20], got = -1, was = -1, next = rank + 1;
  for (int i = 0; i < 20; i++) v[i] = rank + i, ones[i] = 1;
  MPI_Win_lock_all(0, win);
  MPI_Accumulate(v, 4, MPI_INT, 0, 0, 4, MPI_INT, MPI_MAX, win);
  MPI_Accumulate(ones, 20, MPI_INT, 0, 4, 20, MPI_INT, MPI_SUM, win);
  MPI_Get_accumulate(ones, 1, MPI_INT, &got, 1, MPI_INT, 0, 24, 1, MPI_INT, MPI_SUM, win);
  MPI_Fetch_and_op(&next, &was, MPI_INT, 0, 25, MPI_REPLACE, win);
  for (int i = 0; i < 10; i++) {
    MPI_Accumulate(ones, 1, MPI_INT, 0, 26, 1, MPI_INT, MPI_SUM, win);
    MPI_Accumulate(ones, 1, one_int, 0, 26, 1, one_int, MPI_SUM, win);
  }
  MPI_Win_unlock_all(win);
  int gots[64], wases[64];
  MPI_Gather(&got, 1, MPI_INT, gots, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Gather(&was, 1, MPI_INT, wases, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    for (int i = 0; i < 4; i++) CHECK(mem[i] == size - 1 + i);
    for (int i = 4; i < 24; i++) CHECK(mem[i] == size);
    CHECK(mem[24] == size && mem[26] == 20 * size);
    /* each fetch saw a different count before its own; the replaces form one chain */
    int64_t seen = 0, chain = (int64_t)1 << mem[25];
    for (int r = 0; r < size; r++) {
      CHECK(gots[r] >= 0 && gots[r] < size);
      seen |= (int64_t)1 << gots[r];
      chain |= (int64_t)1 << wases[r];
    }
    CHECK(seen == ((int64_t)1 << size) - 1);
    CHECK(chain == ((int64_t)1 << (size + 1)) - 1);
  }
  MPI_Type_free(&one_int);
  MPI_Win_free(&win);
}

/* Datatypes the one-sided atomics do not take are refused with MPI_ERR_TYPE, and the target
   memory is left alone: a derived type in MPI_Fetch_and_op, a floating type in
   MPI_Compare_and_swap, an accumulate whose origin and target types differ. A fence's assert
   with a bit that is not one of its modes is refused with MPI_ERR_ARG. */
static void refused_types(int rank) {
  long long *mem;
  MPI_Win win;
  MPI_Win_allocate(2 * sizeof(long long), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  mem[0] = mem[1] = 0;
  MPI_Datatype two;
  MPI_Type_contiguous(2, MPI_INT, &two);
  MPI_Type_commit(&two);
  int fence_cls = -1;
  MPI_Error_class(MPI_Win_fence(1, win), &fence_cls); /* not an MPI_MODE_* bit of a fence */
  CHECK(fence_cls == MPI_ERR_ARG);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) {
    int in[2] = {1, 2}, got[2], cls = -1;
    double d = 2.5, dold = 0, dres;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    MPI_Error_class(MPI_Fetch_and_op(in, got, two, 0, 0, MPI_SUM, win), &cls);
    CHECK(cls == MPI_ERR_TYPE);
    MPI_Error_class(MPI_Compare_and_swap(&d, &dold, &dres, MPI_DOUBLE, 0, 0, win), &cls);
    CHECK(cls == MPI_ERR_TYPE);
    MPI_Error_class(MPI_Accumulate(&d, 1, MPI_DOUBLE, 0, 8, 1, MPI_LONG_LONG, MPI_SUM, win),
                    &cls);
    CHECK(cls == MPI_ERR_TYPE);
    /* To MPI_PROC_NULL nothing happens, whatever the datatypes (mpi4py's tests do this). */
    unsigned char bytes[8];
    CHECK(MPI_Get_accumulate(in, 2, MPI_INT, bytes, 8, MPI_BYTE, MPI_PROC_NULL, 0, 2, MPI_INT,
                             MPI_SUM, win) == MPI_SUCCESS);
    MPI_Win_unlock(0, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) CHECK(mem[0] == 0 && mem[1] == 0);
  MPI_Type_free(&two);
  MPI_Win_free(&win);
}

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size >= 2 && size <= 64);
  active_target(rank, size);
  passive_target(rank, size);
  exclusion(rank, size);
  small_accumulates(rank, size);
  shared_memory(rank, size);
  general_active_target(rank, size);
  strided_target(rank, size);
  dynamic_window(rank, size);
  refused_types(rank);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("rma: ok on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
