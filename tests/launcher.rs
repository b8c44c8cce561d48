//! `ibdyn run` through the real binary: output, stdin, exit status, rank death, signals,
//! bad programs, placement, and that nothing is left behind.

mod common;

use common::*;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;
use std::time::Duration;

#[test]
fn tag_output_prefixes_every_line_of_every_rank() {
    let s = Scratch::new("tag");
    let out = s.run(
        &[
            "run",
            "-n",
            "3",
            "--nodes",
            "2",
            "--tag-output",
            "sh",
            "-c",
            "echo a-$IBDYN_RANK; echo b-$IBDYN_RANK >&2",
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut got: Vec<String> = text(&out.stdout).lines().map(str::to_string).collect();
    got.sort();
    assert_eq!(got, vec!["[0] a-0", "[1] a-1", "[2] a-2"]);
    let err = text(&out.stderr);
    for r in 0..3 {
        assert!(err.contains(&format!("[{r}] b-{r}")), "stderr: {err}");
    }
}

#[test]
fn output_without_tags_is_passed_through() {
    let s = Scratch::new("plain");
    let out = s.run(
        &["run", "-n", "2", "sh", "-c", "printf 'x%s\\n' $IBDYN_RANK"],
        None,
    );
    assert!(out.status.success());
    let mut got: Vec<String> = text(&out.stdout).lines().map(str::to_string).collect();
    got.sort();
    assert_eq!(got, vec!["x0", "x1"]);
}

#[test]
fn stdin_goes_to_rank_0_only() {
    let s = Scratch::new("stdin");
    let script = "if [ $IBDYN_RANK = 0 ]; then cat; else echo rank$IBDYN_RANK-got-$(wc -c); fi";
    let out = s.run(
        &["run", "-n", "2", "--nodes", "2", "sh", "-c", script],
        Some(b"hello stdin\nline two\n"),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let o = text(&out.stdout);
    assert!(o.contains("hello stdin\nline two\n"), "stdout: {o}");
    assert!(o.contains("rank1-got-0"), "stdout: {o}");
}

#[test]
fn exit_code_of_a_failing_rank_is_reported_and_returned() {
    let s = Scratch::new("exit");
    let out = s.run(
        &[
            "run",
            "-n",
            "3",
            "--nodes",
            "2",
            "sh",
            "-c",
            "[ $IBDYN_RANK = 1 ] && exit 7; exec sleep 30",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(7), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("rank 1 exited with code 7"),
        "stderr: {}",
        text(&out.stderr)
    );
}

/// A rank that started a helper in the background and then failed: the teardown ends the
/// helper too (it is in the rank's process group), on the rank's node and on another.
#[test]
fn a_teardown_ends_the_helpers_a_failed_rank_left_running() {
    teardown_ends_helpers("helpers", None, "sleep 300");
}

/// Helpers that ignore SIGTERM: the job's end does not wait the grace period for the SIGKILL,
/// and the daemons give it to them before they leave.
#[test]
fn a_teardown_ends_helpers_that_ignore_sigterm() {
    teardown_ends_helpers(
        "helpers-term",
        None,
        "sh -c 'trap \"\" TERM; exec sleep 300'",
    );
}

/// The same, when the root's word that the job is done reaches the helpers' node before the
/// launcher's kill does (its commands held back 500 ms): the node has dropped the job's
/// record by then and still ends the helpers.
#[test]
fn a_teardown_ends_helpers_of_a_job_their_node_already_dropped() {
    teardown_ends_helpers(
        "helpers-late",
        Some(("IBDYN_TEST_SLOW_LAUNCHER_COMMANDS", "1:500")),
        "sleep 300",
    );
}

fn teardown_ends_helpers(name: &str, knob: Option<(&str, &str)>, helper: &str) {
    let s = Scratch::new(name);
    let pids = s.dir.join("helpers");
    std::fs::create_dir_all(&pids).unwrap();
    let script = format!(
        "if [ $IBDYN_RANK -ge 2 ]; then {helper} </dev/null >/dev/null 2>&1 & \
         echo $! > {}/$IBDYN_RANK; exit 7; fi; exec sleep 300",
        pids.display()
    );
    let mut run = s.ibdyn(&["run", "-n", "4", "--nodes", "2", "sh", "-c", &script]);
    run.envs(knob);
    let out = run_bounded(run, None, Duration::from_secs(120));
    assert_eq!(out.status.code(), Some(7), "{}", text(&out.stderr));
    let helpers: Vec<u32> = std::fs::read_dir(&pids)
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path()).ok()?.trim().parse().ok())
        .collect();
    assert!(!helpers.is_empty(), "no helper wrote its pid");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let alive = |p: &u32| !matches!(process_state(*p), '?' | 'Z');
    while helpers.iter().any(alive) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left: Vec<u32> = helpers.iter().copied().filter(alive).collect();
    for p in &left {
        // SAFETY: kill has no memory-safety preconditions; the pid is this test's helper.
        unsafe { libc::kill(*p as i32, libc::SIGKILL) };
    }
    assert!(
        left.is_empty(),
        "helpers still running after the teardown: {left:?}"
    );
    std::fs::remove_dir_all(&pids).unwrap();
    s.assert_clean();
}

/// More ranks than the node daemon has file descriptors for: the job ends at once, naming
/// the limit, instead of waiting on a report too large to read.
#[test]
fn a_node_out_of_file_descriptors_fails_the_start_with_a_hint() {
    let s = Scratch::new("emfile");
    let ibdyn = ibdyn_bin();
    let script = format!("ulimit -n 200 && exec {} run -n 3000 true", ibdyn.display());
    let mut sh = std::process::Command::new("sh");
    sh.args(["-c", &script])
        .env("TMPDIR", &s.dir)
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    let out = run_bounded(sh, None, Duration::from_secs(120));
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(126), "stderr: {err}");
    assert!(err.contains("raise `ulimit -n`"), "stderr: {err}");
    s.assert_clean();
}

#[test]
fn a_rank_killed_by_a_signal_is_named_with_the_signal() {
    let s = Scratch::new("signal");
    let out = s.run(
        &[
            "run",
            "-n",
            "3",
            "sh",
            "-c",
            "[ $IBDYN_RANK = 2 ] && kill -SEGV $$; exec sleep 30",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(128 + 11));
    let err = text(&out.stderr);
    assert!(
        err.contains("rank 2 was killed by signal 11 (SIGSEGV)"),
        "stderr: {err}"
    );
}

#[test]
fn all_ranks_exiting_zero_gives_zero() {
    let s = Scratch::new("zero");
    let out = s.run(&["run", "-n", "4", "--nodes", "4", "true"], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(out.stderr.is_empty(), "stderr: {}", text(&out.stderr));
}

#[test]
fn a_missing_program_is_named_with_the_os_error() {
    let s = Scratch::new("missing");
    let out = s.run(
        &["run", "-n", "2", "--nodes", "2", "no-such-program-ibdyn"],
        None,
    );
    assert_eq!(out.status.code(), Some(127));
    let err = text(&out.stderr);
    assert!(
        err.contains("no-such-program-ibdyn") && err.contains("No such file or directory"),
        "stderr: {err}"
    );
}

/// A program found but not executable gets 126, as from a shell (127 is for one not found):
/// a file without execute permission (refused before any daemon starts) and an executable
/// file with no interpreter line (refused by the exec on the daemons).
#[test]
fn a_program_that_cannot_be_executed_fails_with_126() {
    let s = Scratch::new("noexec");
    let plain = s.dir.join("plain-file");
    std::fs::write(&plain, "data\n").unwrap();
    let bad = s.dir.join("no-interpreter");
    std::fs::write(&bad, "no interpreter line\n").unwrap();
    std::fs::set_permissions(&bad, std::fs::Permissions::from_mode(0o755)).unwrap();
    for (prog, why) in [(&plain, "Permission denied"), (&bad, "Exec format error")] {
        let run = s.ibdyn(&["run", "-n", "2", "--nodes", "2", prog.to_str().unwrap()]);
        let out = run_bounded(run, None, Duration::from_secs(60));
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(126), "stderr: {err}");
        assert!(err.contains(why), "stderr: {err}");
    }
    for f in [plain, bad] {
        std::fs::remove_file(f).unwrap();
    }
    s.assert_clean();
}

/// `--timeout SECS` (or `MPIEXEC_TIMEOUT`, as mpiexec reads it) ends a job that runs past
/// it, with the jobs it spawned, with status 124; 0 is no limit.
#[test]
fn a_job_past_its_time_limit_is_torn_down_with_124() {
    let s = Scratch::new("timeout");
    let prog = example_bin("spawn_check");
    let run = s.ibdyn(&[
        "run",
        "-n",
        "1",
        "--nodes",
        "2",
        "--timeout",
        "3",
        prog.to_str().unwrap(),
        "hang",
        "2",
    ]);
    // The master and its children sleep 120 s unless killed: the bound is the check.
    let out = run_bounded(run, None, Duration::from_secs(60));
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(124), "stderr: {err}");
    assert!(
        err.contains("time limit of 3 s (--timeout or MPIEXEC_TIMEOUT) was reached"),
        "stderr: {err}"
    );
    assert!(!err.contains("killed by signal"), "stderr: {err}");
    if text(&out.stdout).contains("SPAWNED") {
        assert!(
            err.contains("2 rank(s) of spawned jobs ended abnormally during the teardown"),
            "stderr: {err}"
        );
    }
    s.assert_clean();

    let mut run = s.ibdyn(&["run", "-n", "2", "--nodes", "2", "sleep", "120"]);
    run.env("MPIEXEC_TIMEOUT", "1");
    let out = run_bounded(run, None, Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(124), "{}", text(&out.stderr));
    s.assert_clean();

    let mut run = s.ibdyn(&["run", "-n", "1", "true"]);
    run.env("MPIEXEC_TIMEOUT", "0");
    let out = run_bounded(run, None, Duration::from_secs(60));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = s.run(&["run", "--timeout", "soon", "true"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("invalid value 'soon' for '--timeout <SECS>'"),
        "{}",
        text(&out.stderr)
    );
}

/// Several applications in one job (MPMD, `A : -n 3 B`): one world, ranks numbered across
/// the applications in order, each rank's application in IBDYN_APPNUM; MPI ranks of both
/// talk (the ring example as two applications on two nodes).
#[test]
fn several_applications_run_as_one_job() {
    let s = Scratch::new("mpmd");
    let say = "echo app $IBDYN_APPNUM rank $IBDYN_RANK of $IBDYN_SIZE $0";
    let out = s.run(
        &[
            "run", "--nodes", "2", "-n", "1", "sh", "-c", say, "first", ":", "-n", "3", "sh", "-c",
            say, "second", ":", "sh", "-c", say, "third",
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        lines_with(&out, "app "),
        [
            "app 0 rank 0 of 5 first",
            "app 1 rank 1 of 5 second",
            "app 1 rank 2 of 5 second",
            "app 1 rank 3 of 5 second",
            "app 2 rank 4 of 5 third",
        ]
    );
    let ring = example_bin("ring");
    let ring = ring.to_str().unwrap();
    let out = s.run(
        &["run", "--nodes", "2", "-n", "2", ring, ":", "-n", "2", ring],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(lines_with(&out, "rank ").len(), 4, "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("sum of ranks 6"));
}

/// `--wdir DIR` (relative to here, a space in its name): every rank starts there, on every
/// node; a directory that is not there is refused before anything starts.
#[test]
fn wdir_sets_the_ranks_working_directory() {
    let s = Scratch::new("wdir");
    let base = std::env::temp_dir().join(format!("ibdyn-wdir-{}", std::process::id()));
    let dir = base.join("with space");
    std::fs::create_dir_all(&dir).unwrap();
    let mut run = s.ibdyn(&[
        "run",
        "-n",
        "2",
        "--nodes",
        "2",
        "--wdir",
        "with space",
        "sh",
        "-c",
        "echo \"$(pwd)|$PWD\"",
    ]);
    run.current_dir(&base);
    let out = run_bounded(run, None, Duration::from_secs(60));
    let _ = std::fs::remove_dir_all(&base);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let here = format!("{0}|{0}", dir.display());
    assert_eq!(lines_with(&out, "/"), [here.clone(), here]);
    for (bad, why) in [
        ("/no/such/dir", "No such file"),
        ("/etc/passwd", "not a directory"),
    ] {
        let out = s.run(&["run", "--wdir", bad, "true"], None);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(&format!("--wdir {bad}: {why}")), "{err}");
    }
}

/// `--bind-to hwthread`: each rank on one CPU of those its node daemon may use, in local-rank
/// order, wrapping around; `--bind-to core` gives ranks of the same local index the same
/// core; `taskset` narrows what the daemons, and so the ranks, may use.
#[test]
fn bind_to_puts_each_rank_on_its_own_cpu() {
    let s = Scratch::new("bind");
    let mine_text = my_cpus_text();
    let mine = cpu_list(&mine_text);
    let show = "grep Cpus_allowed_list /proc/self/status";
    let bound = |out: &std::process::Output| -> Vec<Vec<usize>> {
        assert!(out.status.success(), "{}", text(&out.stderr));
        let mut v: Vec<(u32, Vec<usize>)> = text(&out.stdout)
            .lines()
            .map(|l| {
                let (tag, list) = l.split_once("] Cpus_allowed_list:").unwrap();
                (tag.trim_start_matches('[').parse().unwrap(), cpu_list(list))
            })
            .collect();
        v.sort();
        v.into_iter().map(|(_, c)| c).collect()
    };
    // Ranks 0 and 2 on node 0, 1 and 3 on node 1: local indexes 0, 0, 1, 1.
    let run = |bind: &[&str]| {
        s.run(
            &[
                "run",
                "-n",
                "4",
                "--nodes",
                "2",
                "--map-by",
                "node",
                "--tag-output",
                "--report-bindings",
            ]
            .iter()
            .chain(bind)
            .chain(&["sh", "-c", show])
            .copied()
            .collect::<Vec<_>>(),
            None,
        )
    };
    // `--report-bindings`: each rank's first stderr line, "... node N, pid P) bound to CPUs C".
    let reported = |out: &std::process::Output| -> Vec<String> {
        let mut v: Vec<String> = text(&out.stderr)
            .lines()
            .map(|l| {
                let (tag, rest) = l.split_once("] ibdyn: rank ").unwrap();
                let (_, what) = rest.split_once(", pid ").unwrap();
                let (_, what) = what.split_once(") ").unwrap();
                format!("{}: {what}", tag.trim_start_matches('['))
            })
            .collect();
        v.sort();
        v
    };
    let out = run(&["--bind-to", "hwthread"]);
    let got = bound(&out);
    let want: Vec<Vec<usize>> = [0, 0, 1, 1]
        .iter()
        .map(|&l| vec![mine[l % mine.len()]])
        .collect();
    assert_eq!(got, want);
    let said: Vec<String> = want
        .iter()
        .enumerate()
        .map(|(r, c)| format!("{r}: bound to CPUs {}", c[0]))
        .collect();
    assert_eq!(reported(&out), said);
    for unit in ["core", "socket"] {
        let got = bound(&run(&["--bind-to", unit]));
        assert!(got.iter().flatten().all(|c| mine.contains(c)), "{got:?}");
        assert_eq!((&got[0], &got[2]), (&got[1], &got[3]), "{unit}: {got:?}");
    }
    // Two hardware threads a rank, consecutive from 2 x local index, wrapping; spelt ours and
    // as Hydra writes it.
    let two = |l: usize| -> Vec<usize> {
        let mut c: Vec<usize> = (0..2.min(mine.len()))
            .map(|k| mine[(2 * l + k) % mine.len()])
            .collect();
        c.sort();
        c
    };
    let want: Vec<Vec<usize>> = [0, 0, 1, 1].iter().map(|&l| two(l)).collect();
    for spelt in [
        &["--cpus-per-rank", "2", "--bind-to", "hwthread"][..],
        &["-bind-to", "hwthread:2"],
    ] {
        assert_eq!(bound(&run(spelt)), want, "{spelt:?}");
    }
    let out = s.run(&["run", "--cpus-per-rank", "0", "true"], None);
    assert_eq!(out.status.code(), Some(2));
    // Without --bind-to, every CPU.
    let out = s.run(
        &["run", "--tag-output", "--report-bindings", "sh", "-c", show],
        None,
    );
    assert_eq!(bound(&out), std::slice::from_ref(&mine));
    assert_eq!(reported(&out), [format!("0: not bound: CPUs {mine_text}")]);
    // Narrowed to the last CPU: both ranks there.
    let last = mine.last().unwrap().to_string();
    let mut narrowed = std::process::Command::new("taskset");
    narrowed.args(["-c", &last]).arg(ibdyn_bin()).args([
        "run",
        "-n",
        "2",
        "--tag-output",
        "--bind-to",
        "core",
        "sh",
        "-c",
        show,
    ]);
    narrowed.env("TMPDIR", &s.dir);
    let out = run_bounded(narrowed, None, Duration::from_secs(60));
    let at = *mine.last().unwrap();
    assert_eq!(bound(&out), [vec![at], vec![at]]);
    s.assert_clean();
}

/// A bad application of an MPMD line is named before anything starts.
#[test]
fn a_bad_application_of_several_is_named() {
    let s = Scratch::new("mpmd-bad");
    for (args, status, why) in [
        (&["true", ":"][..], 2, "application 2 has no program"),
        (
            &["true", ":", "-n", "two", "true"],
            2,
            "-n needs a count, not \"two\"",
        ),
        (
            &["true", ":", "--nodes", "2", "true"],
            2,
            "unknown option \"--nodes\" in application 2",
        ),
        (
            &["true", ":", "-n", "2", "/no/such/program"],
            127,
            "\"/no/such/program\"",
        ),
    ] {
        let mut a = vec!["run", "-n", "1"];
        a.extend_from_slice(args);
        let out = s.run(&a, None);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(status), "{args:?}: {err}");
        assert!(err.contains(why), "{args:?}: {err}");
    }
}

/// `-x NAME=VALUE` / `-x NAME` (Open MPI) and `-genv NAME VALUE` (MPICH) set variables for
/// every rank, over what the ranks would inherit; an unset NAME is refused.
#[test]
fn exported_variables_reach_every_rank() {
    let s = Scratch::new("export");
    let mut run = s.ibdyn(&[
        "run",
        "-n",
        "2",
        "--nodes",
        "2",
        "-x",
        "A=1",
        "-x",
        "FROM_HERE",
        "-genv",
        "B",
        "two words",
        "-x",
        "C=new",
        "sh",
        "-c",
        "echo \"$A|$FROM_HERE|$B|$C\"",
    ]);
    run.env("FROM_HERE", "here").env("C", "old");
    let out = run_bounded(run, None, Duration::from_secs(60));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout).lines().collect::<Vec<_>>(),
        ["1|here|two words|new"; 2]
    );
    // The jobs a rank spawns inherit them, and its `--wdir`; a spawn's own `env` key wins.
    let wd = std::env::temp_dir().join(format!("ibdyn-export-{} w d", std::process::id()));
    std::fs::create_dir_all(&wd).unwrap();
    let prog = example_bin("spawn_check");
    for (own, want) in [
        (None, "two words"),
        (Some("env=SPAWN_CHECK_ENV=own"), "own"),
    ] {
        let mut a = vec!["run", "--nodes", "2", "-x", "SPAWN_CHECK_ENV=two words"];
        a.extend([
            "--wdir",
            wd.to_str().unwrap(),
            prog.to_str().unwrap(),
            "parent",
            "2",
        ]);
        a.extend(own);
        let out = s.run(&a, None);
        assert!(out.status.success(), "{own:?}: {}", text(&out.stderr));
        let children: Vec<String> = text(&out.stdout)
            .lines()
            .filter(|l| l.starts_with("CHILD"))
            .map(|l| l.split_once(" env=").unwrap().1.to_string())
            .collect();
        let line = format!("{want} cwd={}", wd.display());
        assert_eq!(children, [line.as_str(); 2], "{own:?}");
    }
    std::fs::remove_dir(&wd).unwrap();
    for (bad, why) in [
        ("IBDYN_SURELY_UNSET", "IBDYN_SURELY_UNSET is not set here"),
        ("=3", "not a variable name"),
    ] {
        let out = s.run(&["run", "-x", bad, "true"], None);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(why), "{err}");
    }
}

/// `--output-filename DIR`: each rank's stdout and stderr in DIR/rank.R/{stdout,stderr},
/// spawned jobs' ranks under DIR/job.J; a directory that cannot be made is refused.
#[test]
fn output_filename_puts_each_ranks_output_in_its_files() {
    let s = Scratch::new("outfiles");
    let dir = std::env::temp_dir().join(format!("ibdyn-outfiles-{}", std::process::id()));
    let say = "echo out $IBDYN_RANK; echo err $IBDYN_RANK >&2";
    let d = dir.join("plain");
    let out = s.run(
        &[
            "run",
            "-n",
            "2",
            "--nodes",
            "2",
            "--output-filename",
            d.to_str().unwrap(),
            "sh",
            "-c",
            say,
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    for r in 0..2 {
        let read = |f: &str| std::fs::read_to_string(d.join(format!("rank.{r}/{f}"))).unwrap();
        assert_eq!(read("stdout"), format!("out {r}\n"));
        assert_eq!(read("stderr"), format!("err {r}\n"));
    }
    let prog = example_bin("spawn_check");
    let d = dir.join("spawned");
    let out = s.run(
        &[
            "run",
            "-n",
            "1",
            "--nodes",
            "2",
            "--output-filename",
            d.to_str().unwrap(),
            prog.to_str().unwrap(),
            "parent",
            "2",
        ],
        None,
    );
    check_output_files(&d, &out);
    let _ = std::fs::remove_dir_all(&dir);
    let out = s.run(
        &["run", "--output-filename", "/proc/ibdyn-no", "true"],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("make the output directory /proc/ibdyn-no"));
}

/// `--ppn N` (`-ppn`, `--npernode`): N ranks per node at a time, wrapping around; with
/// `--map-by node`, one node after the other within those N.
#[test]
fn ppn_places_that_many_ranks_per_node() {
    let s = Scratch::new("ppn");
    let say = "echo $IBDYN_RANK $IBDYN_NODE $IBDYN_LOCAL_RANK";
    for (args, want) in [
        (
            &["--nodes", "3", "-ppn", "2", "-np", "5"][..],
            &["0 0 0", "1 0 1", "2 1 0", "3 1 1", "4 2 0"][..],
        ),
        (
            &["--nodes", "3", "--map-by", "ppr:2:node", "-np", "5"],
            &["0 0 0", "1 0 1", "2 1 0", "3 1 1", "4 2 0"],
        ),
        (
            &["--nodes", "2", "--npernode", "1", "-n", "4"],
            &["0 0 0", "1 1 0", "2 0 1", "3 1 1"],
        ),
    ] {
        let mut a = vec!["run"];
        a.extend_from_slice(args);
        a.extend_from_slice(&["sh", "-c", say]);
        let out = s.run(&a, None);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        let mut got: Vec<String> = text(&out.stdout).lines().map(String::from).collect();
        got.sort();
        assert_eq!(got, want, "{args:?}");
    }
    let out = s.run(&["run", "--ppn", "0", "true"], None);
    assert_eq!(out.status.code(), Some(2));
}

/// A `TMPDIR` too long for a socket path under it (a batch system's per-job directory) and
/// one that does not exist both leave the job's session directory in /tmp: the job runs on
/// two nodes, the first quietly, the second with a word about `TMPDIR`, and neither leaves
/// its session directory behind.
#[test]
fn a_tmpdir_too_long_for_sockets_or_missing_falls_back_to_tmp() {
    let s = Scratch::new("tmpdir");
    let long = s.dir.join("d".repeat(100));
    std::fs::create_dir_all(&long).unwrap();
    let missing = s.dir.join("missing");
    let ring = example_bin("ring");
    let ring = ring.to_str().unwrap();
    for (tmpdir, warned) in [(&long, false), (&missing, true)] {
        let mut cmd = s.ibdyn(&[
            "run",
            "-n",
            "2",
            "--nodes",
            "2",
            "sh",
            "-c",
            "echo \"$IBDYN_SESSION_DIR\"; exec \"$0\"",
            ring,
        ]);
        cmd.env("TMPDIR", tmpdir);
        let out = run_bounded(cmd, None, Duration::from_secs(60));
        let err = text(&out.stderr);
        assert!(out.status.success(), "{tmpdir:?}: {err}");
        assert_eq!(
            err.contains("is not a directory"),
            warned,
            "{tmpdir:?}: {err}"
        );
        let dirs: Vec<String> = text(&out.stdout)
            .lines()
            .filter(|l| l.contains("/ibdyn-"))
            .map(String::from)
            .collect();
        assert_eq!(dirs.len(), 2, "{}", text(&out.stdout));
        for d in &dirs {
            assert!(d.starts_with("/tmp/ibdyn-"), "{d}");
            assert!(!std::path::Path::new(d).exists(), "{d} left behind");
        }
    }
    std::fs::remove_dir_all(&long).unwrap();
    s.assert_clean();
}

/// Placement options a DVM job cannot take are refused before any DVM is asked, each saying
/// where it belongs instead of being dropped without a word.
#[test]
fn placement_options_a_dvm_job_cannot_take_are_refused() {
    let s = Scratch::new("dvmopts");
    for (args, says) in [
        (&["--nodes", "3"][..], "give --nodes to `ibdyn dvm start`"),
        (&["--ppn", "2"][..], "--ppn is not taken there"),
        (
            &["--hosts", "a,b"][..],
            "give the hosts to `ibdyn dvm start`",
        ),
    ] {
        let mut a = vec!["run", "--dvm", "-n", "2"];
        a.extend_from_slice(args);
        a.push("true");
        let out = s.run(&a, None);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).contains(says),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

/// mpirun's spellings: `-np N` before the program (after it, the program's), `--host`.
#[test]
fn np_and_host_are_taken_as_mpirun_spells_them() {
    let s = Scratch::new("np");
    let out = s.run(
        &["run", "-np", "3", "--tag-output", "echo", "-np", "x"],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        lines_with(&out, "["),
        ["[0] -np x", "[1] -np x", "[2] -np x"]
    );
    // The MPI standard's `mpiexec -n N -host H -wdir DIR`, as well as mpirun's `--host`.
    for host in ["--host", "-host"] {
        let exec = ["--launcher-exec", "false", "-np", "1", "true"];
        let out = s.run(&[&["run", host, "ibdyn-h1"][..], &exec].concat(), None);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{host}: {err}");
        assert!(
            err.contains("host ibdyn-h1 (launcher-exec)"),
            "{host}: {err}"
        );
    }
    let out = s.run(&["run", "-n", "1", "-wdir", "/", "pwd"], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "/\n");
    // What scripts written for Open MPI pass without thinking: taken.
    let out = s.run(
        &[
            "run",
            "--oversubscribe",
            "--allow-run-as-root",
            "--map-by",
            "core",
            "--nodes",
            "2",
            "-np",
            "3",
            "sh",
            "-c",
            "echo $IBDYN_NODE",
        ],
        None,
    );
    let nodes = sorted_stdout(&out);
    assert_eq!(nodes, ["0", "0", "1"]);
}

#[test]
fn a_misspelt_option_is_called_an_option_not_a_program() {
    let s = Scratch::new("misspelt");
    let out = s.run(&["run", "-n", "2", "--nodse", "2", "true"], None);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("unknown option \"--nodse\""), "stderr: {err}");
    // After the program, a leading '-' belongs to the program.
    let out = s.run(&["run", "-n", "1", "echo", "-x"], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "-x");
}

#[test]
fn a_non_executable_program_is_named_with_the_os_error() {
    let s = Scratch::new("noexec");
    let prog = std::env::temp_dir().join(format!("ibdyn-noexec-{}", std::process::id()));
    std::fs::write(&prog, "#!/bin/sh\necho hi\n").unwrap();
    std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = s.run(&["run", "-n", "2", prog.to_str().unwrap()], None);
    let _ = std::fs::remove_file(&prog);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains(prog.to_str().unwrap()) && err.contains("Permission denied"),
        "stderr: {err}"
    );
}

#[test]
fn map_by_node_places_round_robin_and_default_is_block() {
    let s = Scratch::new("map");
    let script = "echo $IBDYN_RANK:$IBDYN_NODE";
    let out = s.run(
        &[
            "run", "-n", "5", "--nodes", "2", "--map-by", "node", "sh", "-c", script,
        ],
        None,
    );
    let mut got: Vec<String> = text(&out.stdout).lines().map(str::to_string).collect();
    got.sort();
    assert_eq!(got, vec!["0:0", "1:1", "2:0", "3:1", "4:0"]);
    let out = s.run(
        &["run", "-n", "5", "--nodes", "2", "sh", "-c", script],
        None,
    );
    let mut got: Vec<String> = text(&out.stdout).lines().map(str::to_string).collect();
    got.sort();
    assert_eq!(got, vec!["0:0", "1:0", "2:0", "3:1", "4:1"]);
}

/// A node daemon SIGKILLed under a two-node job: `ibdyn run` names it and ends with status 1,
/// without waiting out the teardown bound for ranks that daemon will never report, and leaves
/// nothing behind, not even the shared memory of the rank that died with the daemon.
#[test]
fn a_node_daemon_that_dies_fails_the_job_and_leaves_nothing() {
    let s = Scratch::new("lostdaemon");
    let prog = example_bin("dvm_check");
    let tag = format!("lostd{}", std::process::id());
    let mut cmd = s.ibdyn(&[
        "run",
        "-n",
        "2",
        "--nodes",
        "2",
        "--map-by",
        "node",
        prog.to_str().unwrap(),
        "hold",
        &tag,
    ]);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    // Rank 1 (on daemon 1) writes its pid once it runs; rank 0 holds too.
    let marks: Vec<_> = (0..2)
        .map(|r| s.dir.join(format!("hold-{tag}.{r}")))
        .collect();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let lost: u32 = loop {
        let pids: Vec<Option<u32>> = marks
            .iter()
            .map(|m| std::fs::read_to_string(m).ok().and_then(|p| p.parse().ok()))
            .collect();
        if let [Some(_), Some(pid)] = pids[..] {
            break pid;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the ranks did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    for m in &marks {
        std::fs::remove_file(m).unwrap();
    }
    let scratch = s.dir.to_str().unwrap();
    s.kill_node_daemon(1);
    let status = wait_bounded(&mut child, Duration::from_secs(60));
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(1), "stderr: {err}");
    assert!(err.contains("node daemon 1 died"), "stderr: {err}");
    assert!(!err.contains("did not exit within"), "stderr: {err}");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !processes_mentioning(scratch).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "left running: {:?}",
            processes_mentioning(scratch)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    s.assert_clean();
    let seg = format!("/dev/shm/ibdyn-{lost}");
    assert!(!std::path::Path::new(&seg).exists(), "{seg} left");
}

#[test]
fn sigint_is_forwarded_to_the_job() {
    sigint_ends_the_job("sigint", false);
}

/// A background job of a script starts with SIGINT ignored, and an ignored signal survives
/// exec: the ranks must still start with every signal at its default, so Ctrl-C forwarded by
/// `ibdyn run` ends them.
#[test]
fn sigint_is_forwarded_also_when_the_launcher_started_with_it_ignored() {
    sigint_ends_the_job("sigint-ignored", true);
}

fn sigint_ends_the_job(tag: &str, start_ignored: bool) {
    let s = Scratch::new(tag);
    let mut cmd = s.ibdyn(&[
        "run",
        "-n",
        "2",
        "--nodes",
        "2",
        "sh",
        "-c",
        "echo ready; exec sleep 60",
    ]);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if start_ignored {
        use std::os::unix::process::CommandExt;
        // SAFETY: only signal(2), which is async-signal-safe, runs between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::signal(libc::SIGINT, libc::SIG_IGN);
                Ok(())
            });
        }
    }
    let mut child = cmd.spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for _ in 0..2 {
        assert_eq!(lines.next().unwrap().unwrap(), "ready");
    }
    let st = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let status = wait_bounded(&mut child, Duration::from_secs(60));
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(128 + 2), "stderr: {err}");
    assert!(err.contains("killed by signal 2 (SIGINT)"), "stderr: {err}");
    s.assert_clean();
}

#[test]
fn shared_memory_of_exited_ranks_is_removed() {
    let s = Scratch::new("shm");
    let out = s.run(
        &[
            "run",
            "-n",
            "3",
            "--nodes",
            "2",
            example_bin("pmi_check").to_str().unwrap(),
            "shm",
        ],
        None,
    );
    assert_all_ok(&out, 3);
    let paths = lines_with(&out, "SHM ");
    assert_eq!(paths.len(), 3);
    for p in paths {
        let path = p.trim_start_matches("SHM ");
        assert!(!std::path::Path::new(path).exists(), "{path} left behind");
    }
}

#[test]
fn hello_runs_on_several_daemons() {
    let s = Scratch::new("hello");
    let out = s.run(
        &[
            "run",
            "-n",
            "4",
            "--nodes",
            "2",
            example_bin("hello").to_str().unwrap(),
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(lines_with(&out, "hello from rank").len(), 4);
}

#[test]
fn killing_the_launcher_takes_daemons_and_ranks_down() {
    let s = Scratch::new("killlauncher");
    let mut cmd = s.ibdyn(&[
        "run",
        "-n",
        "3",
        "--nodes",
        "2",
        "sh",
        "-c",
        "echo ready; exec sleep 60",
    ]);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for _ in 0..3 {
        assert_eq!(lines.next().unwrap().unwrap(), "ready");
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // Daemons notice through PR_SET_PDEATHSIG and their launcher connection; give them a
    // bounded time to kill the ranks and clean up.
    let needle = s.dir.to_string_lossy().into_owned();
    for _ in 0..1000 {
        let empty = std::fs::read_dir(&s.dir).unwrap().next().is_none();
        if empty && processes_mentioning(&needle).is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    s.assert_clean();
}

/// A job that outlives its bound is killed, and the failure shows what it printed before, which
/// is what tells why it hung.
#[test]
#[should_panic(expected = "said this before hanging")]
fn a_hung_command_is_killed_and_its_output_shown() {
    let mut cmd = std::process::Command::new("sh");
    cmd.args(["-c", "echo said this before hanging; exec sleep 30"]);
    run_bounded(cmd, None, Duration::from_secs(1));
}

/// `ibdyn run ... | head`: once the reader of its stdout has gone, the job ends with status 141,
/// as a shell reports a command killed by SIGPIPE, instead of running on (for ever, for `yes`)
/// with its output thrown away.
#[test]
fn a_job_whose_output_reader_leaves_ends_like_a_pipeline() {
    let s = Scratch::new("epipe");
    let mut cmd = s.ibdyn(&["run", "-n", "2", "--nodes", "2", "yes", "out"]);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    assert_eq!(read_then_close_stdout(&mut child, 2), ["out", "out"]);
    let status = wait_bounded(&mut child, Duration::from_secs(30));
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(141), "stderr: {err}");
    assert!(!err.contains("killed"), "stderr: {err}");
    s.assert_clean();
}

/// The same when the reader of stderr goes (`ibdyn run ... 2>&1 >/dev/null | head`): the job
/// ends with 141. And a message of the launcher's own to a stderr whose reader has gone is
/// dropped: before, it ended the launcher with a panic (status 134).
#[test]
fn a_job_whose_stderr_reader_leaves_ends_like_a_pipeline() {
    let s = Scratch::new("epipe2");
    let mut cmd = s.ibdyn(&["run", "-n", "2", "--nodes", "2", "sh", "-c", "yes err >&2"]);
    cmd.stdout(Stdio::null()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let err = child.stderr.take().unwrap();
    assert_eq!(read_then_close(err, 2), ["err", "err"]);
    let status = wait_bounded(&mut child, Duration::from_secs(30));
    assert_eq!(status.code(), Some(141));
    s.assert_clean();

    // A pipe whose reader is gone before the job starts; the rank writes nothing itself.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut cmd = s.ibdyn(&["run", "-n", "1", "sh", "-c", "exit 3"]);
    cmd.stdout(Stdio::null()).stderr(writer);
    let mut child = cmd.spawn().unwrap();
    drop(cmd);
    let status = wait_bounded(&mut child, Duration::from_secs(30));
    assert_eq!(
        status.code(),
        Some(3),
        "the launcher's message to a closed pipe"
    );
    s.assert_clean();
}

/// SIGUSR1 and SIGUSR2 to `ibdyn run` go on to every rank and end nothing by themselves (a
/// checkpoint warning such as Slurm's `--signal=USR1@60`, as mpirun and srun pass them on).
/// Before, SIGUSR1 killed the launcher, and the job with it.
#[test]
fn user_signals_are_passed_on_to_the_ranks() {
    for sig in ["USR1", "USR2"] {
        let s = Scratch::new(&format!("pass-{sig}"));
        let script = awaits_signal(sig);
        let mut cmd = s.ibdyn(&["run", "-n", "2", "--nodes", "2", "sh", "-c", &script]);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = cmd.spawn().unwrap();
        let (got, status) = signal_when_ready(&mut child, 2, sig);
        assert_eq!(got, [format!("got-{sig} 0"), format!("got-{sig} 1")]);
        assert_eq!(status.code(), Some(0), "{status:?}");
        s.assert_clean();
    }
}

/// A node daemon that gets SIGUSR1 (from `srun --signal`, or `scancel -s USR1` of a step)
/// passes it on to its ranks and goes on; before, it ended, and its ranks with it.
#[test]
fn a_node_daemon_passes_user_signals_on_to_its_ranks() {
    let s = Scratch::new("daemon-usr1");
    let script = awaits_signal("USR1");
    let mut cmd = s.ibdyn(&["run", "-n", "2", "--nodes", "2", "sh", "-c", &script]);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let (got, status) = after_ready(&mut child, 2, || {
        s.signal_node_daemon(1, libc::SIGUSR1);
        s.signal_node_daemon(0, libc::SIGUSR1);
    });
    assert_eq!(got, ["got-USR1 0", "got-USR1 1"]);
    assert_eq!(status.code(), Some(0), "{status:?}");
    s.assert_clean();
}

/// Each rank knows its index among its job's ranks on its node, and their number
/// (`IBDYN_LOCAL_RANK`/`IBDYN_LOCAL_SIZE`, MPICH's `MPI_LOCALRANKID`/`MPI_LOCALNRANKS` and
/// Open MPI's `OMPI_COMM_WORLD_*`), for a wrapper script that picks a GPU or a core set.
#[test]
fn ranks_know_their_local_rank_and_local_size() {
    let s = Scratch::new("local-rank");
    let script = "echo $IBDYN_RANK $IBDYN_NODE $IBDYN_LOCAL_RANK $IBDYN_LOCAL_SIZE \
                  $MPI_LOCALRANKID $MPI_LOCALNRANKS \
                  $OMPI_COMM_WORLD_RANK $OMPI_COMM_WORLD_SIZE \
                  $OMPI_COMM_WORLD_LOCAL_RANK $OMPI_COMM_WORLD_LOCAL_SIZE";
    let out = s.run(
        &[
            "run", "-n", "5", "--nodes", "2", "--map-by", "node", "sh", "-c", script,
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut lines: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
    lines.sort();
    // rank node local local-size, local local-size; rank size local local-size.
    assert_eq!(
        lines,
        [
            "0 0 0 3 0 3 0 5 0 3",
            "1 1 0 2 0 2 1 5 0 2",
            "2 0 1 3 1 3 2 5 1 3",
            "3 1 1 2 1 2 3 5 1 2",
            "4 0 2 3 2 3 4 5 2 3"
        ]
    );
}

/// Ctrl-Z stops the ranks (SIGSTOP, as mpirun sends) and then `ibdyn run` itself, so that the
/// shell sees the job stopped; SIGCONT (`fg`, `bg`) continues them. Before, the launcher stopped
/// while the ranks ran on.
#[test]
fn ctrl_z_stops_the_ranks_and_sigcont_continues_them() {
    let s = Scratch::new("tstp");
    let mut cmd = s.ibdyn(&["run", "-n", "2", "--nodes", "2", "sh", "-c", READY_WITH_PID]);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    job_control_check(&mut child, 2);
    s.assert_clean();
}

/// Output that cannot be written (a full disk: /dev/full) is said once, and a job that
/// otherwise succeeded ends with status 1, as a shell command whose output failed; a job that
/// failed keeps its own status. Before, the output was lost without a word and the status was 0.
#[test]
fn output_that_cannot_be_written_is_said_and_fails_the_status() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("SKIPPED: no /dev/full");
        return;
    };
    let s = Scratch::new("devfull");
    for (script, status) in [("echo a; echo b", 1), ("echo a; exit 5", 5)] {
        let mut cmd = s.ibdyn(&["run", "-n", "2", "--nodes", "2", "sh", "-c", script]);
        cmd.stdin(Stdio::null())
            .stdout(full.try_clone().unwrap())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        // A few lines: they fit in the pipe while the job runs.
        let st = wait_bounded(&mut child, Duration::from_secs(60));
        let mut err = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
        assert_eq!(st.code(), Some(status), "{script}: {err}");
        assert_eq!(
            err.matches("cannot write the job's output").count(),
            1,
            "{script}: {err}"
        );
        s.assert_clean();
    }
}

/// A program built with Open MPI (it needs `libmpi.so.40`) would run as one singleton per rank:
/// `ibdyn run` says so once, before its ranks start (a stand-in library with that SONAME here).
#[test]
fn a_program_built_with_open_mpi_is_warned_about() {
    let s = Scratch::new("ompi");
    let dir = std::env::temp_dir().join(format!("ibdyn-ompi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("lib.c"), "int ompi_stub(void) { return 0; }\n").unwrap();
    std::fs::write(
        dir.join("prog.c"),
        "int ompi_stub(void);\nint main(void) { return ompi_stub(); }\n",
    )
    .unwrap();
    let cc = |args: &[&str]| {
        let st = std::process::Command::new("cc")
            .current_dir(&dir)
            .args(args)
            .status()
            .unwrap();
        assert!(st.success(), "cc {args:?}");
    };
    cc(&[
        "-shared",
        "-fPIC",
        "-Wl,-soname,libmpi.so.40",
        "-o",
        "libmpi.so.40",
        "lib.c",
    ]);
    cc(&[
        "-o",
        "prog",
        "prog.c",
        "./libmpi.so.40",
        "-Wl,-rpath,$ORIGIN",
    ]);
    let prog = dir.join("prog");
    let out = s.run(&["run", "-n", "2", prog.to_str().unwrap()], None);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    let warned = "is built with Open MPI (it needs libmpi.so.40)";
    assert_eq!(err.matches(warned).count(), 1, "{err}");
    let out = s.run(&["run", "-n", "2", "true"], None);
    assert!(!text(&out.stderr).contains("Open MPI"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An argument with a newline (a multi-line `sh -c` or `python3 -c` script) reaches every rank
/// whole, on every node; it used to be refused ("contains a newline").
#[test]
fn arguments_with_newlines_reach_the_ranks_whole() {
    let s = Scratch::new("newline");
    // `$0` is the empty argument, `$1` "x\r" (2 bytes; a line's trailing \r is dropped).
    let script = "echo \"one $IBDYN_RANK ${#0}\"\necho \"two $IBDYN_RANK ${#1}\"\n";
    let out = s.run(
        &[
            "run", "-n", "2", "--nodes", "2", "sh", "-c", script, "", "x\r",
        ],
        None,
    );
    let lines = sorted_stdout(&out);
    assert_eq!(lines, ["one 0 0", "one 1 0", "two 0 2", "two 1 2"]);
    s.assert_clean();
}

/// Without `-n`, a job on hosts fills their slots (or `--ppn` per host), as mpirun fills a
/// batch allocation; on this machine it stays 1. (The "hosts" are daemons on this machine.)
#[test]
fn without_n_a_job_fills_its_hosts_slots() {
    let s = Scratch::new("fill");
    let on_hosts = ["--hosts", "a:2,b:1", "--launcher-exec", "env H={host}"];
    let say = ["--iface", "lo", "sh", "-c", "echo $IBDYN_RANK $IBDYN_NODE"];
    for (extra, want) in [
        (&[][..], &["0 0", "1 0", "2 1"][..]),
        (&["--ppn", "2"], &["0 0", "1 0", "2 1", "3 1"]),
        (&["-n", "1"], &["0 0"]),
    ] {
        let args = [&["run"][..], &on_hosts, extra, &say].concat();
        let out = s.run(&args, None);
        assert!(out.status.success(), "{extra:?}: {}", text(&out.stderr));
        let mut got: Vec<String> = text(&out.stdout).lines().map(String::from).collect();
        got.sort();
        assert_eq!(got, want, "{extra:?}");
    }
    let out = s.run(&["run", "--nodes", "2", "sh", "-c", "echo x"], None);
    assert_eq!(text(&out.stdout), "x\n");
}

/// A host that is this machine (`localhost`, its host name, a loopback address) gets its
/// daemon without ssh, as mpirun's and Hydra's do: with an ssh that always fails, the job runs.
#[test]
fn hosts_that_are_this_machine_need_no_ssh() {
    let s = Scratch::new("localhost");
    let me = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let hosts = format!("localhost:2,{}", me.trim());
    let mut run = s.ibdyn(&[
        "run",
        "--hosts",
        &hosts,
        "sh",
        "-c",
        "echo $IBDYN_RANK $IBDYN_NODE",
    ]);
    run.env("IBDYN_SSH", "false");
    let out = run_bounded(run, None, Duration::from_secs(60));
    let got = sorted_stdout(&out);
    assert_eq!(got, ["0 0", "1 0", "2 1"]);
    // Another host still goes through that ssh, and its failure is named.
    let mut run = s.ibdyn(&["run", "--hosts", "localhost,192.0.2.1", "true"]);
    run.env("IBDYN_SSH", "false");
    let out = run_bounded(run, None, Duration::from_secs(60));
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("host 192.0.2.1 (ssh)"), "{err}");
    s.assert_clean();
}

/// `--app FILE` (Open MPI's appfile, Hydra's `-configfile`): one application a line, quoted as
/// a shell would, `#` comments; the same job as the ` : ` line; a bad file is named.
#[test]
fn an_application_file_runs_as_one_job() {
    let s = Scratch::new("appfile");
    let file = std::env::temp_dir().join(format!("ibdyn-appfile-{}", std::process::id()));
    std::fs::write(
        &file,
        "# a master and its workers\n\
         -n 1 sh -c 'echo \"master $IBDYN_RANK $IBDYN_APPNUM $IBDYN_SIZE\"'\n\
         \n\
         -np 2 sh -c 'echo \"worker $IBDYN_RANK $IBDYN_APPNUM $IBDYN_SIZE\"'\n",
    )
    .unwrap();
    let path = file.to_str().unwrap();
    for spelt in ["--app", "-configfile"] {
        let out = s.run(&["run", "--nodes", "2", spelt, path], None);
        assert!(out.status.success(), "{spelt}: {}", text(&out.stderr));
        let mut got: Vec<String> = text(&out.stdout).lines().map(String::from).collect();
        got.sort();
        assert_eq!(
            got,
            ["master 0 0 3", "worker 1 1 3", "worker 2 1 3"],
            "{spelt}"
        );
    }
    let out = s.run(&["run", "-n", "2", "--app", path], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("-n is given per line"));
    std::fs::write(&file, "-n 2 sh -c 'unbalanced\n").unwrap();
    let out = s.run(&["run", "--app", path], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("line 1: unbalanced quotes"));
    std::fs::remove_file(&file).unwrap();
    s.assert_clean();
}

/// `ibdyn run ... &` in an interactive shell: the launcher reads its terminal only while it is
/// in the terminal's foreground, so it is not stopped for tty input (SIGTTIN) in the
/// background; it used to stop, job and all ("Stopped (tty input)", `wait` giving 149).
/// A terminal of its own from `script` (util-linux), with an interactive bash in it.
#[test]
fn a_launcher_in_the_background_of_a_terminal_is_not_stopped_for_input() {
    let s = Scratch::new("bg-tty");
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("\n*** SKIPPED: no `script` (util-linux) to give the shell a terminal ***\n");
        return;
    }
    let job = s.dir.join("job.sh");
    std::fs::write(
        &job,
        format!(
            "set -m\n{} run -n 2 --nodes 2 sh -c 'echo done-bg' &\nwait $!\necho \"status $?\"\n",
            ibdyn_bin().display()
        ),
    )
    .unwrap();
    let mut c = std::process::Command::new("script");
    c.args([
        "-qc",
        &format!("bash --norc -i {}", job.display()),
        "/dev/null",
    ])
    .env("TMPDIR", &s.dir)
    .env_remove("IBDYN_LOG");
    let out = run_bounded(c, None, Duration::from_secs(60));
    let said = text(&out.stdout).replace('\r', "");
    assert_eq!(said.matches("done-bg").count(), 2, "{said}");
    assert!(said.contains("status 0"), "{said}");
    std::fs::remove_file(&job).unwrap();
    s.assert_clean();
}
