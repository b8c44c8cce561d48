//! Sessions across real processes: process-set queries, communicators from groups and
//! between groups, two sessions at once, finalize and re-init in one process, a universe
//! alongside, launcher-defined sets, and the bad-input errors (tests/programs/sessions_check.rs).

mod common;

use std::process::Output;

fn run(args: &[&str]) -> Output {
    common::ibdyn_bounded()
        .arg("run")
        .args(args)
        .output()
        .expect("start ibdyn run")
}

fn assert_all_passed(out: &Output, ranks: usize, what: &str) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.matches("sessions_check: all passed").count() == ranks,
        "{what}: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn sessions_psets_and_communicators_from_groups() {
    let prog = common::example_bin("sessions_check");
    let p = prog.to_str().unwrap();
    for nodes in ["1", "2"] {
        let out = run(&["-n", "4", "--nodes", nodes, p]);
        assert_all_passed(&out, 4, &format!("4 processes on {nodes} node(s)"));
    }
}

#[test]
fn sessions_without_a_universe_reinit_and_leave_at_exit() {
    let prog = common::example_bin("sessions_check");
    let p = prog.to_str().unwrap();
    for nodes in ["1", "2"] {
        let out = run(&["-n", "4", "--nodes", nodes, p, "sessions-only"]);
        assert_all_passed(&out, 4, &format!("sessions only, {nodes} node(s)"));
    }
}

#[test]
fn a_stale_part_of_a_reinitialised_peer_is_refused() {
    let prog = common::example_bin("sessions_check");
    let p = prog.to_str().unwrap();
    for nodes in ["1", "2"] {
        let out = run(&["-n", "2", "--nodes", nodes, p, "stale-peer"]);
        assert_all_passed(&out, 2, &format!("stale peer, {nodes} node(s)"));
    }
}

#[test]
fn many_communicators_from_groups_with_one_tag_never_share_a_context() {
    let prog = common::example_bin("sessions_check");
    let p = prog.to_str().unwrap();
    for nodes in ["1", "2"] {
        let out = run(&["-n", "4", "--nodes", nodes, p, "same-tag"]);
        assert_all_passed(&out, 4, &format!("one tag, {nodes} node(s)"));
    }
}

#[test]
fn sets_named_on_the_launcher() {
    let prog = common::example_bin("sessions_check");
    let p = prog.to_str().unwrap();
    let out = run(&[
        "-n",
        "4",
        "--pset",
        "app://even=0,2",
        "--pset",
        "app://odd=1,3",
        p,
        "launcher-sets",
    ]);
    assert_all_passed(&out, 4, "--pset");
    // A duplicate name, an out-of-range rank: refused before anything starts.
    for bad in [
        ["--pset", "app://a=0", "--pset", "app://a=1"],
        ["--pset", "app://a=9", "--pset", "app://b=1"],
    ] {
        let mut args = vec!["-n", "4"];
        args.extend_from_slice(&bad);
        args.extend_from_slice(&[p, "launcher-sets"]);
        let out = run(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.code() == Some(2) && err.contains("--pset"),
            "{bad:?}: {:?} {err}",
            out.status
        );
    }
}
