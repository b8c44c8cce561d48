/* MPI-IO bandwidth: every rank writes its contiguous block of a shared file with
   MPI_File_write_at_all, then reads it back with MPI_File_read_at_all, then the same
   through an interleaved view (each rank owns every size-th 4 KiB piece); MB/s of the whole
   file per operation (the slowest rank's time). The file lives in $TMPDIR (or /tmp; on
   this machine, tmpfs or the page cache: the floor is memcpy's) and is deleted at the end.
   Run with 2 ranks. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bench.h"

static double timed(int rank, int (*op)(MPI_File, MPI_Offset, void *, int, MPI_Datatype, MPI_Status *),
                    MPI_File fh, MPI_Offset off, void *buf, int n, int reps) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int i = 0; i < reps; i++) op(fh, off, buf, n, MPI_BYTE, MPI_STATUS_IGNORE);
  double t = MPI_Wtime() - t0, worst;
  MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  (void)rank;
  return worst / reps;
}

static int write_at_all(MPI_File f, MPI_Offset o, void *b, int n, MPI_Datatype t, MPI_Status *s) {
  return MPI_File_write_at_all(f, o, b, n, t, s);
}
static int read_at_all(MPI_File f, MPI_Offset o, void *b, int n, MPI_Datatype t, MPI_Status *s) {
  return MPI_File_read_at_all(f, o, b, n, t, s);
}

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int reps = iters(20), mb = max_size(16 << 20);
  char path[512];
  int id = (int)getpid();
  MPI_Bcast(&id, 1, MPI_INT, 0, MPI_COMM_WORLD);
  const char *dir = getenv("TMPDIR");
  snprintf(path, sizeof path, "%s/ibdyn-io-bench-%d", dir && *dir ? dir : "/tmp", id);
  char *buf = malloc(mb);
  memset(buf, rank + 1, mb);
  MPI_File fh;
  MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                MPI_INFO_NULL, &fh);
  double total = (double)mb * size / 1e6;
  if (rank == 0) printf("# MPI-IO bandwidth (MB/s of the whole file), %d ranks x %d bytes, %d reps\n# op MBps\n", size, mb, reps);
  timed(rank, write_at_all, fh, (MPI_Offset)rank * mb, buf, mb, 1);
  double w = timed(rank, write_at_all, fh, (MPI_Offset)rank * mb, buf, mb, reps);
  double r = timed(rank, read_at_all, fh, (MPI_Offset)rank * mb, buf, mb, reps);
  if (rank == 0) printf("write_at_all_blocks %.0f\nread_at_all_blocks %.0f\n", total / w, total / r);
  MPI_Datatype piece, tile;
  MPI_Type_contiguous(4096, MPI_BYTE, &piece);
  MPI_Type_create_resized(piece, 0, (MPI_Aint)4096 * size, &tile);
  MPI_Type_commit(&tile);
  MPI_File_set_view(fh, (MPI_Offset)rank * 4096, MPI_BYTE, tile, "native", MPI_INFO_NULL);
  w = timed(rank, write_at_all, fh, 0, buf, mb, reps);
  r = timed(rank, read_at_all, fh, 0, buf, mb, reps);
  if (rank == 0) printf("write_at_all_interleaved_4k %.0f\nread_at_all_interleaved_4k %.0f\n", total / w, total / r);
  char *copy = malloc(mb);
  double t0 = MPI_Wtime();
  for (int i = 0; i < reps; i++) memcpy(copy, buf, mb);
  double m = (MPI_Wtime() - t0) / reps;
  if (rank == 0) printf("memcpy_floor_per_rank %.0f\n", mb / 1e6 / m);
  MPI_File_close(&fh);
  MPI_Type_free(&tile);
  MPI_Type_free(&piece);
  free(copy);
  free(buf);
  MPI_Finalize();
  return 0;
}
