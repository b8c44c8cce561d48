"""mpi4py on ibdyn: point-to-point of buffers and pickled objects, collectives, spawn +
merge + disconnect, connect/accept. Run with 2 or more ranks; the spawned children run this
file with the argument "child". Every check is an assert; rank 0 prints the last line."""
import sys

import array

from mpi4py import MPI


def child():
    parent = MPI.Comm.Get_parent()
    assert parent != MPI.COMM_NULL
    n = parent.bcast(None, root=0)
    parent.send({"child": MPI.COMM_WORLD.Get_rank(), "n": n}, dest=0, tag=3)
    merged = parent.Merge(high=True)
    total = merged.allreduce(1)
    assert total == merged.Get_size()
    merged.Free()
    parent.Disconnect()


def p2p(comm):
    rank, size = comm.Get_rank(), comm.Get_size()
    right, left = (rank + 1) % size, (rank - 1) % size
    # buffers
    out = array.array("d", [rank + 0.5] * 4)
    got = array.array("d", [0.0] * 4)
    comm.Sendrecv([out, MPI.DOUBLE], right, 1, [got, MPI.DOUBLE], left, 1)
    assert list(got) == [left + 0.5] * 4
    req = comm.Irecv([got, MPI.DOUBLE], source=left, tag=2)
    comm.Send([out, MPI.DOUBLE], dest=right, tag=2)
    st = MPI.Status()
    req.Wait(st)
    assert st.Get_source() == left and st.Get_count(MPI.DOUBLE) == 4
    # pickled objects
    obj = {"from": rank, "data": list(range(rank + 3)), "text": "é" * rank}
    back = comm.sendrecv(obj, dest=right, source=left)
    assert back["from"] == left and back["data"] == list(range(left + 3))
    reqs = [comm.isend(("msg", rank, i), dest=right, tag=10 + i) for i in range(3)]
    for i in range(3):
        assert comm.recv(source=left, tag=10 + i) == ("msg", left, i)
    MPI.Request.waitall(reqs)
    if comm.Iprobe(source=MPI.ANY_SOURCE, tag=99):
        raise AssertionError("a message nobody sent")


def collectives(comm):
    rank, size = comm.Get_rank(), comm.Get_size()
    assert comm.bcast({"root": "hello"} if rank == 0 else None, root=0) == {"root": "hello"}
    assert comm.allreduce(rank, op=MPI.SUM) == size * (size - 1) // 2
    assert comm.allreduce(rank, op=MPI.MAX) == size - 1
    assert comm.gather(rank * 2, root=0) == ([2 * i for i in range(size)] if rank == 0 else None)
    assert comm.scatter([i * i for i in range(size)] if rank == 0 else None, root=0) == rank * rank
    assert comm.allgather(rank) == list(range(size))
    assert comm.alltoall([(rank, j) for j in range(size)]) == [(j, rank) for j in range(size)]
    assert comm.scan(1) == rank + 1
    assert comm.exscan(1) == (rank if rank > 0 else None)
    buf = array.array("i", [rank] * 3)
    res = array.array("i", [0] * 3)
    comm.Allreduce([buf, MPI.INT], [res, MPI.INT], op=MPI.SUM)
    assert list(res) == [size * (size - 1) // 2] * 3
    allv = array.array("i", [0] * size)
    comm.Allgather([array.array("i", [rank]), MPI.INT], [allv, MPI.INT])
    assert list(allv) == list(range(size))
    req = comm.Ibarrier()
    req.Wait()
    req = comm.Iallreduce([buf, MPI.INT], [res, MPI.INT], op=MPI.SUM)
    req.Wait()
    assert list(res) == [size * (size - 1) // 2] * 3
    comm.Barrier()


def spawn(comm):
    rank = comm.Get_rank()
    children = comm.Spawn(sys.executable, args=[__file__, "child"], maxprocs=2, root=0)
    assert children.Get_remote_size() == 2
    children.bcast(7 if rank == 0 else None, root=MPI.ROOT if rank == 0 else MPI.PROC_NULL)
    if rank == 0:
        seen = sorted(children.recv(source=MPI.ANY_SOURCE, tag=3)["child"] for _ in range(2))
        assert seen == [0, 1]
    merged = children.Merge(high=False)
    assert merged.Get_size() == comm.Get_size() + 2
    assert merged.allreduce(1) == merged.Get_size()
    merged.Free()
    children.Disconnect()


def connect_accept(comm):
    rank, size = comm.Get_rank(), comm.Get_size()
    low = rank < size // 2
    local = comm.Split(int(low), rank)
    port = MPI.Open_port() if rank == 0 else None
    port = comm.bcast(port, root=0)
    if low:
        inter = local.Accept(port, root=0)
    else:
        inter = local.Connect(port, root=0)
    assert inter.Is_inter()
    mine = "low" if low else "high"
    theirs = inter.allgather(mine)
    assert all(t == ("high" if low else "low") for t in theirs)
    inter.Disconnect()
    if rank == 0:
        MPI.Close_port(port)
    local.Free()


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        child()
        return
    comm = MPI.COMM_WORLD
    assert "ibdyn" in MPI.Get_library_version()
    p2p(comm)
    collectives(comm)
    spawn(comm)
    if comm.Get_size() >= 2:
        connect_accept(comm)
    comm.Barrier()
    if comm.Get_rank() == 0:
        print(f"mpi4py suite: ok on {comm.Get_size()} ranks", flush=True)


main()
