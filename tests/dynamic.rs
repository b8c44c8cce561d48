//! Dynamic processes across real processes: spawn (UD and RC wire-up, one node and across
//! nodes), point-to-point over the intercommunicator, merge, collectives on the merged
//! communicator, disconnect; a spawn of a missing program.

mod common;

use std::process::Output;

fn run(args: &[&str]) -> Output {
    common::ibdyn_bounded()
        .arg("run")
        .args(args)
        .output()
        .expect("start ibdyn run")
}

/// `ibdyn run -n 2 client_server MODE NAME` with `env` set; asserts that it succeeded and
/// printed every one of `expected` on stdout; returns its stderr.
fn client_server(mode: &str, name: &str, env: &[(&str, &str)], expected: &[&str]) -> String {
    let prog = common::example_bin("client_server");
    let out = common::ibdyn_bounded()
        .args(["run", "-n", "2", prog.to_str().unwrap(), mode, name])
        .envs(env.iter().copied())
        .output()
        .expect("start ibdyn run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success() && expected.iter().all(|e| stdout.contains(e)),
        "{}\n{stdout}\n{stderr}",
        out.status
    );
    stderr
}

fn assert_passed(out: &Output, what: &str) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("dynamic_check: all passed"),
        "{what}: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn spawn_merge_and_disconnect() {
    let prog = common::example_bin("dynamic_check");
    let p = prog.to_str().unwrap();
    for (n, nodes, wireup, kids) in [
        ("1", "1", "ud", "1"),
        ("2", "1", "ud", "3"),
        ("2", "2", "ud", "3"),
        ("3", "2", "rc", "2"),
    ] {
        let out = run(&["-n", n, "--nodes", nodes, p, wireup, kids]);
        assert_passed(
            &out,
            &format!("{n} parents on {nodes} node(s), {wireup} wire-up, {kids} children"),
        );
    }
}

#[test]
fn spawning_a_missing_program_is_an_error_and_the_parents_go_on() {
    let prog = common::example_bin("dynamic_check");
    let out = run(&["-n", "2", prog.to_str().unwrap(), "missing"]);
    assert_passed(&out, "missing program");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("/nonexistent/ibdyn-no-such-program") && stdout.contains("No such file"),
        "{stdout}"
    );
}

#[test]
fn five_hundred_spawn_cycles_leak_nothing() {
    let prog = common::example_bin("dynamic_check");
    let out = run(&["-n", "1", prog.to_str().unwrap(), "cycles", "500"]);
    assert_passed(&out, "500 spawn/disconnect cycles");
}

#[test]
fn connect_accept_through_the_name_service() {
    let prog = common::example_bin("client_server");
    let out = run(&[
        "-n",
        "2",
        "--nodes",
        "2",
        prog.to_str().unwrap(),
        "pair",
        "svc-pair",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success()
            && stdout.contains("served")
            && stdout.contains("connected and answered"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn connect_to_a_port_nobody_accepts_on_fails_in_bounded_time() {
    client_server(
        "noaccept",
        "svc-noaccept",
        &[("IBDYN_CONNECT_TIMEOUT", "1")],
        &["connect failed as expected"],
    );
}

#[test]
fn a_connect_that_gave_up_is_not_accepted_later() {
    client_server(
        "late",
        "svc-late",
        &[
            ("IBDYN_CONNECT_TIMEOUT", "2"),
            ("IBDYN_ACCEPT_TIMEOUT", "3"),
        ],
        &[
            "the abandoned connect was not accepted",
            "served the second connect",
            "connected the second time",
        ],
    );
}

/// A connect request cut short (a broken client, or one of another build) reaching the port
/// is dropped: the accept goes on and pairs with the same root's whole request.
#[test]
fn a_malformed_connect_request_does_not_end_the_accept() {
    let env = [
        ("IBDYN_TEST_CONNECT_GARBLE", "1"),
        ("IBDYN_ACCEPT_TIMEOUT", "30"),
        ("IBDYN_LOG", "warn"),
    ];
    let stderr = client_server("pair", "svc-garble", &env, &["connected and answered"]);
    assert!(
        stderr.contains("dropped a datagram") && stderr.contains("malformed"),
        "{stderr}"
    );
}

#[test]
fn children_that_die_before_connecting_back_fail_the_spawn() {
    let prog = common::example_bin("dynamic_check");
    let out = run(&["-n", "2", prog.to_str().unwrap(), "earlydeath"]);
    assert_passed(&out, "children dying before connecting back");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("exited before connecting back"), "{stdout}");
}

#[test]
fn a_child_that_dies_later_fails_only_what_needs_it() {
    let prog = common::example_bin("dynamic_check");
    let out = run(&["-n", "1", prog.to_str().unwrap(), "laterdeath"]);
    assert_passed(&out, "a child dying after the spawn");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("failed as expected") && stdout.contains("rank 1"),
        "{stdout}"
    );
    assert!(stdout.contains("the other children still work"), "{stdout}");
}

/// Two jobs of separate `ibdyn run`s cannot meet through a port (their datagrams carry
/// different job secrets); the connect fails saying so, where it used to call the living
/// server dead and say nothing of the DVM.
#[test]
fn a_port_of_a_job_of_another_ibdyn_run_is_refused_with_the_way_out() {
    let prog = common::example_bin("client_server");
    let s = common::Scratch::new("portfile");
    let file = s.dir.join("port");
    let file = file.to_str().unwrap();
    let server = s
        .ibdyn(&[
            "run",
            "-n",
            "1",
            prog.to_str().unwrap(),
            "portfile-server",
            file,
        ])
        .env("IBDYN_ACCEPT_TIMEOUT", "8")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start the server job");
    let client = common::run_bounded(
        s.ibdyn(&[
            "run",
            "-n",
            "1",
            prog.to_str().unwrap(),
            "portfile-client",
            file,
        ]),
        None,
        std::time::Duration::from_secs(60),
    );
    let server = server.wait_with_output().expect("server output");
    let out = String::from_utf8_lossy(&client.stdout);
    assert!(
        client.status.success(),
        "{out}\n{}",
        String::from_utf8_lossy(&client.stderr)
    );
    assert!(
        out.contains("connect to another job's port failed") && out.contains("`ibdyn dvm`"),
        "{out}"
    );
    let sout = String::from_utf8_lossy(&server.stdout);
    assert!(sout.contains("client_server: accept ended"), "{sout}");
}

/// Children that end without disconnecting: every parent's disconnect fails, naming the
/// other side, on one node and on two. Ranks other than 0 used to wait for ever in a barrier
/// rank 0 had left with the error.
#[test]
fn a_disconnect_from_an_ended_job_fails_on_every_parent() {
    let prog = common::example_bin("dynamic_check");
    let prog = prog.to_str().unwrap();
    for nodes in ["1", "2"] {
        let out = run(&["-n", "3", "--nodes", nodes, prog, "disconnectdead"]);
        assert_passed(&out, "a disconnect from an ended job");
        let stdout = String::from_utf8_lossy(&out.stdout);
        for r in 0..3 {
            let line =
                format!("rank {r} disconnect from the ended job failed: peer the other side");
            assert!(stdout.contains(&line), "{nodes} node(s): {stdout}");
        }
    }
}

#[test]
fn siblings_of_a_root_that_leaves_at_once_fail_instead_of_waiting_forever() {
    let prog = common::example_bin("dynamic_check");
    let out = run(&[
        "-n",
        "1",
        "--nodes",
        "2",
        prog.to_str().unwrap(),
        "rootleaves",
    ]);
    assert_passed(&out, "a spawned root leaving at once");
    // Each sibling either failed naming the root dead, or (it answered the root's connection
    // while waiting in the process manager) got its parents before the root left.
    let stderr = String::from_utf8_lossy(&out.stderr);
    let failed = stderr.contains("rank 0") && stderr.contains("is dead");
    let had_parents = stderr
        .matches("got its parents before the root left")
        .count();
    assert!(failed || had_parents == 2, "{stderr}");
    assert!(!stderr.contains("without the parents"), "{stderr}");
}

#[test]
fn an_abort_in_a_spawned_job_ends_that_job_and_fails_the_parents_intercommunicator() {
    let prog = common::example_bin("dynamic_check");
    for nodes in ["1", "2"] {
        let out = run(&[
            "-n",
            "2",
            "--nodes",
            nodes,
            prog.to_str().unwrap(),
            "abortjob",
        ]);
        assert_passed(&out, "an abort in a spawned job");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stdout.contains("the aborted job's rank 0 is gone")
                && stdout.contains("the parents carry on")
                && stderr.contains("aborted its job with code 5"),
            "{stdout}\n{stderr}"
        );
    }
}

#[test]
fn under_the_dvm_an_abort_in_a_spawned_job_ends_only_that_job() {
    let s = common::Scratch::new("dvm-abort");
    let dvm = common::dvm::Dvm::start(&s, 2);
    let prog = common::example_bin("dynamic_check");
    let out = dvm.run(&["-n", "2", prog.to_str().unwrap(), "abortjob"]);
    assert_passed(&out, "an abort in a spawned job under the DVM");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("aborted its job with code 5"),
        "{}",
        common::dvm::show(&out)
    );
}

#[test]
fn prestarted_copies_serve_later_spawns_and_leave_nothing_behind() {
    let prog = common::example_bin("dynamic_check");
    // On two nodes a command's later spawns go to the daemons that keep its copies. Copies
    // are forked from a template of the command, or exec'd under IBDYN_PRESTART_FORK=0 (the
    // check asserts which).
    for (nodes, fork) in [("1", "1"), ("2", "1"), ("1", "0")] {
        let marker = format!("ibdyn-prestart-test-{}-{nodes}-{fork}", std::process::id());
        let out = common::ibdyn_bounded()
            .env("IBDYN_PRESTART_FORK", fork)
            .args(["run", "-n", "1", "--nodes", nodes])
            .args([prog.to_str().unwrap(), "prestart", &marker])
            .output()
            .expect("start ibdyn run");
        assert_passed(
            &out,
            &format!("spawns with ibdyn_prestart on {nodes} node(s), IBDYN_PRESTART_FORK={fork}"),
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        // One line per child that ran (the check counts them); the copies left waiting at the
        // end (and the killed ones) never printed, and a template's line is printed by the
        // copies it forks, not by itself.
        let ran: usize = stdout
            .lines()
            .find_map(|l| l.strip_prefix("children that ran: "))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no count of children:\n{stdout}"));
        let before = stdout.matches("warmchild before init").count();
        assert_eq!(before, ran, "lines printed before init:\n{stdout}");
        nothing_left(&marker);
        // What the copies waiting at the end opened ahead: removed when their daemons ended.
        let segments: Vec<&str> = stdout
            .lines()
            .filter_map(|l| l.strip_prefix("copy segment "))
            .collect();
        assert!(!segments.is_empty(), "no copy segment reported:\n{stdout}");
        for s in segments {
            assert!(!std::path::Path::new(s).exists(), "{s} left behind");
        }
    }
}

#[test]
fn an_unused_prestarted_copy_ends_after_its_idle_limit() {
    let prog = common::example_bin("dynamic_check");
    let marker = format!("ibdyn-prestart-idle-{}", std::process::id());
    let out = common::ibdyn_bounded()
        .env("IBDYN_PRESTART_IDLE", "0.5")
        .args([
            "run",
            "-n",
            "1",
            prog.to_str().unwrap(),
            "prestart-idle",
            &marker,
        ])
        .output()
        .expect("start ibdyn run");
    assert_passed(&out, "an idle copy");
    nothing_left(&marker);
}

/// `IBDYN_PRESTART=N`: spawns that do not set the info key ask for copies (for programs that
/// cannot be changed); a value that is not a count fails the spawn, saying so.
#[test]
fn ibdyn_prestart_in_the_environment_asks_for_copies_for_every_spawn() {
    let prog = common::example_bin("dynamic_check");
    let marker = format!("ibdyn-prestart-env-{}", std::process::id());
    let run_with = |value: &str| {
        common::ibdyn_bounded()
            .env("IBDYN_PRESTART", value)
            .args([
                "run",
                "-n",
                "1",
                prog.to_str().unwrap(),
                "prestart-env",
                &marker,
            ])
            .output()
            .expect("start ibdyn run")
    };
    let out = run_with("1");
    assert_passed(&out, "spawns under IBDYN_PRESTART=1");
    nothing_left(&marker);
    let out = run_with("four");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("IBDYN_PRESTART=\"four\" is not a number of copies"),
        "{stderr}"
    );
    nothing_left(&marker);
}

/// Copies forked from templates: a program with threads before its initialisation, or run by
/// a wrapper script, gets exec'd copies instead; a killed template is replaced; orphans the
/// daemon adopts are reaped; a daemon keeps eight templates at most.
#[test]
fn copies_are_forked_from_a_template_that_is_replaced_when_killed() {
    let prog = common::example_bin("dynamic_check");
    for mode in [
        "prestart-refused",
        "prestart-template",
        "prestart-orphan",
        "prestart-many",
    ] {
        let marker = format!("ibdyn-{mode}-{}", std::process::id());
        let out = run(&["-n", "1", prog.to_str().unwrap(), mode, &marker]);
        assert_passed(&out, mode);
        nothing_left(&marker);
    }
}

/// The copies still waiting when a job ends end with their daemons.
fn nothing_left(marker: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let left: Vec<String> = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter(|e| {
                std::fs::read(e.path().join("cmdline"))
                    .is_ok_and(|c| c.windows(marker.len()).any(|w| w == marker.as_bytes()))
            })
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        if left.is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "prestarted copies left running: {left:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A spawned root whose start-up fails (forced by `IBDYN_TEST_FAIL_ATTACH=0` once it has
/// greeted the parents) leaves without the finalize barrier, so its siblings, on its node and
/// on the other, fail their start-up instead of waiting for it forever; the parent's spawn
/// returns.
#[test]
fn siblings_of_a_root_whose_start_up_fails_fail_theirs() {
    let prog = common::example_bin("dynamic_check");
    let out = common::ibdyn_bounded()
        .args(["run", "-n", "1", "--nodes", "2"])
        .arg(&prog)
        .arg("failedstart")
        .env("IBDYN_TEST_FAIL_ATTACH", "0")
        .output()
        .expect("start ibdyn run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("a job whose root fails its start-up"),
        "{}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    let failed: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("dynamic_check: init:"))
        .collect();
    assert_eq!(failed.len(), 3, "every child fails its start-up:\n{stderr}");
    assert!(
        failed.iter().any(|l| l.contains("on purpose")),
        "the root's own failure:\n{stderr}"
    );
    assert!(
        !stderr.contains("(unreachable)"),
        "a child went past its start-up:\n{stderr}"
    );
}
