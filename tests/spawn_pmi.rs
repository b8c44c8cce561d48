//! PMI-level spawn through real jobs of `tests/programs/spawn_check.rs` under `ibdyn run`: children
//! see spawned(), the preput keys and their own world; spawn_multiple numbers ranks across
//! commands with appnums; a missing program gives per-child OS errors and the parent works
//! on; placement by load and by info key; cross-job reads; job status after a kill;
//! --keep-going; 500 spawn cycles without growth of the daemon.

mod common;

use common::*;
use std::process::Output;

fn spawn_check(s: &Scratch, nodes: u32, extra: &[&str], args: &[&str]) -> Output {
    let nodes = nodes.to_string();
    let prog = example_bin("spawn_check");
    let mut a = vec!["run", "-n", "1", "--nodes", &nodes];
    a.extend_from_slice(extra);
    a.push(prog.to_str().unwrap());
    a.extend_from_slice(args);
    s.run(&a, None)
}

fn show(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    )
}

/// Value of `key=` in a line.
fn field<'a>(line: &'a str, key: &str) -> &'a str {
    line.split(' ')
        .find_map(|t| t.strip_prefix(&format!("{key}=")))
        .unwrap_or("")
}

#[test]
fn children_see_spawned_preput_and_their_world() {
    let s = Scratch::new("spawn4");
    let out = spawn_check(&s, 1, &[], &["parent", "4"]);
    assert_all_ok(&out, 1);
    let spawned = lines_with(&out, "SPAWNED");
    assert_eq!(spawned.len(), 1, "{}", show(&out));
    assert_eq!(field(&spawned[0], "size"), "4");
    let job = field(&spawned[0], "job").to_string();
    let children = lines_with(&out, "CHILD ");
    assert_eq!(children.len(), 4, "{}", show(&out));
    let mut ranks: Vec<&str> = children.iter().map(|l| field(l, "rank")).collect();
    ranks.sort();
    assert_eq!(ranks, ["0", "1", "2", "3"]);
    for l in &children {
        assert_eq!(field(l, "size"), "4", "{l}");
        assert!(field(l, "preput").starts_with("from-"), "{l}");
    }
    // The parent read every child's key from the child job's key-value space.
    assert_eq!(lines_with(&out, "HEARD").len(), 4, "{}", show(&out));
    assert!(!job.is_empty());
}

#[test]
fn a_parent_reads_its_childrens_keys_after_they_have_exited() {
    let s = Scratch::new("late");
    let out = spawn_check(&s, 2, &[], &["late", "3"]);
    assert_all_ok(&out, 1);
    assert_eq!(lines_with(&out, "HEARD").len(), 3, "{}", show(&out));
    // A key nobody put still fails at once (the job has ended), not after the wait's bound.
    assert_eq!(lines_with(&out, "NEVER true").len(), 1, "{}", show(&out));
}

#[test]
fn spawn_multiple_numbers_ranks_across_commands_with_appnums() {
    let s = Scratch::new("multi");
    let out = spawn_check(&s, 2, &[], &["multi"]);
    assert_all_ok(&out, 1);
    let mut got: Vec<String> = lines_with(&out, "CHILD ")
        .iter()
        .map(|l| {
            format!(
                "{}:{}:{}",
                field(l, "rank"),
                field(l, "size"),
                field(l, "appnum")
            )
        })
        .collect();
    got.sort();
    assert_eq!(got, ["0:3:0", "1:3:0", "2:3:1"], "{}", show(&out));
}

#[test]
fn missing_program_gives_per_child_os_errors_and_the_parent_works_on() {
    let s = Scratch::new("missing");
    let out = spawn_check(&s, 2, &[], &["missing"]);
    assert_all_ok(&out, 1);
    let starts = lines_with(&out, "CHILDSTART");
    // First spawn: 2 failed; second: rank 0 started (then killed), ranks 1-2 failed.
    assert_eq!(starts.len(), 5, "{}", show(&out));
    let failed: Vec<&String> = starts.iter().filter(|l| !l.contains("errno=0")).collect();
    assert_eq!(failed.len(), 4, "{}", show(&out));
    for l in failed {
        assert!(
            l.contains("errno=2")
                && l.contains("ibdyn-no-such-program")
                && l.contains("No such file or directory"),
            "{l}"
        );
    }
    // Every rank of both jobs is accounted for (the started one was killed).
    let exited: Vec<String> = lines_with(&out, "FAILEDJOB");
    assert_eq!(exited, ["FAILEDJOB exited=2", "FAILEDJOB exited=3"]);
    // Killing the started child of a failed spawn is not reported as a crash.
    assert!(!text(&out.stderr).contains("killed"), "{}", show(&out));
}

/// A failing job's teardown reports its spawned jobs' ends in one line, not a line per rank
/// (a master with thousands of workers printed thousands of "killed by signal 15" lines).
#[test]
fn a_teardown_sums_up_the_spawned_ranks_it_ends() {
    let s = Scratch::new("teardown");
    let out = spawn_check(&s, 2, &[], &["fail-after-spawns", "3"]);
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    let err = text(&out.stderr);
    assert!(
        err.contains("rank 0 exited with code 3; tearing the job down"),
        "{}",
        show(&out)
    );
    assert!(
        err.contains("6 rank(s) of spawned jobs ended abnormally during the teardown"),
        "{}",
        show(&out)
    );
    assert!(!err.contains("killed by signal"), "{}", show(&out));
    s.assert_clean();
}

#[test]
fn children_go_to_the_least_loaded_daemons() {
    let s = Scratch::new("place");
    // Parent on daemon 0: the first children go to the empty daemons 1 and 2.
    let out = spawn_check(&s, 3, &[], &["parent", "4"]);
    assert_all_ok(&out, 1);
    let spawned = lines_with(&out, "SPAWNED");
    assert_eq!(field(&spawned[0], "nodes"), "1,2,0,1", "{}", show(&out));
}

#[test]
fn info_keys_force_the_node_and_set_wdir_env_and_ibdyn_keys() {
    let s = Scratch::new("info");
    let wdir = std::env::temp_dir().join(format!("ibdyn-wdir-{}", std::process::id()));
    std::fs::create_dir_all(&wdir).unwrap();
    let wd = format!("wdir={}", wdir.display());
    let out = spawn_check(
        &s,
        3,
        &[],
        &[
            "parent",
            "2",
            "host=2",
            "ibdyn_wireup=rc",
            "env=SPAWN_CHECK_OTHER=x",
            "env_hex=SPAWN_CHECK_ENV=796573",
            &wd,
        ],
    );
    std::fs::remove_dir(&wdir).unwrap();
    assert_all_ok(&out, 1);
    let spawned = lines_with(&out, "SPAWNED");
    assert_eq!(field(&spawned[0], "nodes"), "2,2", "{}", show(&out));
    for l in lines_with(&out, "CHILD ") {
        assert_eq!(field(&l, "node"), "2", "{l}");
        assert_eq!(field(&l, "wireup"), "rc", "{l}");
        assert_eq!(field(&l, "env"), "yes", "{l}");
        assert_eq!(field(&l, "cwd"), wdir.display().to_string(), "{l}");
    }
}

#[test]
fn a_bad_host_index_is_an_error_naming_it() {
    let s = Scratch::new("badhost");
    let out = spawn_check(&s, 2, &[], &["parent", "1", "host=5"]);
    assert!(!out.status.success());
    let fail = lines_with(&out, "FAIL");
    assert!(
        fail.len() == 1 && fail[0].contains("host (5)") && fail[0].contains("only 2 node daemons"),
        "{}",
        show(&out)
    );
}

#[test]
fn job_status_reports_a_killed_child_and_the_launcher_names_it() {
    let s = Scratch::new("kill");
    let out = spawn_check(&s, 2, &["--tag-output"], &["kill"]);
    assert!(
        out.status.success() && lines_with(&out, "[0] OK 0").len() == 1,
        "{}",
        show(&out)
    );
    assert_eq!(
        lines_with(&out, "[0] STATUS"),
        ["[0] STATUS rank 1 was killed by signal 9 (SIGKILL)"],
        "{}",
        show(&out)
    );
    let err = text(&out.stderr);
    assert!(
        err.contains("rank 1 was killed by signal 9 (SIGKILL)") && err.contains("ibdyn run: job "),
        "{}",
        show(&out)
    );
    // The other child went on and ended normally; its lines carry [job.rank].
    let tagged: Vec<String> = text(&out.stdout)
        .lines()
        .filter(|l| l.contains("] CHILD "))
        .map(str::to_string)
        .collect();
    assert_eq!(tagged.len(), 2, "{}", show(&out));
    for l in tagged {
        assert!(
            l.starts_with('[') && l[1..].split(']').next().unwrap().contains('.'),
            "{l}"
        );
    }
}

#[test]
fn keep_going_reports_a_dead_rank_and_runs_the_rest() {
    let s = Scratch::new("keepgoing");
    let sh = "if [ \"$IBDYN_RANK\" = 1 ]; then kill -KILL $$; fi; sleep 0.3; echo done-$IBDYN_RANK";
    let out = s.run(&["run", "-n", "3", "--keep-going", "sh", "-c", sh], None);
    assert!(!out.status.success(), "{}", show(&out));
    let mut done = lines_with(&out, "done-");
    done.sort();
    assert_eq!(done, ["done-0", "done-2"], "{}", show(&out));
    assert!(
        text(&out.stderr).contains("rank 1 was killed by signal 9 (SIGKILL)"),
        "{}",
        show(&out)
    );
    // Without it, the job is torn down: the other ranks, which would print only after 30 s,
    // end with it (however late rank 1 starts).
    let sh = "if [ \"$IBDYN_RANK\" = 1 ]; then kill -KILL $$; fi; sleep 30; echo done-$IBDYN_RANK";
    let out = s.run(&["run", "-n", "3", "sh", "-c", sh], None);
    assert!(!out.status.success(), "{}", show(&out));
    assert!(lines_with(&out, "done-").is_empty(), "{}", show(&out));
}

#[test]
fn five_hundred_spawn_cycles_do_not_grow_the_daemon() {
    let s = Scratch::new("cycles");
    let out = spawn_check(&s, 1, &[], &["cycles", "500"]);
    assert_all_ok(&out, 1);
    let census = lines_with(&out, "CENSUS");
    assert_eq!(census.len(), 1, "{}", show(&out));
    let nums: Vec<usize> = census[0]
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse().ok())
        .collect();
    // before=Some((fds, threads, kids)) after=(fds, threads, kids)
    assert_eq!(nums.len(), 6, "{}", census[0]);
    assert!(nums[3] <= nums[0], "fds grew: {}", census[0]);
    assert!(nums[4] <= nums[1], "threads grew: {}", census[0]);
    assert!(nums[5] <= nums[2], "children grew: {}", census[0]);
}

#[test]
fn a_singleton_that_spawns_gets_a_private_daemon_that_goes_away_with_it() {
    let s = Scratch::new("singleton");
    let mut c = std::process::Command::new(example_bin("spawn_check"));
    c.args(["parent", "2"])
        .env("TMPDIR", &s.dir)
        .env("IBDYN_BIN", ibdyn_bin())
        .env_remove("IBDYN_PMI_SOCK")
        .env_remove("PMI_FD");
    let out = run_bounded(c, None, std::time::Duration::from_secs(60));
    assert_all_ok(&out, 1);
    assert_eq!(lines_with(&out, "CHILD ").len(), 2, "{}", show(&out));
    assert_eq!(lines_with(&out, "HEARD").len(), 2, "{}", show(&out));
    // The private launcher and daemon leave right after the singleton (bounded wait).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let left = std::fs::read_dir(&s.dir).unwrap().count();
        let procs = processes_mentioning(&s.dir.to_string_lossy());
        if left == 0 && procs.is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "left behind: {left} entries, processes {procs:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn a_singleton_without_an_ibdyn_binary_gets_a_clear_error() {
    let s = Scratch::new("nobin");
    let mut c = std::process::Command::new(example_bin("spawn_check"));
    c.args(["parent", "1"])
        .env("TMPDIR", &s.dir)
        .env("IBDYN_BIN", s.dir.join("no-such-ibdyn"));
    let out = run_bounded(c, None, std::time::Duration::from_secs(60));
    assert!(!out.status.success());
    let fail = lines_with(&out, "FAIL");
    assert!(
        fail.len() == 1 && fail[0].contains("IBDYN_BIN") && fail[0].contains("no-such-ibdyn"),
        "{}",
        show(&out)
    );
    s.assert_clean();
}

#[test]
fn a_singleton_killed_by_a_signal_takes_its_daemon_and_children_at_once() {
    use std::io::BufRead;
    use std::time::{Duration, Instant};
    let s = Scratch::new("singleton-kill");
    let mut c = std::process::Command::new(example_bin("spawn_check"));
    c.args(["hang", "2"])
        .env("TMPDIR", &s.dir)
        .env("IBDYN_BIN", ibdyn_bin())
        .env_remove("IBDYN_PMI_SOCK")
        .env_remove("PMI_FD")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut singleton = c.spawn().expect("start the singleton");
    let stdout = singleton.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(l) if l == "SPAWNED" => break,
            Ok(_) => {}
            Err(e) => {
                let _ = singleton.kill();
                let _ = singleton.wait();
                panic!("the singleton did not spawn: {e}");
            }
        }
    }
    // The singleton, its private launcher and daemon, and the two children.
    let mine = processes_mentioning(&s.dir.to_string_lossy());
    assert!(mine.len() >= 5, "expected the whole family alive: {mine:?}");
    singleton.kill().expect("SIGKILL the singleton");
    singleton.wait().expect("reap the singleton");
    // Gone at once: the children wait 30 s for a release that never comes, and the old
    // behaviour waited for them (then the 60 s spawn bound).
    let killed = Instant::now();
    loop {
        let procs = processes_mentioning(&s.dir.to_string_lossy());
        let left = std::fs::read_dir(&s.dir).unwrap().count();
        if procs.is_empty() && left == 0 {
            break;
        }
        assert!(
            killed.elapsed() < Duration::from_secs(10),
            "10 s after the singleton was killed: {left} entries, processes {procs:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
