/* One-sided communication on a window whose processes run on two nodes, in active-target
   epochs (passive-target ones: rma_passive_nodes.c). Operations on a target of the other
   node travel as messages and complete at the end of the epoch (MPI_Win_fence,
   MPI_Win_complete); the target serves them in whatever MPI call it is in. Checked: put,
   get, accumulate (also with a derived target datatype, and with derived types of double
   complex and long double), get_accumulate, fetch_and_op tickets and compare_and_swap against the same counter from both nodes
   (atomic together with this node's direct accesses), Rget, MPI_Win_create,
   MPI_Win_allocate and dynamic windows, post/start/complete/wait, an epoch whose target
   blocks in MPI_Recv for a message the origin sends after its operations (the operations
   may not wait for the target), errors: a range outside the far target's memory
   (MPI_ERR_RMA_RANGE, reported at the fence), a shared window across nodes (refused by
   name), and the usual remedy, a window per node. Run on 2 nodes. */
#include <mpi.h>
#include <complex.h>
#include <stddef.h>
#include <string.h>
#include "check.h"
#include "nodes.h"

static int rank, size;

/* Accumulates with derived datatypes of types that have no integer or real element kind (a
   pair of double complex, a pair of long double) into the next rank, which may be on the
   other node: the sum of every rank's contribution arrives. */
static void accumulate_derived_complex(void) {
  MPI_Datatype two_z, two_ld;
  MPI_Type_contiguous(2, MPI_C_DOUBLE_COMPLEX, &two_z);
  MPI_Type_commit(&two_z);
  MPI_Type_contiguous(2, MPI_LONG_DOUBLE, &two_ld);
  MPI_Type_commit(&two_ld);
  struct { double complex z[2]; long double ld[2]; } *mem;
  MPI_Win win;
  CHECK(MPI_Win_allocate(sizeof *mem, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win) ==
        MPI_SUCCESS);
  mem->z[0] = 1, mem->z[1] = 2 * I, mem->ld[0] = 1, mem->ld[1] = 2;
  double complex z[2] = {rank + 1 + I, 3 - rank * I};
  long double ld[2] = {0.5L * rank, 1.0L / (1ULL << 60)};
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  MPI_Win_fence(0, win);
  CHECK(MPI_Accumulate(z, 1, two_z, next, 0, 1, two_z, MPI_SUM, win) == MPI_SUCCESS);
  CHECK(MPI_Accumulate(ld, 1, two_ld, next, offsetof(__typeof__(*mem), ld), 1, two_ld, MPI_SUM,
                       win) == MPI_SUCCESS);
  MPI_Win_fence(0, win);
  CHECK(mem->z[0] == 2 + prev + I && mem->z[1] == 3 + (2 - prev) * I);
  CHECK(mem->ld[0] == 1 + 0.5L * prev && mem->ld[1] == 2 + 1.0L / (1ULL << 60));
  CHECK(MPI_Win_free(&win) == MPI_SUCCESS);
  MPI_Type_free(&two_z);
  MPI_Type_free(&two_ld);
}

static void put_get_acc(MPI_Win win, int *mem, int n) {
  /* mem[0..n): each rank puts its rank into slot `rank` of the next rank. */
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  for (int i = 0; i < n; i++) mem[i] = -1;
  MPI_Win_fence(0, win);
  MPI_Put(&rank, 1, MPI_INT, next, rank, 1, MPI_INT, win);
  MPI_Win_fence(0, win);
  CHECK(mem[prev] == prev);
  /* get every slot of the next rank back */
  int got[64];
  MPI_Get(got, n, MPI_INT, next, 0, n, MPI_INT, win);
  MPI_Win_fence(0, win);
  for (int i = 0; i < n; i++) CHECK(got[i] == (i == rank ? rank : -1));
  /* every rank adds rank+1 to slot 0 of rank 0, 10 times */
  if (rank == 0) mem[0] = 0;
  MPI_Win_fence(0, win);
  int one = rank + 1;
  for (int i = 0; i < 10; i++) MPI_Accumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win);
  MPI_Win_fence(0, win);
  if (rank == 0) CHECK(mem[0] == 10 * size * (size + 1) / 2);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size <= 16);
  MPI_Comm node;
  int nsize;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &nsize);
  CHECK(nsize < size); /* really two nodes */

  /* MPI_Win_allocate across the nodes */
  int *mem;
  MPI_Win win;
  CHECK(MPI_Win_allocate(64 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                         &win) == MPI_SUCCESS);
  put_get_acc(win, mem, size);

  /* fetch_and_op tickets and compare_and_swap on rank 0's counter, from every rank */
  if (rank == 0) mem[1] = 0, mem[2] = -1;
  MPI_Win_fence(0, win);
  int inc = 1, tickets[8];
  for (int i = 0; i < 8; i++) {
    MPI_Fetch_and_op(&inc, &tickets[i], MPI_INT, 0, 1, MPI_SUM, win);
    MPI_Win_fence(0, win); /* each result arrives by the fence */
  }
  int all[16 * 8];
  MPI_Allgather(tickets, 8, MPI_INT, all, 8, MPI_INT, MPI_COMM_WORLD);
  int seen[16 * 8] = {0};
  for (int i = 0; i < 8 * size; i++) {
    CHECK(all[i] >= 0 && all[i] < 8 * size);
    CHECK(!seen[all[i]]);
    seen[all[i]] = 1;
  }
  int mine = rank, old = -2, minus = -1;
  MPI_Compare_and_swap(&mine, &minus, &old, MPI_INT, 0, 2, win);
  MPI_Win_fence(0, win);
  int winner;
  if (rank == 0) winner = mem[2];
  MPI_Bcast(&winner, 1, MPI_INT, 0, MPI_COMM_WORLD);
  CHECK(winner >= 0 && winner < size);
  CHECK(rank == winner ? old == -1 : old == winner);

  /* get_accumulate with MPI_NO_OP reads; a derived target type (every other int) */
  for (int i = 0; i < 16; i++) mem[8 + i] = 100 * rank + i;
  MPI_Win_fence(0, win);
  int peer = (rank + 1) % size, read[8], res[8], ones[8];
  for (int i = 0; i < 8; i++) ones[i] = 1;
  MPI_Datatype every_other;
  MPI_Type_vector(8, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  MPI_Get_accumulate(NULL, 0, MPI_INT, read, 8, MPI_INT, peer, 8, 1, every_other, MPI_NO_OP,
                     win);
  MPI_Win_fence(0, win);
  for (int i = 0; i < 8; i++) CHECK(read[i] == 100 * peer + 2 * i);
  MPI_Get_accumulate(ones, 8, MPI_INT, res, 8, MPI_INT, peer, 8, 1, every_other, MPI_SUM, win);
  MPI_Win_fence(0, win);
  for (int i = 0; i < 8; i++) CHECK(res[i] == 100 * peer + 2 * i);
  for (int i = 0; i < 16; i++) CHECK(mem[8 + i] == 100 * rank + i + (i % 2 == 0));
  MPI_Type_free(&every_other);

  /* Rget completes at MPI_Wait */
  MPI_Request rq;
  int r1 = -1;
  MPI_Rget(&r1, 1, MPI_INT, peer, 9, 1, MPI_INT, win, &rq);
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  CHECK(r1 == 100 * peer + 1); /* slot 9 is mem[8 + 1] */

  /* the target blocks in MPI_Recv during the epoch: the origin's operations must not wait
     for it (rank 0 is the origin, the last rank, on the other node, the target; it writes
     the slot rank 0 reads before the epoch: a store in the epoch would race with the get) */
  int last, token = 7, back = -1, cand = on_my_node(node, 0) ? -1 : rank;
  MPI_Allreduce(&cand, &last, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  CHECK(last > 0);
  if (rank == last) mem[31] = 31;
  MPI_Win_fence(0, win);
  if (rank == 0) {
    int v = 4242;
    MPI_Put(&v, 1, MPI_INT, last, 30, 1, MPI_INT, win);
    MPI_Get(&back, 1, MPI_INT, last, 31, 1, MPI_INT, win);
    MPI_Send(&token, 1, MPI_INT, last, 5, MPI_COMM_WORLD);
  } else if (rank == last) {
    MPI_Recv(&token, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Win_fence(0, win);
  if (rank == last) CHECK(mem[30] == 4242);
  if (rank == 0) CHECK(back == 31);

  /* errors: outside the far target's memory */
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  int cls = -1, far = -1, rc;
  for (int r = 0; r < size; r++)
    if (!on_my_node(node, r)) far = r;
  CHECK(far >= 0);
  rc = MPI_Win_free(&win);
  if (rc != MPI_SUCCESS) {
    char why[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(rc, why, &len);
    fprintf(stderr, "free: %s\n", why);
  }
  CHECK(rc == MPI_SUCCESS);

  /* large operations: rank 0 puts five 40 KiB blocks in one epoch (more than one
     message's worth) on a rank of the other node, and reads them back in the next */
  {
    enum { CHUNK = 40 << 10, CHUNKS = 5 };
    char *big, *src = malloc(CHUNK * CHUNKS), *dst = malloc(CHUNK * CHUNKS);
    CHECK(MPI_Win_allocate(CHUNK * CHUNKS, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &big, &win) ==
          MPI_SUCCESS);
    for (int i = 0; i < CHUNK * CHUNKS; i++) src[i] = (char)(i * 7 + 3), dst[i] = 0;
    MPI_Win_fence(0, win);
    if (rank == 0)
      for (int c = 0; c < CHUNKS; c++)
        MPI_Put(src + c * CHUNK, CHUNK, MPI_CHAR, far, c * CHUNK, CHUNK, MPI_CHAR, win);
    MPI_Win_fence(0, win);
    if (rank == 0)
      for (int c = 0; c < CHUNKS; c++)
        MPI_Get(dst + c * CHUNK, CHUNK, MPI_CHAR, far, c * CHUNK, CHUNK, MPI_CHAR, win);
    MPI_Win_fence(0, win);
    if (rank == 0) CHECK(memcmp(src, dst, CHUNK * CHUNKS) == 0);
    CHECK(MPI_Win_free(&win) == MPI_SUCCESS);
    free(src);
    free(dst);
  }

  /* MPI_Win_create over the program's memory, and post/start/complete/wait */
  int buf[64];
  CHECK(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win) ==
        MPI_SUCCESS);
  put_get_acc(win, buf, size);
  MPI_Group world, pair;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int prev = (rank + size - 1) % size, next = (rank + 1) % size;
  buf[40] = -1;
  MPI_Group_incl(world, 1, &prev, &pair);
  MPI_Win_post(pair, 0, win); /* prev writes to me */
  MPI_Group gnext;
  MPI_Group_incl(world, 1, &next, &gnext);
  MPI_Win_start(gnext, 0, win);
  int val = 1000 + rank;
  MPI_Put(&val, 1, MPI_INT, next, 40, 1, MPI_INT, win);
  MPI_Win_complete(win);
  MPI_Win_wait(win);
  CHECK(buf[40] == 1000 + prev);
  MPI_Group_free(&pair);
  MPI_Group_free(&gnext);
  MPI_Group_free(&world);
  /* a range outside the far target's window is refused at the call */
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  MPI_Win_fence(0, win);
  int two[2] = {1, 2};
  MPI_Error_class(MPI_Put(two, 2, MPI_INT, far, 63, 2, MPI_INT, win), &cls);
  CHECK(cls == MPI_ERR_RMA_RANGE);
  CHECK(MPI_Win_fence(0, win) == MPI_SUCCESS);
  CHECK(MPI_Win_free(&win) == MPI_SUCCESS);

  /* a dynamic window: the target's addresses come from MPI_Get_address */
  CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win) == MPI_SUCCESS);
  int region[4] = {0, 0, 0, 0};
  MPI_Win_attach(win, region, sizeof region);
  MPI_Aint addr, addrs[16];
  MPI_Get_address(region, &addr);
  MPI_Allgather(&addr, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
  MPI_Win_fence(0, win);
  MPI_Put(&val, 1, MPI_INT, next, addrs[next] + 2 * sizeof(int), 1, MPI_INT, win);
  MPI_Win_fence(0, win);
  CHECK(region[2] == 1000 + prev);
  /* an address the far target has not attached: its error comes back at the fence */
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  if (rank == 0) MPI_Put(&val, 1, MPI_INT, far, addrs[far] + (1 << 20), 1, MPI_INT, win);
  rc = MPI_Win_fence(0, win);
  MPI_Error_class(rc, &cls);
  CHECK(rank == 0 ? cls == MPI_ERR_RMA_RANGE : rc == MPI_SUCCESS);
  MPI_Win_detach(win, region);
  CHECK(MPI_Win_free(&win) == MPI_SUCCESS);

  /* a shared window cannot span nodes; one per node works */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  rc = MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                               &win);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_RMA_SHARED);
  int nrank;
  MPI_Comm_rank(node, &nrank);
  CHECK(MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, node, &mem, &win) ==
        MPI_SUCCESS);
  *mem = -1;
  MPI_Win_fence(0, win);
  MPI_Put(&nrank, 1, MPI_INT, (nrank + 1) % nsize, 0, 1, MPI_INT, win);
  MPI_Win_fence(0, win);
  CHECK(*mem == (nrank + nsize - 1) % nsize);
  CHECK(MPI_Win_free(&win) == MPI_SUCCESS);
  MPI_Comm_free(&node);
  accumulate_derived_complex();
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("rma_nodes: ok on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
