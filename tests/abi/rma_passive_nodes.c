/* Passive-target one-sided communication on a window whose processes run on two nodes.
   The target of another node's origin takes no part in the epoch: it serves the requests
   in whatever MPI call it is in (here MPI_Recv, MPI_Barrier, MPI_Win_lock of its own rank).
   Checked: lock/put/unlock while the target waits in MPI_Recv for a message the origin
   sends only after its unlock; exclusive locks from both nodes around a get-increment-put
   of one counter (no increment lost: the far and the direct locks exclude each other);
   MPI_Fetch_and_op tickets under shared locks (all distinct); a target that only locks its
   own rank in a loop still grants the other node's lock; MPI_Win_lock_all with puts to
   every rank, MPI_Win_flush and gets back; MPI_MODE_NOCHECK epochs (no lock travels); a
   lock and unlock with no operation; epochs of several messages (five 40 KiB puts, applied
   in order); a dynamic window; errors: an address the far target has not attached (its
   error comes back at the unlock), an unlock without a lock. Run on 2 nodes. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "nodes.h"

#define ITERS 20

static int rank, size;

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size >= 2 && size <= 16);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int last = size - 1;
  if (rank == 0) CHECK(!on_my_node(node, last));

  int *mem;
  MPI_Win win;
  MPI_Win_allocate(64 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
  for (int i = 0; i < 64; i++) mem[i] = -1;
  MPI_Barrier(MPI_COMM_WORLD);

  /* rank 0 writes into the last rank (another node) and only then tells it: the last rank
     is in MPI_Recv all the while, and the unlock must end anyway */
  if (rank == 0) {
    int vals[4] = {10, 11, 12, 13};
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, last, 0, win);
    MPI_Put(vals, 4, MPI_INT, last, 8, 4, MPI_INT, win);
    MPI_Win_unlock(last, win);
    MPI_Send(vals, 1, MPI_INT, last, 1, MPI_COMM_WORLD);
  } else if (rank == last) {
    int v;
    MPI_Recv(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Win_lock(MPI_LOCK_SHARED, last, 0, win);
    for (int i = 0; i < 4; i++) CHECK(mem[8 + i] == 10 + i);
    MPI_Win_unlock(last, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);

  /* a counter in rank 0 and one in the last rank, each incremented ITERS times by every
     rank with get, add, put under an exclusive lock */
  if (rank == 0 || rank == last) mem[0] = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  int targets[2] = {0, last};
  for (int i = 0; i < ITERS; i++) {
    for (int k = 0; k < 2; k++) {
      int t = targets[(k + rank) % 2], v = -7;
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win);
      MPI_Get(&v, 1, MPI_INT, t, 0, 1, MPI_INT, win);
      MPI_Win_flush(t, win);
      v += 1;
      MPI_Put(&v, 1, MPI_INT, t, 0, 1, MPI_INT, win);
      MPI_Win_unlock(t, win);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0 || rank == last) {
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    if (mem[0] != ITERS * size) fprintf(stderr, "rank %d: counter %d\n", rank, mem[0]);
    CHECK(mem[0] == ITERS * size);
    MPI_Win_unlock(rank, win);
  }

  /* tickets from fetch_and_op under shared locks: all distinct */
  if (rank == last) mem[1] = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  int tickets[ITERS], one = 1;
  for (int i = 0; i < ITERS; i++) {
    MPI_Win_lock(MPI_LOCK_SHARED, last, 0, win);
    MPI_Fetch_and_op(&one, &tickets[i], MPI_INT, last, 1, MPI_SUM, win);
    MPI_Win_unlock(last, win);
  }
  int all[16 * ITERS];
  MPI_Gather(tickets, ITERS, MPI_INT, all, ITERS, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    int seen[16 * ITERS] = {0};
    for (int i = 0; i < ITERS * size; i++) {
      CHECK(all[i] >= 0 && all[i] < ITERS * size);
      CHECK(!seen[all[i]]);
      seen[all[i]] = 1;
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);

  /* lock_all: each rank puts its rank into slot 16 + rank of every rank, flushes, reads the
     slot back, and the target sees every rank's value after the barrier */
  MPI_Win_lock_all(0, win);
  for (int t = 0; t < size; t++) MPI_Put(&rank, 1, MPI_INT, t, 16 + rank, 1, MPI_INT, win);
  MPI_Win_flush_all(win);
  for (int t = 0; t < size; t++) {
    int back = -1;
    MPI_Get(&back, 1, MPI_INT, t, 16 + rank, 1, MPI_INT, win);
    MPI_Win_flush(t, win);
    CHECK(back == rank);
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
  for (int r = 0; r < size; r++) CHECK(mem[16 + r] == r);
  MPI_Win_unlock(rank, win);

  /* rank 0 polls a flag in its own window under its own lock, a loop of calls that never
     wait; the last rank sets the flag under an exclusive lock, which rank 0 must grant */
  if (rank == 0) {
    mem[40] = 0;
    MPI_Send(&rank, 1, MPI_INT, last, 2, MPI_COMM_WORLD);
    for (int seen = 0; !seen;) {
      MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
      seen = mem[40] == 1;
      MPI_Win_unlock(0, win);
    }
  } else if (rank == last) {
    int v = 1;
    MPI_Recv(&v, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    v = 1;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    MPI_Put(&v, 1, MPI_INT, 0, 40, 1, MPI_INT, win);
    MPI_Win_unlock(0, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);

  /* MPI_MODE_NOCHECK (no lock travels): rank 0 writes slot 41 of the last rank, then every
     rank reads it in a lock_all epoch opened with the assertion */
  if (rank == 0) {
    int v = 4141;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, last, MPI_MODE_NOCHECK, win);
    MPI_Put(&v, 1, MPI_INT, last, 41, 1, MPI_INT, win);
    MPI_Win_unlock(last, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  {
    int v = -1;
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    MPI_Get(&v, 1, MPI_INT, last, 41, 1, MPI_INT, win);
    MPI_Win_unlock_all(win);
    CHECK(v == 4141);
  }
  MPI_Barrier(MPI_COMM_WORLD);

  /* a lock with no operation, while the target is in MPI_Barrier */
  if (rank == 0) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, last, 0, win);
    MPI_Win_unlock(last, win);
  }

  /* errors: an unlock without a lock */
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  int cls = -1;
  MPI_Error_class(MPI_Win_unlock(last, win), &cls);
  CHECK(cls == MPI_ERR_RMA_SYNC);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(MPI_Win_free(&win) == MPI_SUCCESS);

  /* large epochs: rank 0 puts five 40 KiB blocks under one lock (several messages, which the
     target must apply in order: the unlock travels in the last) and reads them back */
  {
    enum { CHUNK = 40 * 1024, CHUNKS = 5 };
    char *big, *src = malloc(CHUNK * CHUNKS), *dst = malloc(CHUNK * CHUNKS);
    MPI_Win bw;
    MPI_Win_allocate(CHUNK * CHUNKS, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &big, &bw);
    for (int i = 0; i < CHUNK * CHUNKS; i++) src[i] = (char)(i * 7 + 3), dst[i] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      /* one 64 KiB put travels at once (a rendezvous), the unlock after it in a small
         message that is complete first: the target must still apply it second */
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, last, 0, bw);
      MPI_Put(src, 64 * 1024, MPI_CHAR, last, 0, 64 * 1024, MPI_CHAR, bw);
      MPI_Win_unlock(last, bw);
      for (int round = 0; round < 2; round++) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, last, 0, bw);
        for (int c = 0; c < CHUNKS; c++)
          MPI_Put(src + c * CHUNK, CHUNK, MPI_CHAR, last, c * CHUNK, CHUNK, MPI_CHAR, bw);
        MPI_Win_unlock(last, bw);
      }
      MPI_Win_lock(MPI_LOCK_SHARED, last, 0, bw);
      for (int c = 0; c < CHUNKS; c++)
        MPI_Get(dst + c * CHUNK, CHUNK, MPI_CHAR, last, c * CHUNK, CHUNK, MPI_CHAR, bw);
      MPI_Win_unlock(last, bw);
      CHECK(memcmp(src, dst, CHUNK * CHUNKS) == 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == last) CHECK(memcmp(src, big, CHUNK * CHUNKS) == 0);
    MPI_Win_free(&bw);
    free(src);
    free(dst);
  }

  /* a dynamic window: rank 0 writes into the last rank's attached region under a lock;
     an address the last rank has not attached fails at the unlock */
  MPI_Win dyn;
  MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn);
  MPI_Win_set_errhandler(dyn, MPI_ERRORS_RETURN);
  int region[8] = {0};
  MPI_Win_attach(dyn, region, sizeof region);
  MPI_Aint addr, addrs[16];
  MPI_Get_address(region, &addr);
  MPI_Allgather(&addr, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
  if (rank == 0) {
    int v = 77;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, last, 0, dyn);
    MPI_Put(&v, 1, MPI_INT, last, addrs[last] + 3 * sizeof(int), 1, MPI_INT, dyn);
    CHECK(MPI_Win_unlock(last, dyn) == MPI_SUCCESS);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, last, 0, dyn);
    MPI_Put(&v, 1, MPI_INT, last, addrs[last] + (1 << 20), 1, MPI_INT, dyn);
    MPI_Error_class(MPI_Win_unlock(last, dyn), &cls);
    CHECK(cls == MPI_ERR_RMA_RANGE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == last) CHECK(region[3] == 77);
  MPI_Win_detach(dyn, region);
  CHECK(MPI_Win_free(&dyn) == MPI_SUCCESS);

  MPI_Comm_free(&node);
  if (rank == 0) printf("rma_passive_nodes: ok on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
