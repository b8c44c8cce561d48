//! Collectives across real processes: every operation against a local reference, on one node
//! and across emulated nodes, with the automatic choice and with each algorithm forced.

mod common;

fn run(n: &str, nodes: &str, algo: Option<&str>) {
    run_check("coll_check", n, nodes, algo);
}

fn run_check(check: &str, n: &str, nodes: &str, algo: Option<&str>) {
    run_mapped(check, n, nodes, "node", algo);
}

fn run_mapped(check: &str, n: &str, nodes: &str, map_by: &str, algo: Option<&str>) {
    let prog = common::example_bin(check);
    let mut c = common::ibdyn_bounded();
    c.args([
        "run",
        "-n",
        n,
        "--nodes",
        nodes,
        "--map-by",
        map_by,
        prog.to_str().unwrap(),
    ]);
    if let Some(a) = algo {
        c.env("IBDYN_COLL_ALGO", a);
    }
    let out = c.output().expect("start ibdyn run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains(&format!("{check}: all passed on {n} ranks")),
        "{check} n={n} nodes={nodes} algo={algo:?}: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn automatic_choice_on_every_size_from_1_to_9() {
    for n in 1..=9 {
        run(&n.to_string(), "1", None);
    }
}

#[test]
fn across_nodes() {
    run("4", "2", None);
    run("7", "2", None);
    run("5", "3", None);
    run("9", "3", None);
}

/// Nodes holding equal contiguous blocks of ranks: large allgathers go by lanes.
#[test]
fn across_nodes_in_rank_blocks() {
    run_mapped("coll_check", "8", "2", "slot", None);
    run_mapped("coll_check", "9", "3", "slot", None);
}

#[test]
fn each_algorithm_forced() {
    for algo in [
        "allreduce:ring,bcast:scatter_allgather,reduce:rabenseifner,allgather:bruck,alltoall:pairwise",
        "allreduce:rabenseifner,bcast:binomial,reduce:binomial,allgather:ring,alltoall:bruck,barrier:binomial",
        "allreduce:recursive_doubling,allgather:recursive_doubling,alltoall:linear,gather:linear,scatter:linear,scan:linear,exscan:linear,reduce_scatter_block:ring",
    ] {
        run("6", "1", Some(algo));
        run("7", "2", Some(algo));
    }
}

/// scatterv, alltoallv, reduce_scatter with counts, the varcount gathers and the non-blocking
/// forms (two outstanding, completed out of order), uneven counts with zeros, and refused
/// counts coming back as errors.
#[test]
fn varcount_and_immediate_forms() {
    for n in ["1", "2", "3", "5"] {
        run_check("coll_varcount_check", n, "1", None);
    }
    run_check("coll_varcount_check", "3", "2", None);
    run_check("coll_varcount_check", "5", "2", None);
    run_check(
        "coll_varcount_check",
        "5",
        "1",
        Some("alltoallv:linear,reduce_scatter:ring,reduce_scatter_block:binomial,scan:linear,exscan:linear"),
    );
    run_check(
        "coll_varcount_check",
        "3",
        "1",
        Some("reduce_scatter:binomial,alltoall:bruck,allgather:ring,gather:linear,scatter:linear"),
    );
}

/// Node collective buffers that outlived their creator (`ibdyn-<pid>-coll-*` of a dead pid).
fn stale_node_buffers() -> Vec<String> {
    let Ok(dir) = std::fs::read_dir("/dev/shm") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| {
            let Some((pid, rest)) = name.strip_prefix("ibdyn-").and_then(|r| r.split_once('-'))
            else {
                return false;
            };
            rest.starts_with("coll-")
                && pid
                    .parse::<u32>()
                    .is_ok_and(|p| !std::path::Path::new(&format!("/proc/{p}")).exists())
        })
        .collect()
}

#[test]
fn node_buffer_against_point_to_point_on_one_node() {
    // The default takes the shared-memory collective buffer on one node; `<op>:p2p` keeps the
    // same operations on point-to-point messages. Both must give the reference results.
    run("5", "1", None);
    run(
        "5",
        "1",
        Some("barrier:p2p,bcast:p2p,reduce:p2p,allreduce:p2p,gather:p2p,allgather:p2p"),
    );
    run("4", "1", Some("reduce:p2p,allgather:p2p"));
    let stale = stale_node_buffers();
    assert!(
        stale.is_empty(),
        "node collective buffers left behind: {stale:?}"
    );
}
