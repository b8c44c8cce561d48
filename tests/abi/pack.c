/* MPI_Pack, MPI_Unpack, MPI_Pack_size (and the _c forms), as a program that builds one
   message of several parts uses them: rank 0 packs a header int, a struct array and a
   matrix column, sends the lot as MPI_PACKED; rank 1 unpacks it in the same order. Then the
   other way round: a message sent with a derived type is received as MPI_PACKED and
   unpacked with that type. (The errors of bad sizes are in errors.c: MPICH does not check them.) */
#include <mpi.h>
#include <stddef.h>
#include <string.h>
#include "check.h"

struct particle {
  int id;
  double pos[3];
  char tag;
};

static MPI_Datatype particle_type(void) {
  MPI_Datatype t, r;
  int lens[3] = {1, 3, 1};
  MPI_Aint disps[3] = {offsetof(struct particle, id), offsetof(struct particle, pos),
                       offsetof(struct particle, tag)};
  MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
  MPI_Type_create_struct(3, lens, disps, types, &t);
  MPI_Type_create_resized(t, 0, sizeof(struct particle), &r);
  MPI_Type_free(&t);
  MPI_Type_commit(&r);
  return r;
}

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size >= 2);

  MPI_Datatype pt = particle_type(), col;
  MPI_Type_vector(4, 1, 4, MPI_DOUBLE, &col);
  MPI_Type_commit(&col);

  /* sizes: at least the data; equal in both forms */
  int s_int, s_pt, s_col;
  MPI_Count s_col_c;
  CHECK(MPI_Pack_size(1, MPI_INT, MPI_COMM_WORLD, &s_int) == MPI_SUCCESS);
  CHECK(MPI_Pack_size(5, pt, MPI_COMM_WORLD, &s_pt) == MPI_SUCCESS);
  CHECK(MPI_Pack_size(1, col, MPI_COMM_WORLD, &s_col) == MPI_SUCCESS);
  CHECK(MPI_Pack_size_c(1, col, MPI_COMM_WORLD, &s_col_c) == MPI_SUCCESS);
  CHECK(s_int >= 4 && s_pt >= 5 * (4 + 24 + 1) && s_col >= 32 && s_col_c == s_col);
  int total = s_int + s_pt + s_col;
  char *buf = malloc(total);

  struct particle ps[5];
  double m[16];
  if (rank == 0) {
    for (int i = 0; i < 5; i++) {
      ps[i].id = 100 + i;
      ps[i].pos[0] = i;
      ps[i].pos[1] = i * 0.5;
      ps[i].pos[2] = -i;
      ps[i].tag = 'a' + i;
    }
    for (int i = 0; i < 16; i++) m[i] = i;
    int header = 5, pos = 0;
    CHECK(MPI_Pack(&header, 1, MPI_INT, buf, total, &pos, MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(pos > 0 && pos <= s_int);
    CHECK(MPI_Pack(ps, 5, pt, buf, total, &pos, MPI_COMM_WORLD) == MPI_SUCCESS);
    MPI_Count cpos = pos;
    /* the second column of the matrix, by the _c form */
    CHECK(MPI_Pack_c(m + 1, 1, col, buf, total, &cpos, MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(cpos > pos && cpos <= total);
    MPI_Send(buf, (int)cpos, MPI_PACKED, 1, 7, MPI_COMM_WORLD);

    /* a message of the column type, received as packed bytes by rank 1 */
    MPI_Send(m + 2, 1, col, 1, 8, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Status st;
    int n, pos = 0, header = 0;
    MPI_Recv(buf, total, MPI_PACKED, 0, 7, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_PACKED, &n);
    CHECK(n > 0 && n <= total);
    CHECK(MPI_Unpack(buf, n, &pos, &header, 1, MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(header == 5);
    memset(ps, 0, sizeof ps);
    CHECK(MPI_Unpack(buf, n, &pos, ps, header, pt, MPI_COMM_WORLD) == MPI_SUCCESS);
    for (int i = 0; i < 5; i++)
      CHECK(ps[i].id == 100 + i && ps[i].pos[0] == i && ps[i].pos[1] == i * 0.5 &&
            ps[i].pos[2] == -i && ps[i].tag == 'a' + i);
    for (int i = 0; i < 16; i++) m[i] = -1;
    MPI_Count cpos = pos;
    CHECK(MPI_Unpack_c(buf, n, &cpos, m, 1, col, MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(cpos == n);
    for (int i = 0; i < 16; i++) CHECK(m[i] == (i % 4 == 0 ? 1 + i : -1));

    MPI_Recv(buf, total, MPI_PACKED, 0, 8, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_PACKED, &n);
    CHECK(n == 4 * (int)sizeof(double));
    double got[4];
    pos = 0;
    CHECK(MPI_Unpack(buf, n, &pos, got, 4, MPI_DOUBLE, MPI_COMM_WORLD) == MPI_SUCCESS);
    for (int i = 0; i < 4; i++) CHECK(got[i] == 2 + 4 * i);
  }
  /* external32: big-endian, long in 4 bytes (as MPICH writes it) */
  unsigned char ext[64];
  MPI_Aint epos = 0, esize;
  int word = 0x01020304;
  long minus2 = -2, back_long = 0;
  double one = 1.0, back_d = 0;
  CHECK(MPI_Pack_external_size("external32", 3, MPI_LONG, &esize) == MPI_SUCCESS && esize == 12);
  CHECK(MPI_Pack_external("external32", &word, 1, MPI_INT, ext, sizeof ext, &epos) == MPI_SUCCESS);
  CHECK(MPI_Pack_external("external32", &minus2, 1, MPI_LONG, ext, sizeof ext, &epos) == MPI_SUCCESS);
  CHECK(MPI_Pack_external("external32", &one, 1, MPI_DOUBLE, ext, sizeof ext, &epos) == MPI_SUCCESS);
  CHECK(epos == 4 + 4 + 8);
  CHECK(ext[0] == 1 && ext[3] == 4 && ext[4] == 0xff && ext[7] == 0xfe && ext[8] == 0x3f && ext[9] == 0xf0);
  epos = 4;
  int back_word = 0;
  CHECK(MPI_Unpack_external("external32", ext, 16, &epos, &back_long, 1, MPI_LONG) == MPI_SUCCESS);
  CHECK(MPI_Unpack_external("external32", ext, 16, &epos, &back_d, 1, MPI_DOUBLE) == MPI_SUCCESS);
  epos = 0;
  CHECK(MPI_Unpack_external("external32", ext, 16, &epos, &back_word, 1, MPI_INT) == MPI_SUCCESS);
  CHECK(back_long == -2 && back_d == 1.0 && back_word == word);

  free(buf);
  MPI_Type_free(&pt);
  MPI_Type_free(&col);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("pack: ok on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
