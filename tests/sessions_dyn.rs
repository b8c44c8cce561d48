//! Dynamic process sets across real processes under `ibdyn run`: set algebra and pset data,
//! shrink, grow, and the faults (start failure, a retired process that never leaves, a
//! member that dies during an integrate). Scenarios: tests/programs/psets_dyn_check.rs.

mod common;

use common::Scratch;
use std::process::Output;
use std::time::Duration;

/// `ibdyn run ARGS` in a scratch dir, bounded; nothing of the job may be left afterwards.
fn run_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let s = Scratch::new("psets");
    let mut c = s.ibdyn(&["run"]);
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = common::run_bounded(c, None, Duration::from_secs(120));
    s.assert_clean();
    out
}

fn run(args: &[&str]) -> Output {
    run_env(args, &[])
}

fn prog() -> String {
    common::example_bin("psets_dyn_check")
        .to_str()
        .expect("utf-8 path")
        .to_string()
}

/// `want` lines of the form `psets_dyn_check: <what> ok`, each with its count.
fn assert_lines(out: &Output, want: &[(&str, usize)], success: bool, what: &str) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let counts_ok = want.iter().all(|(w, n)| {
        stdout
            .lines()
            .filter(|l| l.trim() == format!("psets_dyn_check: {w} ok"))
            .count()
            == *n
    });
    assert!(
        counts_ok && (!success || out.status.success()),
        "{what}: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn set_algebra_origins_data_and_refusals() {
    let p = prog();
    for nodes in ["1", "2"] {
        let out = run_env(
            &[
                "-n",
                "4",
                "--nodes",
                nodes,
                "--pset",
                "app://even=0,2",
                &p,
                "algebra",
            ],
            &[("IBDYN_MAX_PROCS", "4")],
        );
        assert_lines(
            &out,
            &[("algebra", 3), ("retired", 1)],
            true,
            &format!("{nodes} node(s)"),
        );
    }
}

#[test]
fn a_shrink_retires_the_last_rank_and_the_rest_go_on() {
    let p = prog();
    for nodes in ["1", "2"] {
        let out = run(&["-n", "4", "--nodes", nodes, &p, "shrink"]);
        assert_lines(
            &out,
            &[("shrink", 3), ("retired", 1)],
            true,
            &format!("{nodes} node(s)"),
        );
    }
}

#[test]
fn a_grow_starts_processes_that_join_the_new_main_set() {
    let p = prog();
    for nodes in ["1", "2"] {
        let out = run(&["-n", "2", "--nodes", nodes, &p, "grow"]);
        assert_lines(
            &out,
            &[("grow", 2), ("added", 2)],
            true,
            &format!("{nodes} node(s)"),
        );
    }
}

#[test]
fn a_grow_whose_processes_cannot_start_is_cancelled_with_the_spawn_error() {
    let dir = std::env::temp_dir().join(format!("ibdyn-growfail-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let copy = dir.join("psets_dyn_check");
    std::fs::copy(prog(), &copy).expect("copy the program");
    let out = run(&["-n", "2", copy.to_str().unwrap(), "grow-fail"]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_lines(&out, &[("grow-fail", 2)], true, "grow-fail");
}

#[test]
fn a_retired_process_that_never_leaves_is_killed_and_named() {
    let p = prog();
    let out = run_env(
        &["-n", "3", "--keep-going", &p, "stuck"],
        &[("IBDYN_RETIRE_LIMIT_MS", "1500")],
    );
    // Rank 2 was killed: the job's status is not success, the others' lines are there.
    assert_lines(&out, &[("stuck", 2)], false, "stuck");
}

#[test]
fn a_member_that_dies_during_an_integrate_is_named() {
    let p = prog();
    // --keep-going: the launcher would otherwise end the job at the death, racing the check.
    let out = run(&["-n", "3", "--keep-going", &p, "death"]);
    assert_lines(&out, &[("death", 2)], false, "death");
}
