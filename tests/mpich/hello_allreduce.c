/* An MPICH program under `ibdyn run`: its PMI-1 client talks to ibdyn's node daemons.
 * Every rank checks size, an allreduce and a ring exchange, then prints "OK <rank>". */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, appnum_flag = 0, *appnum = NULL, *usize = NULL, usize_flag = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &appnum_flag);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &usize_flag);
    long mine = rank + 1, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    int right = (rank + 1) % size, left = (rank + size - 1) % size, got = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, right, 7, &got, 1, MPI_INT, left, 7, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    int ok = sum == (long)size * (size + 1) / 2 && got == left && appnum_flag && *appnum == 0 &&
             usize_flag && *usize >= size;
    printf("rank %d of %d: sum %ld from left %d appnum %d universe %d\n", rank, size, sum, got,
           appnum_flag ? *appnum : -1, usize_flag ? *usize : -1);
    if (ok)
        printf("OK %d\n", rank);
    MPI_Finalize();
    return ok ? 0 : 1;
}
