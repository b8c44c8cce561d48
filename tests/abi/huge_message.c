/* One message of 2^31 + 4099 bytes from rank 0 to rank 1 (MPI_Send_c / MPI_Recv_c): the data
 * arrive whole, the _c queries give the exact count and the int ones MPI_UNDEFINED. Run on 2
 * ranks, also on 2 nodes (where the fabric moves it in pieces). */
#include <mpi.h>
#include <string.h>

#include "check.h"

#define BLOCK 4099

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Count n = ((MPI_Count)1 << 31) + BLOCK;
  unsigned char *buf = malloc(n), pattern[BLOCK];
  CHECK(buf != NULL);
  for (int i = 0; i < BLOCK; i++) pattern[i] = (unsigned char)(i * 7 + 3);
  if (rank == 0) {
    for (MPI_Count at = 0; at < n; at += BLOCK) memcpy(buf + at, pattern, BLOCK);
    buf[n - 1] = 0xee;
    CHECK(MPI_Send_c(buf, n, MPI_BYTE, 1, 5, MPI_COMM_WORLD) == MPI_SUCCESS);
  } else if (rank == 1) {
    memset(buf, 0, n);
    MPI_Status st;
    CHECK(MPI_Recv_c(buf, n, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &st) == MPI_SUCCESS);
    for (MPI_Count at = 0; at + BLOCK < n; at += BLOCK) CHECK(memcmp(buf + at, pattern, BLOCK) == 0);
    CHECK(buf[n - 1] == 0xee);
    MPI_Count c = 0, e = 0;
    MPI_Get_count_c(&st, MPI_BYTE, &c);
    MPI_Get_elements_c(&st, MPI_BYTE, &e);
    CHECK(c == n && e == n);
    int ci = 0, ei = 0;
    CHECK(MPI_Get_count(&st, MPI_BYTE, &ci) == MPI_SUCCESS && ci == MPI_UNDEFINED);
    CHECK(MPI_Get_elements(&st, MPI_BYTE, &ei) == MPI_SUCCESS && ei == MPI_UNDEFINED);
  }
  free(buf);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("huge_message: ok, %lld bytes\n", (long long)n);
  MPI_Finalize();
  return 0;
}
