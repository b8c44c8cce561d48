/* The value-index pair types have the size of their data and the extent of their C struct
   (MPI_DOUBLE_INT: 12 bytes in 16), so they match a struct type of the same type map in
   either direction, and MINLOC/MAXLOC (also one-sided) and user operations see every pair
   whole. Two ranks. */
#include <mpi.h>
#include <stddef.h>
#include <string.h>
#include "check.h"

struct di { double v; int i; };
struct si { short v; int i; };
struct ldi { long double v; int i; };

static MPI_Datatype like(MPI_Datatype value, MPI_Aint index_at, MPI_Aint extent) {
  int bl[2] = {1, 1};
  MPI_Aint d[2] = {0, index_at};
  MPI_Datatype ts[2] = {value, MPI_INT}, s, r;
  MPI_Type_create_struct(2, bl, d, ts, &s);
  MPI_Type_create_resized(s, 0, extent, &r);
  MPI_Type_free(&s);
  MPI_Type_commit(&r);
  return r;
}

static void sizes(MPI_Datatype t, int size, MPI_Aint extent, MPI_Aint true_extent) {
  int s;
  MPI_Aint lb, ext;
  MPI_Type_size(t, &s);
  CHECK(s == size);
  MPI_Type_get_extent(t, &lb, &ext);
  CHECK(lb == 0 && ext == extent);
  MPI_Type_get_true_extent(t, &lb, &ext);
  CHECK(lb == 0 && ext == true_extent);
}

static void swap_di(void *in, void *inout, int *len, MPI_Datatype *t) {
  (void)t;
  struct di *a = in, *b = inout;
  for (int k = 0; k < *len; k++) {
    b[k].v += a[k].v;
    b[k].i = b[k].i * 10 + a[k].i;
  }
}

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size == 2);
  int peer = 1 - rank;

  sizes(MPI_DOUBLE_INT, 12, 16, 12);
  sizes(MPI_SHORT_INT, 6, 8, 8);
  sizes(MPI_LONG_INT, sizeof(long) + 4, sizeof(struct { long v; int i; }), sizeof(long) + 4);
  sizes(MPI_LONG_DOUBLE_INT, 20, sizeof(struct ldi), 20);
  sizes(MPI_2INT, 8, 8, 8);
  sizes(MPI_FLOAT_INT, 8, 8, 8);
  MPI_Datatype di = like(MPI_DOUBLE, offsetof(struct di, i), sizeof(struct di));
  MPI_Datatype si = like(MPI_SHORT, offsetof(struct si, i), sizeof(struct si));

  /* a pair type one way, the struct of the same type map the other */
  struct di a[3] = {{1.5, 1}, {2.5, 2}, {3.5, 3}}, b[3];
  struct si c[2] = {{-4, 40}, {5, 50}}, d[2];
  MPI_Status st;
  int n;
  for (int dir = 0; dir < 2; dir++) {
    MPI_Datatype tdi = dir ? di : MPI_DOUBLE_INT, rdi = dir ? MPI_DOUBLE_INT : di;
    MPI_Datatype tsi = dir ? si : MPI_SHORT_INT, rsi = dir ? MPI_SHORT_INT : si;
    if (rank == 0) {
      MPI_Send(a, 3, tdi, 1, 1, MPI_COMM_WORLD);
      MPI_Send(c, 2, tsi, 1, 2, MPI_COMM_WORLD);
    } else {
      memset(b, 0, sizeof b);
      memset(d, 0, sizeof d);
      MPI_Recv(b, 3, rdi, 0, 1, MPI_COMM_WORLD, &st);
      MPI_Get_count(&st, rdi, &n);
      CHECK(n == 3);
      MPI_Get_count(&st, MPI_BYTE, &n);
      CHECK(n == 36);
      MPI_Get_elements(&st, rdi, &n);
      CHECK(n == 6);
      CHECK(b[2].v == 3.5 && b[2].i == 3 && b[0].v == 1.5 && b[0].i == 1);
      MPI_Recv(d, 2, rsi, 0, 2, MPI_COMM_WORLD, &st);
      MPI_Get_count(&st, MPI_BYTE, &n);
      CHECK(n == 12);
      CHECK(d[0].v == -4 && d[0].i == 40 && d[1].v == 5 && d[1].i == 50);
    }
  }

  /* a pair cut after its value counts one basic element */
  if (rank == 0) {
    MPI_Send(a, 20, MPI_BYTE, 1, 3, MPI_COMM_WORLD); /* one pair (12) and a double (8) */
  } else {
    MPI_Recv(b, 3, MPI_DOUBLE_INT, 0, 3, MPI_COMM_WORLD, &st);
    MPI_Get_elements(&st, MPI_DOUBLE_INT, &n);
    CHECK(n == 3);
    MPI_Get_count(&st, MPI_DOUBLE_INT, &n);
    CHECK(n == MPI_UNDEFINED);
  }

  /* MINLOC/MAXLOC over several pairs, with padding between them */
  struct di loc[3] = {{rank ? 2.0 : 1.0, rank}, {rank ? -1.0 : 5.0, rank}, {7.0, rank}}, res[3];
  MPI_Allreduce(loc, res, 3, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
  CHECK(res[0].v == 1.0 && res[0].i == 0 && res[1].v == -1.0 && res[1].i == 1);
  CHECK(res[2].v == 7.0 && res[2].i == 0);
  struct si sloc[2] = {{(short)(rank ? 9 : 3), rank}, {(short)(rank ? -2 : -8), rank}}, sres[2];
  MPI_Allreduce(sloc, sres, 2, MPI_SHORT_INT, MPI_MAXLOC, MPI_COMM_WORLD);
  CHECK(sres[0].v == 9 && sres[0].i == 1 && sres[1].v == -2 && sres[1].i == 1);
  struct ldi lloc[2] = {{rank ? 0.25L : 0.5L, rank}, {rank ? 8.0L : 3.0L, rank}}, lres[2];
  MPI_Allreduce(lloc, lres, 2, MPI_LONG_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
  CHECK(lres[0].v == 0.25L && lres[0].i == 1 && lres[1].v == 3.0L && lres[1].i == 0);

  /* Fortran's pairs: the index has the value's type */
  int fi[2] = {rank ? 3 : 7, rank}, fir[2];
  MPI_Allreduce(fi, fir, 1, MPI_2INTEGER, MPI_MINLOC, MPI_COMM_WORLD);
  CHECK(fir[0] == 3 && fir[1] == 1);
  double fd[2] = {rank ? 1.5 : 2.5, rank}, fdr[2];
  MPI_Allreduce(fd, fdr, 1, MPI_2DOUBLE_PRECISION, MPI_MAXLOC, MPI_COMM_WORLD);
  CHECK(fdr[0] == 2.5 && fdr[1] == 0.0);
  float ff[2] = {1.0f, (float)rank}, ffr[2];
  MPI_Allreduce(ff, ffr, 1, MPI_2REAL, MPI_MINLOC, MPI_COMM_WORLD);
  CHECK(ffr[0] == 1.0f && ffr[1] == 0.0f); /* a tie: the smaller index */

  /* a user operation gets the pairs laid out as the C struct */
  MPI_Op op;
  MPI_Op_create(swap_di, 0, &op);
  struct di u[2] = {{1.0, rank + 1}, {2.0, rank + 3}}, ur[2];
  MPI_Reduce(u, ur, 2, MPI_DOUBLE_INT, op, 0, MPI_COMM_WORLD);
  if (rank == 0)
    CHECK(ur[0].v == 2.0 && ur[0].i == 21 && ur[1].v == 4.0 && ur[1].i == 43);
  MPI_Op_free(&op);

  /* packing takes the data only */
  int ps;
  MPI_Pack_size(3, MPI_DOUBLE_INT, MPI_COMM_WORLD, &ps);
  CHECK(ps >= 36);
  char packed[64];
  int pos = 0;
  MPI_Pack(a, 3, MPI_DOUBLE_INT, packed, sizeof packed, &pos, MPI_COMM_WORLD);
  CHECK(pos == 36);
  pos = 0;
  memset(b, 0, sizeof b);
  MPI_Unpack(packed, sizeof packed, &pos, b, 3, di, MPI_COMM_WORLD);
  CHECK(pos == 36 && b[1].v == 2.5 && b[1].i == 2);

  /* one-sided: MINLOC accumulates pairs into a window of pairs */
  struct di wbuf[3] = {{10, -1}, {10, -1}, {10, -1}};
  MPI_Win win;
  MPI_Win_create(wbuf, sizeof wbuf, sizeof(struct di), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  struct di acc[3] = {{rank + 1.0, rank}, {5.0 - rank, rank}, {10.0, rank}};
  MPI_Win_fence(0, win);
  MPI_Accumulate(acc, 3, MPI_DOUBLE_INT, peer, 0, 3, MPI_DOUBLE_INT, MPI_MINLOC, win);
  MPI_Win_fence(0, win);
  CHECK(wbuf[0].v == peer + 1.0 && wbuf[0].i == peer);
  CHECK(wbuf[1].v == 5.0 - peer && wbuf[1].i == peer);
  CHECK(wbuf[2].v == 10.0 && wbuf[2].i == -1);
  MPI_Win_free(&win);

  (void)peer;
  MPI_Type_free(&di);
  MPI_Type_free(&si);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    printf("pair_types: ok\n");
  MPI_Finalize();
  return 0;
}
