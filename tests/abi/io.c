/* MPI-IO as programs use it: every rank writes its block at an explicit offset and reads its
   neighbour's; an interleaved view (a strided filetype) written collectively and read back
   as plain bytes; the individual file pointer (seek, position, byte offset); the shared one
   (write_shared, write_ordered in rank order, seek_shared); non-blocking and split
   collective forms; size, preallocate, sync, amode, group, atomicity; delete on close; a file
   in a read-only directory. The file lives in $TMPDIR (or /tmp) and is gone at the end. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"

#define N 8

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char path[512];
  int id = (int)getpid();
  MPI_Bcast(&id, 1, MPI_INT, 0, MPI_COMM_WORLD);
  const char *dir = getenv("TMPDIR");
  snprintf(path, sizeof path, "%s/ibdyn-io-test-%d.dat", dir && *dir ? dir : "/tmp", id);

  MPI_File fh;
  CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh) ==
        MPI_SUCCESS);
  int amode, flag;
  MPI_File_get_amode(fh, &amode);
  CHECK(amode == (MPI_MODE_CREATE | MPI_MODE_RDWR));
  MPI_Group g;
  int gsize;
  MPI_File_get_group(fh, &g);
  MPI_Group_size(g, &gsize);
  CHECK(gsize == size);
  MPI_Group_free(&g);
  MPI_File_set_atomicity(fh, 1);
  MPI_File_get_atomicity(fh, &flag);
  CHECK(flag == 1);
  MPI_File_set_atomicity(fh, 0);
  MPI_Aint ext;
  MPI_File_get_type_extent(fh, MPI_DOUBLE, &ext);
  CHECK(ext == sizeof(double));

  /* blocks at explicit offsets */
  int block[N], back[N], n;
  for (int i = 0; i < N; i++) block[i] = rank * 100 + i;
  MPI_Status st;
  CHECK(MPI_File_write_at_all(fh, (MPI_Offset)rank * N * sizeof(int), block, N, MPI_INT, &st) ==
        MPI_SUCCESS);
  MPI_Get_count(&st, MPI_INT, &n);
  CHECK(n == N);
  MPI_File_sync(fh);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File_sync(fh);
  int right = (rank + 1) % size;
  CHECK(MPI_File_read_at(fh, (MPI_Offset)right * N * sizeof(int), back, N, MPI_INT, &st) ==
        MPI_SUCCESS);
  for (int i = 0; i < N; i++) CHECK(back[i] == right * 100 + i);
  MPI_Offset fsize;
  MPI_File_get_size(fh, &fsize);
  CHECK(fsize == (MPI_Offset)size * N * sizeof(int));
  /* a read past the end returns what there is */
  CHECK(MPI_File_read_at(fh, fsize - sizeof(int), back, N, MPI_INT, &st) == MPI_SUCCESS);
  MPI_Get_count(&st, MPI_INT, &n);
  CHECK(n == 1);

  /* an interleaved view: rank r owns ints r, r + size, r + 2 size, ... */
  MPI_Datatype strided, tile;
  MPI_Type_vector(1, 1, size, MPI_INT, &strided);
  MPI_Type_create_resized(strided, 0, (MPI_Aint)size * sizeof(int), &tile);
  MPI_Type_commit(&tile);
  MPI_File_set_size(fh, 0);
  CHECK(MPI_File_set_view(fh, (MPI_Offset)rank * sizeof(int), MPI_INT, tile, "native",
                          MPI_INFO_NULL) == MPI_SUCCESS);
  MPI_Offset disp;
  MPI_Datatype et, ft;
  char rep[MPI_MAX_DATAREP_STRING];
  MPI_File_get_view(fh, &disp, &et, &ft, rep);
  CHECK(disp == (MPI_Offset)rank * (MPI_Offset)sizeof(int) && et == MPI_INT && strcmp(rep, "native") == 0);
  MPI_Type_free(&ft);
  for (int i = 0; i < N; i++) block[i] = i * size + rank;
  CHECK(MPI_File_write_all(fh, block, N, MPI_INT, &st) == MPI_SUCCESS);
  MPI_Offset pos, byte;
  MPI_File_get_position(fh, &pos);
  CHECK(pos == N);
  MPI_File_get_byte_offset(fh, 2, &byte);
  CHECK(byte == (MPI_Offset)(rank + 2 * size) * (MPI_Offset)sizeof(int));
  MPI_File_sync(fh);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File_sync(fh);
  MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
  int *all = malloc(sizeof(int) * N * size);
  CHECK(MPI_File_read_at(fh, 0, all, N * size, MPI_INT, &st) == MPI_SUCCESS);
  for (int i = 0; i < N * size; i++) CHECK(all[i] == i);

  /* the individual pointer: seek, read, the end */
  MPI_File_seek(fh, 4 * sizeof(int), MPI_SEEK_SET);
  CHECK(MPI_File_read(fh, back, 2, MPI_INT, &st) == MPI_SUCCESS && back[0] == 4 && back[1] == 5);
  MPI_File_get_position(fh, &pos);
  CHECK(pos == 6 * (MPI_Offset)sizeof(int));
  MPI_File_seek(fh, -(MPI_Offset)sizeof(int), MPI_SEEK_END);
  CHECK(MPI_File_read(fh, back, 1, MPI_INT, &st) == MPI_SUCCESS && back[0] == N * size - 1);
  MPI_Barrier(MPI_COMM_WORLD); /* before the file grows */

  /* non-blocking and split collective forms */
  MPI_Request req;
  int v = 1000 + rank, w = -1;
  MPI_Offset at = (MPI_Offset)(N * size + rank) * sizeof(int);
  CHECK(MPI_File_iwrite_at(fh, at, &v, 1, MPI_INT, &req) == MPI_SUCCESS);
  MPI_Wait(&req, &st);
  MPI_Get_count(&st, MPI_INT, &n);
  CHECK(n == 1);
  MPI_File_sync(fh);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File_sync(fh);
  MPI_File_seek(fh, (MPI_Offset)(N * size + right) * sizeof(int), MPI_SEEK_SET);
  CHECK(MPI_File_read_all_begin(fh, &w, 1, MPI_INT) == MPI_SUCCESS);
  CHECK(MPI_File_read_all_end(fh, &w, &st) == MPI_SUCCESS && w == 1000 + right);

  /* the shared pointer: one int each, in any order; then in rank order */
  MPI_File_set_size(fh, 0);
  MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
  MPI_Offset p0;
  MPI_File_get_position_shared(fh, &p0);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(MPI_File_write_shared(fh, &rank, 1, MPI_INT, &st) == MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File_get_position_shared(fh, &pos);
  CHECK(pos == p0 + size);
  MPI_Barrier(MPI_COMM_WORLD); /* everyone has read the pointer before it moves on */
  int two[2] = {rank, rank};
  CHECK(MPI_File_write_ordered(fh, two, 2, MPI_INT, &st) == MPI_SUCCESS);
  MPI_File_sync(fh);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File_sync(fh);
  CHECK(MPI_File_read_at(fh, p0, all, 3 * size, MPI_INT, &st) == MPI_SUCCESS);
  int seen = 0;
  for (int i = 0; i < size; i++) seen |= 1 << all[i];
  CHECK(seen == (1 << size) - 1);
  for (int i = 0; i < 2 * size; i++) CHECK(all[size + i] == i / 2);
  MPI_File_seek_shared(fh, 0, MPI_SEEK_SET);
  MPI_File_get_position_shared(fh, &pos);
  CHECK(pos == 0);

  MPI_File_preallocate(fh, 4096);
  MPI_File_get_size(fh, &fsize);
  CHECK(fsize >= 4096);
  MPI_File_close(&fh);
  CHECK(fh == MPI_FILE_NULL);

  /* reopened read-only, then deleted on close */
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE,
                      MPI_INFO_NULL, &fh) == MPI_SUCCESS);
  CHECK(MPI_File_read_at_all(fh, 0, &w, 1, MPI_INT, &st) == MPI_SUCCESS);
  MPI_File_close(&fh);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(access(path, F_OK) != 0);
  /* opening a file that is not there fails with a code (files return errors by default) */
  int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), cls = -1;
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_NO_SUCH_FILE);
  /* a file in a directory nobody may write to (input data, say) opens and reads; only its
     shared file pointer, which would need a file beside it, is missing */
  char head[6] = {0};
  CHECK(MPI_File_open(MPI_COMM_WORLD, "/proc/version", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh) ==
        MPI_SUCCESS);
  CHECK(MPI_File_read_at_all(fh, 0, head, 5, MPI_CHAR, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(strcmp(head, "Linux") == 0);
  CHECK(MPI_File_read_shared(fh, head, 5, MPI_CHAR, MPI_STATUS_IGNORE) != MPI_SUCCESS);
  /* resizing a file open read-only fails on every process (and the next collective works) */
  CHECK(MPI_File_set_size(fh, 100) != MPI_SUCCESS);
  CHECK(MPI_File_close(&fh) == MPI_SUCCESS);

  free(all);
  MPI_Type_free(&tile);
  MPI_Type_free(&strided);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("io: ok on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
