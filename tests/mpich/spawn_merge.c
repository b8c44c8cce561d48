/* MPI_Comm_spawn through ibdyn's daemons (PMI-1 mcmd=spawn): the parents spawn
 * argv[1] children, both sides merge and allreduce over the merged communicator.
 * Parents print "OK <rank>", children "CHILD OK <rank>". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm parent, inter, merged;
    MPI_Comm_get_parent(&parent);
    int rank, size, nchildren = argc > 1 ? atoi(argv[1]) : 2;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int is_child = parent != MPI_COMM_NULL;
    if (!is_child) {
        char *args[] = {argv[1], NULL};
        int errs[64];
        MPI_Comm_spawn(argv[0], args, nchildren, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs);
    } else {
        inter = parent;
    }
    int remote;
    MPI_Comm_remote_size(inter, &remote);
    MPI_Intercomm_merge(inter, is_child, &merged);
    int mrank, msize;
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    long mine = mrank, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, merged);
    int total = size + remote;
    int ok = msize == total && sum == (long)total * (total - 1) / 2 &&
             (is_child ? mrank >= remote : mrank == rank);
    printf("%s %d of %d: merged %d of %d sum %ld\n", is_child ? "child" : "parent", rank, size,
           mrank, msize, sum);
    if (ok)
        printf("%sOK %d\n", is_child ? "CHILD " : "", rank);
    MPI_Comm_free(&merged);
    MPI_Comm_disconnect(&inter);
    MPI_Finalize();
    return ok ? 0 : 1;
}
