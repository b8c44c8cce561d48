"""Spawns of this script with ibdyn_prestart=1 (mpi4py on ibdyn's ABI): the first starts its
child, the next take prestarted copies, which are forked from a template interpreter once it
is ready. Each child prints a line before it imports MPI (the test counts one per child that
ran), computes with its parent over the merged communicator, and reports how it was started:
os.environ is the interpreter's first environment, so a forked copy shows its template's
IBDYN_PRESTARTED=template, an exec'd copy 1, a cold child nothing."""
import os
import sys
import time

if sys.argv[1:] == ["child"]:
    print("prestart.py: child before MPI", flush=True)
    from mpi4py import MPI

    parent = MPI.Comm.Get_parent()
    merged = parent.Merge(high=True)
    total = merged.allreduce(merged.Get_rank() + 1)
    merged.send((total, os.environ.get("IBDYN_PRESTARTED", "cold")), dest=0, tag=7)
    merged.Free()
    parent.Disconnect()
    sys.exit(0)

from mpi4py import MPI

info = MPI.Info.Create()
info.Set("ibdyn_prestart", "1")
roles = []
deadline = time.monotonic() + 30
while not roles or roles[-1] != "template":
    assert time.monotonic() < deadline, f"no forked copy within 30 s: {roles}"
    child = MPI.COMM_SELF.Spawn(sys.executable, [__file__, "child"], 1, info)
    merged = child.Merge(high=False)
    assert merged.allreduce(merged.Get_rank() + 1) == 3
    total, role = merged.recv(source=1, tag=7)
    assert total == 3, total
    roles.append(role)
    merged.Free()
    child.Disconnect()
assert roles[0] == "cold" and all(r in ("1", "template") for r in roles[1:]), roles
print(f"prestart.py: ok, {len(roles)} children ({' '.join(roles)})")
