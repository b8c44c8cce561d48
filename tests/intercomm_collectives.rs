//! Intercommunicator collectives across real processes (`tests/programs/intercoll_check.rs`):
//! intercommunicators 1+3, 2+2, 3+5 made with split + intercomm_create, on one node and
//! across 2 and 3 emulated nodes; and the two-level (node-aware) intracommunicator forms
//! against the flat ones across nodes. Build the examples first:
//! `cargo build -p ibdyn --examples && cargo test -p ibdyn --test intercomm_collectives`.

use std::path::PathBuf;
use std::process::Command;

fn example(name: &str) -> PathBuf {
    let mut p = std::env::current_exe().expect("test binary path");
    p.pop();
    if p.ends_with("deps") {
        p.pop();
    }
    p.join("examples").join(name)
}

fn run(
    prog: &str,
    n: usize,
    nodes: usize,
    map_by_node: bool,
    args: &[&str],
    algo: Option<&str>,
    expect: &str,
) {
    let path = example(prog);
    let mut c = Command::new(example("ibdyn"));
    let (n_s, nodes_s) = (n.to_string(), nodes.to_string());
    c.args(["run", "-n", &n_s, "--nodes", &nodes_s]);
    if map_by_node {
        c.args(["--map-by", "node"]);
    }
    c.arg(path.to_str().expect("utf-8 path")).args(args);
    if let Some(a) = algo {
        c.env("IBDYN_COLL_ALGO", a);
    }
    let out = c.output().expect("start ibdyn run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains(expect),
        "{prog} n={n} nodes={nodes} args={args:?} algo={algo:?}: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

fn inter(a: usize, b: usize, nodes: usize, map_by_node: bool) {
    let a_s = a.to_string();
    run(
        "intercoll_check",
        a + b,
        nodes,
        map_by_node,
        &[&a_s],
        None,
        &format!("all passed on {a}+{b} ranks"),
    );
}

#[test]
fn intercomm_on_one_node() {
    for (a, b) in [(1, 3), (2, 2), (3, 5)] {
        inter(a, b, 1, false);
    }
}

#[test]
fn intercomm_across_two_nodes() {
    for (a, b) in [(1, 3), (2, 2), (3, 5)] {
        inter(a, b, 2, true);
    }
}

#[test]
fn intercomm_across_three_nodes() {
    inter(1, 3, 3, false);
    inter(2, 2, 3, true);
    inter(3, 5, 3, true);
}

/// intercoll_check also compares the two-level forms with the flat ones on the world;
/// here with nodes holding contiguous rank blocks and round-robin placement.
#[test]
fn two_level_matches_flat_across_nodes() {
    inter(3, 3, 2, false);
    inter(3, 4, 3, true);
}

/// The intracommunicator conformance check with its two-level forms active, each level
/// running a forced algorithm, and with everything forced flat.
#[test]
fn two_level_with_forced_algorithms() {
    for algo in [
        "allreduce:ring,bcast:scatter_allgather,reduce:rabenseifner,allgather:bruck",
        "allreduce:rabenseifner,bcast:binomial,reduce:binomial,allgather:ring,barrier:binomial",
        "allreduce:flat,bcast:flat,reduce:flat,allgather:flat,barrier:flat",
    ] {
        run(
            "coll_check",
            7,
            3,
            false,
            &[],
            Some(algo),
            "coll_check: all passed on 7 ranks",
        );
    }
    run(
        "coll_check",
        6,
        2,
        true,
        &[],
        None,
        "coll_check: all passed on 6 ranks",
    );
}

/// The local steps of the intercommunicator forms (and the non-blocking forms among them)
/// on point-to-point messages instead of the node's shared-memory collective buffer; rooted
/// bcast and reduce then also go through the other group's leader instead of the buffer
/// spanning the root and the other group.
#[test]
fn intercomm_on_one_node_without_node_buffer() {
    for (a, b) in [(1, 3), (2, 2), (3, 5)] {
        let a_s = a.to_string();
        run(
            "intercoll_check",
            a + b,
            1,
            false,
            &[&a_s],
            Some("barrier:p2p,bcast:p2p,reduce:p2p,allreduce:p2p,gather:p2p,allgather:p2p"),
            &format!("all passed on {a}+{b} ranks"),
        );
    }
}
