//! Progress while blocked: a process inside a blocking process-manager call still answers
//! fabric connection requests, so a peer's connect never waits for its next communication call.

mod common;

#[test]
fn a_connection_is_answered_from_inside_a_pmi_fence() {
    let prog = common::example_bin("progress_check");
    let mut c = common::ibdyn_bounded();
    c.args(["run", "-n", "2", "--nodes", "2", "--map-by", "node"])
        .arg(&prog)
        .env("IBDYN_PROVIDER", "sock");
    let out = c.output().expect("start ibdyn run");
    let stdout = common::text(&out.stdout);
    let stderr = common::text(&out.stderr);
    assert!(
        out.status.success(),
        "job failed: {}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    assert!(
        stdout.contains("progress_check: rank 0 answered the connection from a PMI fence"),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
}
