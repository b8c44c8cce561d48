/* A user reduction function (MPI_Op_create) gets its buffers laid out as the datatype
   describes: len elements one extent apart, the gaps where the type has them (MPI 4.1 sec
   6.9.5). Types: a {double; int} struct of size 12 resized to extent 16 (the C struct), MPI_INT
   resized to extent 8 (an int every 8 bytes) and an int 4 bytes below the element's start
   (lower bound -4, extent 8). Every reduction: Reduce_local, Reduce, Allreduce (in place
   too), Scan, Exscan, Reduce_scatter_block, Reduce_scatter, their I and _init forms, and on
   an intercommunicator Allreduce, Iallreduce, Reduce and Reduce_scatter_block; counts of 3
   and 6000 (more than one 64 KiB chunk). MPI_SUM on the gapped int type too (or MPI_ERR_OP,
   as MPICH answers). Needs an even number of processes. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

typedef struct {
  double sum;
  int n;
} acc;

static MPI_Datatype acc_t, gap_t, below_t;
static int calls;

static void acc_op(void *in, void *inout, int *len, MPI_Datatype *dt) {
  CHECK(*dt == acc_t);
  acc *x = in, *y = inout;
  for (int i = 0; i < *len; i++) {
    y[i].sum += x[i].sum;
    y[i].n += x[i].n;
  }
  calls++;
}

static void gap_op(void *in, void *inout, int *len, MPI_Datatype *dt) {
  CHECK(*dt == gap_t);
  int *x = in, *y = inout;
  for (int i = 0; i < *len; i++) y[2 * i] += x[2 * i];
}

static void below_op(void *in, void *inout, int *len, MPI_Datatype *dt) {
  CHECK(*dt == below_t);
  int *x = in, *y = inout;
  for (int i = 0; i < *len; i++) y[2 * i - 1] += x[2 * i - 1];
}

static int me, np;

/* Element j of world rank r's contribution. */
static double val(int r, int j) { return r * 1000.0 + j; }

static void fill(acc *v, int n, int j0) {
  for (int k = 0; k < n; k++) {
    v[k].sum = val(me, j0 + k);
    v[k].n = 1;
  }
}

/* v[k] must be the sum over world ranks lo, lo + step, ... < hi of element j0 + k. */
static void expect(const char *what, const acc *v, int n, int j0, int lo, int hi, int step) {
  for (int k = 0; k < n; k++) {
    double want = 0;
    int cnt = 0;
    for (int r = lo; r < hi; r += step) {
      want += val(r, j0 + k);
      cnt++;
    }
    if (v[k].sum != want || v[k].n != cnt) {
      fprintf(stderr, "rank %d: %s element %d: sum %g n %d, want %g %d\n", me, what, k,
              v[k].sum, v[k].n, want, cnt);
      exit(1);
    }
  }
}

static void wait1(MPI_Request *r) { CHECK(MPI_Wait(r, MPI_STATUS_IGNORE) == MPI_SUCCESS); }

static void intra(int n, MPI_Op op) {
  acc *in = malloc(sizeof(acc) * n * np), *out = malloc(sizeof(acc) * n * np);
  MPI_Request r;
  int root = np - 1;

  fill(out, n, 0);
  fill(in, n, 0);
  CHECK(MPI_Reduce_local(in, out, n, acc_t, op) == MPI_SUCCESS);
  for (int k = 0; k < n; k++) CHECK(out[k].sum == 2 * val(me, k) && out[k].n == 2);

  fill(in, n, 0);
  CHECK(MPI_Reduce(in, out, n, acc_t, op, root, MPI_COMM_WORLD) == MPI_SUCCESS);
  if (me == root) expect("Reduce", out, n, 0, 0, np, 1);
  CHECK(MPI_Allreduce(in, out, n, acc_t, op, MPI_COMM_WORLD) == MPI_SUCCESS);
  expect("Allreduce", out, n, 0, 0, np, 1);
  fill(out, n, 0);
  CHECK(MPI_Allreduce(MPI_IN_PLACE, out, n, acc_t, op, MPI_COMM_WORLD) == MPI_SUCCESS);
  expect("Allreduce in place", out, n, 0, 0, np, 1);
  CHECK(MPI_Scan(in, out, n, acc_t, op, MPI_COMM_WORLD) == MPI_SUCCESS);
  expect("Scan", out, n, 0, 0, me + 1, 1);
  CHECK(MPI_Exscan(in, out, n, acc_t, op, MPI_COMM_WORLD) == MPI_SUCCESS);
  if (me > 0) expect("Exscan", out, n, 0, 0, me, 1);

  fill(in, n * np, 0);
  CHECK(MPI_Reduce_scatter_block(in, out, n, acc_t, op, MPI_COMM_WORLD) == MPI_SUCCESS);
  expect("Reduce_scatter_block", out, n, me * n, 0, np, 1);
  int *counts = malloc(sizeof(int) * np), off = 0;
  for (int r = 0; r < np; r++) counts[r] = r % 2 ? n : n / 2 + 1;
  for (int r = 0; r < me; r++) off += counts[r];
  CHECK(MPI_Reduce_scatter(in, out, counts, acc_t, op, MPI_COMM_WORLD) == MPI_SUCCESS);
  expect("Reduce_scatter", out, counts[me], off, 0, np, 1);

  CHECK(MPI_Ireduce_scatter_block(in, out, n, acc_t, op, MPI_COMM_WORLD, &r) == MPI_SUCCESS);
  wait1(&r);
  expect("Ireduce_scatter_block", out, n, me * n, 0, np, 1);
  CHECK(MPI_Ireduce_scatter(in, out, counts, acc_t, op, MPI_COMM_WORLD, &r) == MPI_SUCCESS);
  wait1(&r);
  expect("Ireduce_scatter", out, counts[me], off, 0, np, 1);
  CHECK(MPI_Ireduce(in, out, n, acc_t, op, 0, MPI_COMM_WORLD, &r) == MPI_SUCCESS);
  wait1(&r);
  if (me == 0) expect("Ireduce", out, n, 0, 0, np, 1);
  CHECK(MPI_Iallreduce(in, out, n, acc_t, op, MPI_COMM_WORLD, &r) == MPI_SUCCESS);
  wait1(&r);
  expect("Iallreduce", out, n, 0, 0, np, 1);
  CHECK(MPI_Iscan(in, out, n, acc_t, op, MPI_COMM_WORLD, &r) == MPI_SUCCESS);
  wait1(&r);
  expect("Iscan", out, n, 0, 0, me + 1, 1);
  CHECK(MPI_Iexscan(in, out, n, acc_t, op, MPI_COMM_WORLD, &r) == MPI_SUCCESS);
  wait1(&r);
  if (me > 0) expect("Iexscan", out, n, 0, 0, me, 1);

  /* persistent forms, each started twice (the second time on other data) */
  MPI_Request p[6];
  MPI_Info ni = MPI_INFO_NULL;
  acc *o2 = malloc(sizeof(acc) * n * 6);
  CHECK(MPI_Reduce_init(in, o2, n, acc_t, op, 0, MPI_COMM_WORLD, ni, &p[0]) == MPI_SUCCESS);
  CHECK(MPI_Allreduce_init(in, o2 + n, n, acc_t, op, MPI_COMM_WORLD, ni, &p[1]) == MPI_SUCCESS);
  CHECK(MPI_Scan_init(in, o2 + 2 * n, n, acc_t, op, MPI_COMM_WORLD, ni, &p[2]) == MPI_SUCCESS);
  CHECK(MPI_Exscan_init(in, o2 + 3 * n, n, acc_t, op, MPI_COMM_WORLD, ni, &p[3]) == MPI_SUCCESS);
  CHECK(MPI_Reduce_scatter_block_init(in, o2 + 4 * n, n, acc_t, op, MPI_COMM_WORLD, ni, &p[4]) ==
        MPI_SUCCESS);
  CHECK(MPI_Reduce_scatter_init(in, o2 + 5 * n, counts, acc_t, op, MPI_COMM_WORLD, ni, &p[5]) ==
        MPI_SUCCESS);
  for (int round = 0; round < 2; round++) {
    fill(in, n * np, round * 7);
    for (int i = 0; i < 6; i++) {
      CHECK(MPI_Start(&p[i]) == MPI_SUCCESS);
      wait1(&p[i]);
    }
    if (me == 0) expect("Reduce_init", o2, n, round * 7, 0, np, 1);
    expect("Allreduce_init", o2 + n, n, round * 7, 0, np, 1);
    expect("Scan_init", o2 + 2 * n, n, round * 7, 0, me + 1, 1);
    if (me > 0) expect("Exscan_init", o2 + 3 * n, n, round * 7, 0, me, 1);
    expect("Reduce_scatter_block_init", o2 + 4 * n, n, round * 7 + me * n, 0, np, 1);
    expect("Reduce_scatter_init", o2 + 5 * n, counts[me], round * 7 + off, 0, np, 1);
  }
  for (int i = 0; i < 6; i++) MPI_Request_free(&p[i]);
  free(o2);
  free(counts);
  free(in);
  free(out);
}

/* Groups: even and odd world ranks. Each side gets the reduction of the other's data. */
static void inter(int n, MPI_Op op) {
  MPI_Comm local, ic;
  int even = me % 2 == 0;
  MPI_Comm_split(MPI_COMM_WORLD, !even, me, &local);
  MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, even ? 1 : 0, 11, &ic);
  int lrank, lsize;
  MPI_Comm_rank(local, &lrank);
  MPI_Comm_size(local, &lsize);
  int other = even ? 1 : 0; /* the remote group's world ranks: other, other + 2, ... */
  acc *in = malloc(sizeof(acc) * n * lsize), *out = malloc(sizeof(acc) * n * lsize);
  MPI_Request r;

  fill(in, n, 0);
  CHECK(MPI_Allreduce(in, out, n, acc_t, op, ic) == MPI_SUCCESS);
  expect("inter Allreduce", out, n, 0, other, np, 2);
  memset(out, 0, sizeof(acc) * n);
  CHECK(MPI_Iallreduce(in, out, n, acc_t, op, ic, &r) == MPI_SUCCESS);
  wait1(&r);
  expect("inter Iallreduce", out, n, 0, other, np, 2);
  /* the even group's rank 0 is the root */
  int root = even ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  CHECK(MPI_Reduce(in, out, n, acc_t, op, root, ic) == MPI_SUCCESS);
  if (root == MPI_ROOT) expect("inter Reduce", out, n, 0, 1, np, 2);
  fill(in, n * lsize, 0);
  CHECK(MPI_Reduce_scatter_block(in, out, n, acc_t, op, ic) == MPI_SUCCESS);
  expect("inter Reduce_scatter_block", out, n, lrank * n, other, np, 2);

  free(in);
  free(out);
  MPI_Comm_free(&ic);
  MPI_Comm_free(&local);
}

/* Whether a predefined op on a derived type worked: the standard defines them on predefined
   types, so MPI_ERR_OP is a right answer too. */
static int sum_on(int rc) {
  int cls;
  MPI_Error_class(rc, &cls);
  CHECK(rc == MPI_SUCCESS || cls == MPI_ERR_OP);
  return rc == MPI_SUCCESS;
}

/* The int types with gaps: a user op and MPI_SUM; the gaps of the result stay as they were. */
static void gapped(void) {
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Op gop, bop;
  MPI_Op_create(gap_op, 1, &gop);
  MPI_Op_create(below_op, 1, &bop);
  enum { N = 4 };
  int in[2 * N + 1], io[2 * N + 1];
  for (int i = 0; i < 2 * N + 1; i++) {
    in[i] = i % 2 ? -7 : me + i;
    io[i] = i % 2 ? 99 : 10 * i;
  }
  CHECK(MPI_Reduce_local(in, io, N, gap_t, gop) == MPI_SUCCESS);
  for (int i = 0; i < N; i++) CHECK(io[2 * i] == 10 * 2 * i + me + 2 * i && io[2 * i + 1] == 99);
  /* A predefined op on a derived type: MPICH refuses it (MPI_ERR_OP), ibdyn takes it. */
  int sum_ok = sum_on(MPI_Reduce_local(in, io, N, gap_t, MPI_SUM));
  if (sum_ok)
    for (int i = 0; i < N; i++)
      CHECK(io[2 * i] == 10 * 2 * i + 2 * (me + 2 * i) && io[2 * i + 1] == 99);
  /* below_t: element i's int lies at byte 8 i - 4 from the buffer's start
     (so from in + 1 the even ints of in) */
  for (int i = 0; i < 2 * N + 1; i++) io[i] = i % 2 ? 99 : 10 * i;
  CHECK(MPI_Reduce_local(in + 1, io + 1, N, below_t, bop) == MPI_SUCCESS);
  for (int i = 0; i < N; i++) CHECK(io[2 * i] == 10 * 2 * i + me + 2 * i && io[2 * i + 1] == 99);

  for (int i = 0; i < 2 * N + 1; i++) io[i] = 99;
  CHECK(MPI_Allreduce(in, io, N, gap_t, gop, MPI_COMM_WORLD) == MPI_SUCCESS);
  for (int i = 0; i < N; i++)
    CHECK(io[2 * i] == np * (np - 1) / 2 + np * 2 * i && io[2 * i + 1] == 99);
  for (int i = 0; i < 2 * N + 1; i++) io[i] = 99;
  if (sum_ok) {
    CHECK(sum_on(MPI_Allreduce(in, io, N, gap_t, MPI_SUM, MPI_COMM_WORLD)));
    for (int i = 0; i < N; i++)
      CHECK(io[2 * i] == np * (np - 1) / 2 + np * 2 * i && io[2 * i + 1] == 99);
  }
  for (int i = 0; i < 2 * N + 1; i++) io[i] = 99;
  CHECK(MPI_Allreduce(in + 1, io + 1, N, below_t, bop, MPI_COMM_WORLD) == MPI_SUCCESS);
  for (int i = 0; i < N; i++)
    CHECK(io[2 * i] == np * (np - 1) / 2 + np * 2 * i && io[2 * i + 1] == 99);
  MPI_Op_free(&gop);
  MPI_Op_free(&bop);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  CHECK(np % 2 == 0);

  int bl[2] = {1, 1};
  MPI_Aint dp[2] = {0, sizeof(double)};
  MPI_Datatype ty[2] = {MPI_DOUBLE, MPI_INT}, t0, t1;
  MPI_Type_create_struct(2, bl, dp, ty, &t0);
  MPI_Type_create_resized(t0, 0, sizeof(acc), &acc_t);
  MPI_Type_commit(&acc_t);
  MPI_Type_create_resized(MPI_INT, 0, 8, &gap_t);
  MPI_Type_commit(&gap_t);
  int one = 1;
  MPI_Aint minus4 = -4;
  MPI_Type_create_hindexed(1, &one, &minus4, MPI_INT, &t1);
  MPI_Type_create_resized(t1, -4, 8, &below_t);
  MPI_Type_commit(&below_t);
  int size;
  MPI_Aint lb, extent;
  MPI_Type_size(acc_t, &size);
  MPI_Type_get_extent(acc_t, &lb, &extent);
  CHECK(size == 12 && extent == 16);

  MPI_Op op;
  MPI_Op_create(acc_op, 1, &op);
  intra(3, op);
  intra(6000, op);
  inter(3, op);
  inter(6000, op);
  CHECK(calls > 0);
  gapped();

  MPI_Op_free(&op);
  MPI_Type_free(&acc_t);
  MPI_Type_free(&gap_t);
  MPI_Type_free(&below_t);
  MPI_Type_free(&t0);
  MPI_Type_free(&t1);
  if (me == 0) printf("userop_layout: ok\n");
  MPI_Finalize();
  return 0;
}
