"""Spawn latency of a Python (mpi4py) child, with and without ibdyn_prestart.

    ibdyn run -n 1 python bench/python/spawn_latency.py [--reps 20] [--prestart 0,1] [--gap 0.2]

Each row: MPI_Comm_spawn of one copy of this script (which imports mpi4py, takes its parent and
disconnects), from the call to its return, after one unmeasured spawn. `--gap S` waits S seconds
between spawns, outside the measurement (a master that spawns now and then: the daemon has
started the next copy by then; back to back, a spawn waits for the copy still starting).
Beside it, measured in the same run: fork+exec+exit of /bin/true, and of `python -c "import mpi4py"` (the
interpreter's start-up, which a prestarted copy has behind it).
"""
import sys
import time


def child():
    from mpi4py import MPI

    MPI.Comm.Get_parent().Disconnect()


def exec_floor(cmd, reps):
    import statistics
    import subprocess

    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        ts.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ts)


def main():
    import argparse
    import statistics

    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--prestart", default="0,1")
    ap.add_argument("--gap", type=float, default=0.0)
    a = ap.parse_args()
    from mpi4py import MPI

    print("# python spawn-latency (ms), one child, %d spawns per row, gap %g s" % (a.reps, a.gap))
    print("%-10s %8s %8s %8s" % ("prestart", "median", "mean", "max"))
    for pre in a.prestart.split(","):
        info = MPI.Info.Create()
        if pre != "0":
            info.Set("ibdyn_prestart", pre)
        ts = []
        for i in range(a.reps + 1):
            t0 = time.perf_counter()
            c = MPI.COMM_SELF.Spawn(sys.executable, [__file__, "child"], 1, info)
            t = (time.perf_counter() - t0) * 1e3
            c.Disconnect()
            if i > 0:
                ts.append(t)
            time.sleep(a.gap)
        info.Free()
        print("%-10s %8.2f %8.2f %8.2f" % (pre, statistics.median(ts), statistics.mean(ts), max(ts)))
    reps = min(a.reps, 20)
    print("floor: fork+exec+exit /bin/true %.2f ms (median)" % exec_floor(["/bin/true"], reps))
    print(
        "python -c 'import mpi4py' %.2f ms (median)"
        % exec_floor([sys.executable, "-c", "import mpi4py"], reps)
    )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        child()
    else:
        main()
