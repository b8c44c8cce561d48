//! The PMI service of the daemons through real jobs of `tests/programs/pmi_check.rs`: put/fence/get,
//! allgather, ifence/iallgather, get_wait, name service, on one and several daemons, and the
//! faults of issue 2 (dead rank in a collective, malformed lines, intruders, abort).

mod common;

use common::*;

fn pmi_check(s: &Scratch, n: u32, nodes: u32, extra: &[&str], mode: &str) -> std::process::Output {
    let (n, nodes) = (n.to_string(), nodes.to_string());
    let prog = example_bin("pmi_check");
    let mut args = vec!["run", "-n", &n, "--nodes", &nodes];
    args.extend_from_slice(extra);
    args.push(prog.to_str().unwrap());
    args.push(mode);
    s.run(&args, None)
}

#[test]
fn put_fence_get_allgather_nonblocking_on_one_daemon() {
    let s = Scratch::new("basic1");
    for n in [1, 2, 4, 8] {
        assert_all_ok(&pmi_check(&s, n, 1, &[], "basic"), n);
    }
}

#[test]
fn put_fence_get_allgather_nonblocking_on_three_daemons() {
    let s = Scratch::new("basic3");
    for n in [3, 5, 8] {
        assert_all_ok(&pmi_check(&s, n, 3, &[], "basic"), n);
    }
    assert_all_ok(&pmi_check(&s, 7, 3, &["--map-by", "node"], "basic"), 7);
}

#[test]
fn more_daemons_than_ranks() {
    let s = Scratch::new("sparse");
    assert_all_ok(&pmi_check(&s, 2, 4, &[], "basic"), 2);
}

fn assert_collective_fails_naming_rank_1(out: &std::process::Output, n: u32, what: &str) {
    let failed = lines_with(out, "COLL-FAILED");
    assert_eq!(
        failed.len(),
        n as usize - 1,
        "stdout:\n{}\nstderr:\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    for l in &failed {
        assert!(l.contains("rank 1 ") && l.contains(what), "{l}");
    }
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
}

#[test]
fn a_rank_exiting_during_a_fence_fails_the_others_naming_it() {
    let s = Scratch::new("diefence");
    for nodes in [1, 3] {
        let out = pmi_check(&s, 4, nodes, &[], "die-in-fence");
        assert_collective_fails_naming_rank_1(&out, 4, "fence");
    }
}

#[test]
fn a_rank_exiting_during_an_allgather_fails_the_others_naming_it() {
    let s = Scratch::new("dieag");
    for nodes in [1, 3] {
        let out = pmi_check(&s, 4, nodes, &[], "die-in-allgather");
        assert_collective_fails_naming_rank_1(&out, 4, "allgather");
    }
}

#[test]
fn malformed_and_unknown_lines_get_errors_and_service_continues() {
    let s = Scratch::new("malformed");
    for nodes in [1, 2] {
        assert_all_ok(&pmi_check(&s, 4, nodes, &[], "malformed"), 4);
    }
}

#[test]
fn tcp_connections_without_the_secret_are_refused_and_logged() {
    let s = Scratch::new("intruder");
    let out = pmi_check(&s, 3, 3, &[], "intruder");
    assert_all_ok(&out, 3);
    assert_eq!(lines_with(&out, "REFUSED").len(), 4, "launcher + 3 daemons");
    let err = text(&out.stderr);
    assert_eq!(
        err.matches("refused TCP connection").count(),
        4,
        "stderr: {err}"
    );
}

#[test]
fn abort_ends_the_job_with_its_code_and_message() {
    let s = Scratch::new("abort");
    for nodes in [1, 2] {
        let out = pmi_check(&s, 3, nodes, &[], "abort");
        assert_eq!(out.status.code(), Some(7));
        let err = text(&out.stderr);
        assert!(
            err.contains("rank 1 aborted the job with code 7: test abort"),
            "stderr: {err}"
        );
    }
}

#[test]
fn get_wait_times_out_naming_the_key() {
    let s = Scratch::new("getwait");
    for nodes in [1, 2] {
        let out = pmi_check(&s, 2, nodes, &[], "getwait-timeout");
        assert_all_ok(&out, 2);
        let l = lines_with(&out, "GETWAIT-TIMEOUT");
        assert_eq!(l.len(), 1);
        assert!(l[0].contains("never-put-key"), "{}", l[0]);
    }
}

#[test]
fn a_program_without_a_launcher_is_a_singleton() {
    let out = run_bounded(
        std::process::Command::new(example_bin("pmi_check")),
        None,
        std::time::Duration::from_secs(60),
    );
    assert_all_ok(&out, 1);
}
