//! Point-to-point across real processes started by `ibdyn run`: shared memory on one node,
//! the fabric (sock provider) across emulated nodes.

mod common;
use std::process::Output;

fn ibdyn_run(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut c = common::ibdyn_bounded();
    c.arg("run").args(args);
    for (k, v) in envs {
        c.env(k, v);
    }
    c.output().expect("start ibdyn run")
}

fn assert_ok(out: &Output, expect: &str) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "job failed: {}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    assert!(
        stdout.contains(expect),
        "missing {expect:?} in stdout:\n{stdout}\nstderr:\n{stderr}"
    );
}

fn check(n: &str, nodes: &str, envs: &[(&str, &str)]) {
    let prog = common::example_bin("p2p_check");
    let out = ibdyn_run(
        &[
            "-n",
            n,
            "--nodes",
            nodes,
            "--map-by",
            "node",
            prog.to_str().unwrap(),
        ],
        envs,
    );
    assert_ok(&out, &format!("p2p_check: all passed on {n} ranks"));
}

#[test]
fn p2p_on_one_node_two_ranks() {
    check("2", "1", &[]);
}

#[test]
fn p2p_eight_ranks_on_two_cores() {
    check("8", "1", &[]);
}

#[test]
fn p2p_across_nodes_over_sock() {
    check("4", "2", &[("IBDYN_PROVIDER", "sock")]);
}

#[test]
fn p2p_with_copy_fallback_when_cma_is_off() {
    check("3", "1", &[("IBDYN_CMA", "off")]);
}

#[test]
fn p2p_with_eager_wireup() {
    check(
        "4",
        "2",
        &[("IBDYN_WIREUP", "all"), ("IBDYN_PROVIDER", "sock")],
    );
}

#[test]
fn peer_death_during_rendezvous_is_an_error() {
    for nodes in ["1", "2"] {
        let prog = common::example_bin("peer_death");
        let out = ibdyn_run(
            &[
                "--keep-going",
                "-n",
                "2",
                "--nodes",
                nodes,
                "--map-by",
                "node",
                prog.to_str().unwrap(),
            ],
            &[],
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("send failed as expected") && stdout.contains("rank 1"),
            "nodes={nodes}: rank 0 did not report the dead peer:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A message sent just before its sender exits is read, not failed as from a dead peer: the
/// receiver is held stopped until the sender is reaped and a liveness check is due (see
/// `last_word.rs`), so it finds the sender gone before it reads the message.
#[test]
fn a_last_message_is_read_before_its_sender_counts_as_dead() {
    let prog = common::example_bin("last_word");
    let out = ibdyn_run(&["-n", "1", prog.to_str().unwrap()], &[]);
    assert_ok(&out, "last_word: got it");
}

/// The same from a sender the receiver never sent to: it has no route to it when it finds it
/// gone, and opening one fails, since the sender's segment went with it.
#[test]
fn a_last_message_from_a_peer_never_sent_to_is_read_before_it_counts_as_dead() {
    let prog = common::example_bin("last_word");
    let out = ibdyn_run(&["-n", "1", prog.to_str().unwrap(), "recv-only"], &[]);
    assert_ok(&out, "last_word: got it");
}

/// A dead peer's pid taken by another process does not keep the peer alive: the parent gives
/// the pid of its exited child to a sleeper of its own (`pid_reuse.rs`), and its receive from
/// the child still fails as from a dead peer (pid and start time tell them apart).
#[test]
fn a_dead_peer_whose_pid_was_taken_is_still_dead() {
    let prog = common::example_bin("pid_reuse");
    let out = ibdyn_run(&["-n", "1", prog.to_str().unwrap()], &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    if let Some(why) = stdout.lines().find(|l| l.contains("SKIPPED")) {
        eprintln!("SKIPPED (not a pass): {why}");
        return;
    }
    assert_ok(&out, "pid_reuse: failed as dead: ");
    assert!(stdout.contains("the process has exited"), "{stdout}");
}

#[test]
fn on_demand_wireup_connects_only_to_peers_in_use() {
    let prog = common::example_bin("ring_connections");
    let out = ibdyn_run(
        &[
            "-n",
            "8",
            "--nodes",
            "4",
            "--map-by",
            "node",
            prog.to_str().unwrap(),
        ],
        &[("IBDYN_PROVIDER", "sock")],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Ring neighbours are on other nodes (round-robin placement): two connections each.
    for r in 0..8 {
        assert!(
            stdout.contains(&format!("rank {r}: connections 2")),
            "rank {r}:\n{stdout}"
        );
    }
}

#[test]
fn p2p_across_nodes_with_a_fifth_of_datagrams_dropped() {
    check(
        "4",
        "2",
        &[("IBDYN_PROVIDER", "sock"), ("IBDYN_SOCK_DROP", "0.2")],
    );
}
