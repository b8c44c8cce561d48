/* Connect/accept latency between two ranks of one job: rank 0 opens a port and accepts N
   times on it, rank 1 connects N times; each pair exchanges one int and disconnects. Prints
   rank 1's mean time in MPI_Comm_connect and its mean round (connect, send, disconnect).
   Run with 2 ranks. */
#include <mpi.h>
#include "bench.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, n = iters(300);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char port[MPI_MAX_PORT_NAME] = {0};
  if (rank == 0) MPI_Open_port(MPI_INFO_NULL, port);
  MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
  double in_connect = 0, t0 = MPI_Wtime();
  for (int i = 0; i < n && rank < 2; i++) {
    MPI_Comm c;
    int v = i;
    if (rank == 0) {
      MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &c);
      MPI_Recv(&v, 1, MPI_INT, 0, 1, c, MPI_STATUS_IGNORE);
    } else {
      double a = MPI_Wtime();
      MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &c);
      in_connect += MPI_Wtime() - a;
      MPI_Send(&v, 1, MPI_INT, 0, 1, c);
    }
    MPI_Comm_disconnect(&c);
  }
  double round = (MPI_Wtime() - t0) * 1e6 / n;
  if (rank == 1)
    printf("# connect/accept latency (us): rank 1's mean, %d iterations\n# what latency\n"
           "connect %.3f\nround %.3f\n", n, in_connect * 1e6 / n, round);
  if (rank == 0) MPI_Close_port(port);
  MPI_Finalize();
  return 0;
}
