//! Simultaneous first contact (issue 13): pairs of processes that connect to each other at the
//! same time end with one working connection, nothing lost or duplicated, across real processes
//! and with 20% of the fabric's UD datagrams dropped. The race itself is forced and checked in
//! many schedules by the `ibdyn-verbs` unit tests (fake provider with InfiniBand's rules) and
//! `verbs/tests/sock.rs` (real sockets); here it runs as users meet it.

mod common;

use common::dvm::{show, Dvm};
use common::*;
use std::time::Duration;

const DROP: (&str, &str) = ("IBDYN_SOCK_DROP", "0.2");

fn ok_line(out: &std::process::Output) -> String {
    lines_with(out, "OK ").join("\n")
}

/// 300 spawns under a two-node DVM; parent and children send to each other before either
/// receives, so every first contact is simultaneous. Half the spawns put their child on the
/// other node, half spawn two children, one per node.
#[test]
fn three_hundred_spawns_under_a_two_node_dvm_with_drops() {
    let s = Scratch::new("race-dvm");
    let mut dvm = Dvm::start_with(&s, 2, &[DROP]);
    let prog = example_bin("connect_race");
    let prog = prog.to_str().unwrap();
    let limit = Duration::from_secs(240);
    let out = dvm.run_for(&["-n", "1", prog, "spawn", "150", "1", "1"], limit);
    assert!(out.status.success(), "{}", show(&out));
    assert_eq!(
        ok_line(&out),
        "OK 150 spawns of 1 child(ren), children on nodes {1}",
        "{}",
        show(&out)
    );
    let out = dvm.run_for(&["-n", "1", prog, "spawn", "75", "2"], limit);
    assert!(out.status.success(), "{}", show(&out));
    assert_eq!(
        ok_line(&out),
        "OK 75 spawns of 2 child(ren), children on nodes {0, 1}",
        "{}",
        show(&out)
    );
    dvm.stop();
}

/// 8 ranks on 4 emulated nodes start at once and each sends to every other at once, at sizes
/// on both sides of the eager limit; repeated in several jobs.
#[test]
fn all_to_all_of_eight_ranks_on_four_nodes_with_drops() {
    let s = Scratch::new("race-a2a");
    let prog = example_bin("connect_race");
    for job in 0..5 {
        let mut cmd = s.ibdyn(&[
            "run",
            "-n",
            "8",
            "--nodes",
            "4",
            prog.to_str().unwrap(),
            "alltoall",
            "8",
        ]);
        cmd.env(DROP.0, DROP.1);
        let out = run_bounded(cmd, None, Duration::from_secs(120));
        assert!(out.status.success(), "job {job}: {}", show(&out));
        assert!(
            ok_line(&out).starts_with("OK alltoall of 8 ranks, 8 rounds"),
            "job {job}: {}",
            show(&out)
        );
        s.assert_clean();
    }
}
