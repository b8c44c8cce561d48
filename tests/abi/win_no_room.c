/* A shared window larger than /dev/shm has free is refused with MPI_ERR_NO_MEM on every
 * process (it used to be made, and the first store past the room killed a process with
 * SIGBUS); a window that fits is made afterwards, and nothing stays in /dev/shm. */
#include <mpi.h>
#include <string.h>
#include <sys/statvfs.h>
#include "check.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN);
  int rank, size;
  MPI_Comm_rank(node, &rank);
  MPI_Comm_size(node, &size);
  struct statvfs st;
  CHECK(statvfs("/dev/shm", &st) == 0);
  MPI_Aint free_bytes = (MPI_Aint)st.f_bavail * (MPI_Aint)st.f_frsize;
  /* The free room twice over, split over the processes of the node. */
  MPI_Aint each = 2 * (free_bytes / size) + (1 << 20);
  double *base = NULL;
  MPI_Win win = MPI_WIN_NULL;
  int rc = MPI_Win_allocate_shared(each, 1, MPI_INFO_NULL, node, &base, &win);
  int cls = -1;
  MPI_Error_class(rc, &cls);
  CHECK(rc != MPI_SUCCESS);
  CHECK(cls == MPI_ERR_NO_MEM);
  CHECK(win == MPI_WIN_NULL);
  if (rank == 0) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    CHECK(strstr(msg, "/dev/shm") != NULL);
  }
  /* A small one still works. */
  rc = MPI_Win_allocate_shared(4096, 1, MPI_INFO_NULL, node, &base, &win);
  CHECK(rc == MPI_SUCCESS);
  memset(base, rank, 4096);
  MPI_Win_free(&win);
  MPI_Comm_free(&node);
  MPI_Barrier(MPI_COMM_WORLD);
  int wrank;
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  if (wrank == 0) printf("win_no_room: ok\n");
  MPI_Finalize();
  return 0;
}
