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
fn with_run_prestart_a_grow_takes_the_copies_started_ahead() {
    let p = prog();
    for nodes in ["1", "2"] {
        let out = run(&["-n", "2", "--nodes", nodes, "--prestart", "2", &p, "grow"]);
        assert_lines(
            &out,
            &[("grow", 2), ("added", 0)],
            true,
            &format!("{nodes} node(s)"),
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            stdout.matches("added ok (prestarted)").count(),
            2,
            "{nodes} node(s):\n{stdout}"
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

/// Reads the job's stdout until `line` shows (bounded by the test's timeout of the job),
/// then returns the reader for the rest.
fn wait_for_line(
    out: std::process::ChildStdout,
    line: &str,
) -> (
    std::thread::JoinHandle<String>,
    std::sync::mpsc::Receiver<()>,
) {
    use std::io::BufRead;
    let (tx, rx) = std::sync::mpsc::channel();
    let line = line.to_string();
    let h = std::thread::spawn(move || {
        let mut all = String::new();
        for l in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            if l.trim().starts_with(&line) {
                let _ = tx.send(());
            }
            all.push_str(&l);
            all.push('\n');
        }
        all
    });
    (h, rx)
}

/// `ibdyn resize --grow 2` then at once `--shrink 3`, as a script does: the shrink waits
/// until the job has integrated the grow (it is refused as busy before), then takes effect.
#[test]
fn back_to_back_resizes_wait_for_the_previous_one() {
    use std::process::Stdio;
    let p = common::example_bin("resize");
    let s = Scratch::new("resize-b2b");
    let mut child = s
        .ibdyn(&[
            "run",
            "-n",
            "2",
            p.to_str().unwrap(),
            "--iters",
            "30",
            "--pause-ms",
            "100",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .stdin(Stdio::null())
        .spawn()
        .expect("start the job");
    let (reader, ready) = wait_for_line(child.stdout.take().expect("stdout"), "resize: job ");
    if ready.recv_timeout(Duration::from_secs(60)).is_err() {
        let _ = child.kill();
        panic!("the job never got ready");
    }
    let limit = Duration::from_secs(60);
    let grow = common::run_bounded(s.ibdyn(&["resize", "--grow", "2"]), None, limit);
    let shrink = common::run_bounded(s.ibdyn(&["resize", "--shrink", "3"]), None, limit);
    let status = common::wait_bounded(&mut child, Duration::from_secs(120));
    let stdout = reader.join().unwrap_or_default();
    assert!(
        grow.status.success()
            && shrink.status.success()
            && status.success()
            && stdout.contains("now 4 processes")
            && stdout.contains("now 1 processes")
            && stdout.contains("(expected"),
        "grow {} {}\nshrink {} {}\njob {status}\n{stdout}",
        grow.status,
        common::text(&grow.stderr),
        shrink.status,
        common::text(&shrink.stderr)
    );
    let sum = stdout
        .lines()
        .find(|l| l.contains("(expected"))
        .unwrap_or("");
    let (got, want) = sum
        .split_once(" = ")
        .and_then(|(_, r)| r.split_once(" (expected "))
        .map(|(g, w)| (g.to_string(), w.split(')').next().unwrap_or("").to_string()))
        .unwrap_or_default();
    assert_eq!(got, want, "{stdout}");
    s.assert_clean();
}

/// Starts `job`, waits for its rank 0 to wait for a change, runs `ibdyn resize ARGS`, and
/// returns the job's stdout and the resize's output.
fn resize_while_running(
    s: &Scratch,
    mut job: std::process::Command,
    resize: &[&str],
) -> (String, Output, std::process::ExitStatus) {
    use std::process::Stdio;
    let mut child = job
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .stdin(Stdio::null())
        .spawn()
        .expect("start the job");
    let (reader, waiting) = wait_for_line(
        child.stdout.take().expect("stdout"),
        "psets_dyn_check: waiting for resize",
    );
    if waiting.recv_timeout(Duration::from_secs(60)).is_err() {
        let _ = child.kill();
        panic!("the job never waited for a resize");
    }
    // The job is listed with its main set and contact.
    let list = common::run_bounded(
        s.ibdyn(&["resize", "--list"]),
        None,
        Duration::from_secs(60),
    );
    let listed = common::text(&list.stdout);
    assert!(
        list.status.success()
            && listed.contains("main set ibdyn://job")
            && listed.contains("node0/pmi.sock"),
        "resize --list: {listed}{}",
        common::text(&list.stderr)
    );
    let mut args = vec!["resize"];
    args.extend_from_slice(resize);
    let r = common::run_bounded(s.ibdyn(&args), None, Duration::from_secs(60));
    let status = common::wait_bounded(&mut child, Duration::from_secs(120));
    (reader.join().unwrap_or_default(), r, status)
}

#[test]
fn ibdyn_resize_grows_and_shrinks_a_running_job() {
    let p = prog();
    for (n, change, from_to, added, retired) in [
        ("2", ["--grow", "2"], "resized from 2 to 4", 2, 0),
        ("3", ["--shrink", "1"], "resized from 3 to 2", 0, 1),
    ] {
        let s = Scratch::new("resize");
        let job = s.ibdyn(&["run", "-n", n, "--nodes", "2", &p, "resize"]);
        let (stdout, r, status) = resize_while_running(&s, job, &change);
        let count = |w: &str| stdout.lines().filter(|l| l.trim() == w).count();
        assert!(
            r.status.success()
                && common::text(&r.stdout).contains("delta: ibdyn://")
                && status.success()
                && stdout.contains(from_to)
                && count("psets_dyn_check: resize added ok") == added
                && count("psets_dyn_check: resize retired ok") == retired,
            "{change:?}: resize {}\n{}\njob {status}\n{stdout}",
            r.status,
            common::text(&r.stderr)
        );
        s.assert_clean();
    }
}

/// An MPMD job (`master : worker`) grows by its last application, as it shrinks by its last
/// processes: the new processes are workers.
#[test]
fn an_mpmd_job_grows_by_its_last_application() {
    let p = prog();
    let s = Scratch::new("resize-mpmd");
    let worker = format!("echo worker-app; exec {p} resize");
    let job = s.ibdyn(&[
        "run", "-n", "1", "--nodes", "2", &p, "resize", ":", "-n", "1", "sh", "-c", &worker,
    ]);
    let (stdout, r, status) = resize_while_running(&s, job, &["--grow", "2"]);
    let count = |w: &str| stdout.lines().filter(|l| l.trim() == w).count();
    assert!(
        r.status.success()
            && status.success()
            && stdout.contains("resized from 2 to 4")
            && count("psets_dyn_check: resize added ok") == 2
            && count("worker-app") == 3,
        "resize {}\n{}\njob {status}\n{stdout}",
        r.status,
        common::text(&r.stderr)
    );
    s.assert_clean();
}

/// A bound job's added processes are bound like its ranks, to the units those do not hold
/// (they used to run unbound): one rank on the first hardware thread, the added one on the
/// next (the first again on a machine of one CPU).
#[test]
fn processes_added_to_a_bound_job_take_free_units() {
    let p = prog();
    let s = Scratch::new("resize-bound");
    let mine: Vec<String> = common::cpu_list(&common::my_cpus_text())
        .iter()
        .map(|c| c.to_string())
        .collect();
    let show = format!("grep Cpus_allowed_list /proc/self/status | cut -f2; exec {p} resize");
    let job = s.ibdyn(&["run", "-n", "1", "--bind-to", "hwthread", "sh", "-c", &show]);
    // The session directory of a killed launcher, its socket file left with nothing listening:
    // `ibdyn resize` without a job id is not misled into "2 daemon sets are running".
    let uid = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(&s.dir).unwrap());
    let stale = s.dir.join(format!("ibdyn-{uid}-1-stale"));
    std::fs::create_dir_all(stale.join("node0")).unwrap();
    drop(std::os::unix::net::UnixListener::bind(stale.join("node0/pmi.sock")).unwrap());
    let (stdout, r, status) = resize_while_running(&s, job, &["--grow", "1"]);
    std::fs::remove_dir_all(&stale).unwrap();
    assert!(
        r.status.success() && status.success() && stdout.contains("resized from 1 to 2"),
        "resize {}\n{}\njob {status}\n{stdout}",
        r.status,
        common::text(&r.stderr)
    );
    let cpus: Vec<&str> = stdout
        .lines()
        .filter(|l| {
            !l.is_empty()
                && l.chars()
                    .all(|c| c.is_ascii_digit() || c == '-' || c == ',')
        })
        .collect();
    let second = mine.get(1).unwrap_or(&mine[0]);
    assert_eq!(cpus, [mine[0].as_str(), second.as_str()], "{stdout}");
    s.assert_clean();
}

#[test]
fn ibdyn_resize_under_a_dvm() {
    let p = prog();
    let s = Scratch::new("resize-dvm");
    let mut dvm = common::dvm::Dvm::start(&s, 2);
    let job = s.ibdyn(&["run", "--dvm", "-n", "2", &p, "resize"]);
    let (stdout, r, status) = resize_while_running(&s, job, &["--grow", "1"]);
    assert!(
        r.status.success() && status.success() && stdout.contains("resized from 2 to 3"),
        "resize {}\n{}\njob {status}\n{stdout}",
        r.status,
        common::text(&r.stderr)
    );
    dvm.stop();
}

#[test]
fn jobs_of_a_dvm_naming_a_set_alike_keep_their_own() {
    let p = prog();
    let s = Scratch::new("named-dvm");
    let mut dvm = common::dvm::Dvm::start(&s, 2);
    // One after the other, so the first job's set is in the registry when the second names
    // its own alike.
    for def in ["app://x=0", "app://x=1-2"] {
        let out = dvm.run(&["-n", "3", "--pset", def, &p, "named"]);
        assert_lines(&out, &[("named", 3)], true, def);
    }
    dvm.stop();
}

#[test]
fn ibdyn_resize_refuses_what_it_cannot_do() {
    let s = Scratch::new("resize-bad");
    // Nothing runs.
    let r = common::run_bounded(
        s.ibdyn(&["resize", "--grow", "1"]),
        None,
        Duration::from_secs(30),
    );
    assert!(
        r.status.code() == Some(2) && common::text(&r.stderr).contains("no running"),
        "{}",
        common::text(&r.stderr)
    );
    let r = common::run_bounded(
        s.ibdyn(&["resize", "--grow", "1", "--shrink", "1"]),
        None,
        Duration::from_secs(30),
    );
    assert_eq!(r.status.code(), Some(2), "{}", common::text(&r.stderr));
}

#[test]
fn the_resize_example_gets_the_right_sum_through_grows_and_shrinks() {
    let p = common::example_bin("resize");
    let out = run(&[
        "-n",
        "2",
        "--nodes",
        "2",
        p.to_str().unwrap(),
        "--iters",
        "60",
        "--pause-ms",
        "0",
        "--change",
        "10:+2",
        "--change",
        "30:-3",
        "--change",
        "40:+1",
    ]);
    let stdout = common::text(&out.stdout);
    let sum = stdout
        .lines()
        .find(|l| l.starts_with("resize: sum after 60 iterations"))
        .unwrap_or("");
    let retired = stdout.matches("a retired process leaves").count();
    assert!(
        out.status.success()
            && sum.contains("= 304996950000 (expected 304996950000) with 2 processes")
            && retired == 3
            && stdout.contains("iteration 10: now 4 processes")
            && stdout.contains("iteration 30: now 1 processes")
            && stdout.contains("iteration 40: now 2 processes"),
        "{}\n{stdout}\n{}",
        out.status,
        common::text(&out.stderr)
    );
}
