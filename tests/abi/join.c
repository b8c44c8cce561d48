/* MPI_Comm_join over a TCP connection between ranks 0 and 1 (rank 0 listens on the loopback,
   tells rank 1 the port through MPI); the two get an intercommunicator of one process each. */
#include <mpi.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include "check.h"

int main(int argc, char **argv) {
  int rank, size, fd = -1;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size == 2);
  struct sockaddr_in a = {0};
  socklen_t alen = sizeof a;
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (rank == 0) {
    int l = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(l >= 0 && bind(l, (struct sockaddr *)&a, sizeof a) == 0 && listen(l, 1) == 0);
    CHECK(getsockname(l, (struct sockaddr *)&a, &alen) == 0);
    int port = ntohs(a.sin_port);
    MPI_Send(&port, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    fd = accept(l, NULL, NULL);
    close(l);
  } else {
    int port;
    MPI_Recv(&port, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    a.sin_port = htons(port);
    fd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0);
  }
  CHECK(fd >= 0);
  MPI_Comm ic;
  CHECK(MPI_Comm_join(fd, &ic) == MPI_SUCCESS);
  int rs = 0, x = rank + 10, y = -1;
  MPI_Comm_remote_size(ic, &rs);
  CHECK(rs == 1);
  MPI_Sendrecv(&x, 1, MPI_INT, 0, 0, &y, 1, MPI_INT, 0, 0, ic, MPI_STATUS_IGNORE);
  CHECK(y == (1 - rank) + 10);
  MPI_Comm_disconnect(&ic);
  close(fd);
  if (rank == 0) printf("join: ok\n");
  MPI_Finalize();
  return 0;
}
