//! Collectives across real processes: every operation against a local reference, on one node
//! and across emulated nodes, with the automatic choice and with each algorithm forced.

mod common;

fn run(n: &str, nodes: &str, algo: Option<&str>) {
    let prog = common::example_bin("coll_check");
    let mut c = common::ibdyn_bounded();
    c.args([
        "run",
        "-n",
        n,
        "--nodes",
        nodes,
        "--map-by",
        "node",
        prog.to_str().unwrap(),
    ]);
    if let Some(a) = algo {
        c.env("IBDYN_COLL_ALGO", a);
    }
    let out = c.output().expect("start ibdyn run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains(&format!("coll_check: all passed on {n} ranks")),
        "n={n} nodes={nodes} algo={algo:?}: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn automatic_choice_on_odd_and_even_sizes() {
    for n in ["1", "2", "3", "5", "8"] {
        run(n, "1", None);
    }
}

#[test]
fn across_nodes() {
    run("4", "2", None);
    run("5", "3", None);
}

#[test]
fn each_algorithm_forced() {
    for algo in [
        "allreduce:ring,bcast:scatter_allgather,reduce:rabenseifner,allgather:bruck,alltoall:pairwise",
        "allreduce:rabenseifner,bcast:binomial,reduce:binomial,allgather:ring,alltoall:bruck,barrier:binomial",
        "allreduce:recursive_doubling,allgather:recursive_doubling,alltoall:linear,gather:linear,scatter:linear,scan:linear,exscan:linear,reduce_scatter_block:ring",
    ] {
        run("6", "1", Some(algo));
    }
}
