//! Helpers shared by the integration tests: where the binaries are, a private TMPDIR per
//! test (so leftovers of a job can be checked without seeing other tests' jobs), and
//! bounded runs of real processes.
#![allow(dead_code)]

pub mod dvm;
pub mod netns;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The `ibdyn` command: ibdyn-launcher's binary, built by `cargo test` as the example `ibdyn`
/// of this package (so a test never runs a stale one).
pub fn ibdyn_bin() -> PathBuf {
    example_bin("ibdyn")
}

/// An example program of the root package (built by `cargo test`): target/<profile>/examples/<name>.
pub fn example_bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>");
    let p = profile_dir.join("examples").join(name);
    assert!(p.exists(), "example {name} not built at {}", p.display());
    p
}

/// `ibdyn` under coreutils' `timeout`: a hung job fails its test instead of hanging the suite.
pub fn ibdyn_bounded() -> Command {
    let mut c = Command::new("timeout");
    c.args(["--signal=TERM", "--kill-after=10", "180"])
        .arg(ibdyn_bin());
    c
}

/// `mpiexec.hydra` if installed.
pub fn mpiexec_hydra() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("mpiexec.hydra"))
        .find(|p| p.exists())
}

/// A private TMPDIR for the jobs of one test; removed on drop.
pub struct Scratch {
    pub dir: PathBuf,
}

impl Scratch {
    pub fn new(tag: &str) -> Scratch {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "ibdyn-test-{}-{}-{tag}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("create scratch dir");
        Scratch { dir }
    }

    /// An `ibdyn` command whose session directory lands in this scratch dir.
    pub fn ibdyn(&self, args: &[&str]) -> Command {
        let mut c = Command::new(ibdyn_bin());
        c.args(args)
            .env("TMPDIR", &self.dir)
            .env_remove("IBDYN_LOG");
        c
    }

    /// SIGKILLs node daemon `index` of the (one) daemon set running in this scratch dir.
    pub fn kill_node_daemon(&self, index: u32) {
        self.signal_node_daemon(index, libc::SIGKILL);
    }

    /// Sends `sig` to node daemon `index` of the (one) daemon set running in this scratch dir.
    pub fn signal_node_daemon(&self, index: u32, sig: i32) {
        let scratch = self.dir.to_str().expect("scratch path");
        let flag = format!("--index {index} ");
        let daemons: Vec<u32> = processes_mentioning(scratch)
            .into_iter()
            .filter(|(_, cmd)| cmd.contains(" daemon ") && cmd.contains(&flag))
            .map(|(pid, _)| pid)
            .collect();
        assert_eq!(daemons.len(), 1, "{:?}", processes_mentioning(scratch));
        // SAFETY: kill has no memory-safety preconditions; the pid is this scratch's daemon.
        assert_eq!(unsafe { libc::kill(daemons[0] as i32, sig) }, 0);
    }

    /// Runs `ibdyn ARGS` to its end (bounded) and checks that nothing of the job is left.
    pub fn run(&self, args: &[&str], stdin: Option<&[u8]>) -> Output {
        let out = run_bounded(self.ibdyn(args), stdin, Duration::from_secs(120));
        self.assert_clean();
        out
    }

    /// No session directory, socket, daemon or rank of this scratch dir's jobs is left.
    pub fn assert_clean(&self) {
        let entries: Vec<_> = std::fs::read_dir(&self.dir)
            .expect("read scratch")
            .flatten()
            .map(|e| e.path())
            .collect();
        assert!(
            entries.is_empty(),
            "left behind in {}: {entries:?}",
            self.dir.display()
        );
        let needle = self.dir.to_string_lossy().into_owned();
        let procs = processes_mentioning(&needle);
        assert!(
            procs.is_empty(),
            "processes of the job still alive: {procs:?}"
        );
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Pids whose command line or environment contains `needle`.
pub fn processes_mentioning(needle: &str) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    let me = std::process::id();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        for f in ["cmdline", "environ"] {
            if let Ok(bytes) = std::fs::read(e.path().join(f)) {
                if String::from_utf8_lossy(&bytes).contains(needle) {
                    let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
                    out.push((pid, String::from_utf8_lossy(&cmd).replace('\0', " ")));
                    break;
                }
            }
        }
    }
    out
}

fn drain(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = r.read_to_end(&mut v);
        v
    })
}

/// Waits for `child` at most `limit`; kills it and returns None past that.
fn wait_or_kill(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(st) = child.try_wait().expect("try_wait") {
            return Some(st);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Waits for `child` at most `limit`; kills it and panics past that.
pub fn wait_bounded(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    wait_or_kill(child, limit).unwrap_or_else(|| panic!("process did not finish within {limit:?}"))
}

/// What a drained pipe held, if its reader ends within a few seconds (a process the killed
/// one left behind may still hold the pipe open).
fn drained_within(h: std::thread::JoinHandle<Vec<u8>>) -> String {
    let deadline = Instant::now() + Duration::from_secs(3);
    while !h.is_finished() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    if h.is_finished() {
        text(&h.join().unwrap_or_default())
    } else {
        "(still held open by a process left behind)".into()
    }
}

/// Runs a command with the given stdin (or none), collecting its output, bounded by `limit`.
pub fn run_bounded(mut cmd: Command, stdin: Option<&[u8]>, limit: Duration) -> Output {
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn");
    if let (Some(data), Some(mut w)) = (stdin, child.stdin.take()) {
        let data = data.to_vec();
        std::thread::spawn(move || {
            let _ = w.write_all(&data);
        });
    }
    let out = drain(child.stdout.take().expect("stdout"));
    let err = drain(child.stderr.take().expect("stderr"));
    let Some(status) = wait_or_kill(&mut child, limit) else {
        // What the job said before it hung is what tells why.
        panic!(
            "process did not finish within {limit:?}\nstdout:\n{}\nstderr:\n{}",
            drained_within(out),
            drained_within(err)
        );
    };
    Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    }
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Sorted lines of stdout that start with `prefix`.
pub fn lines_with(out: &Output, prefix: &str) -> Vec<String> {
    let mut v: Vec<String> = text(&out.stdout)
        .lines()
        .filter(|l| l.starts_with(prefix))
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

/// Panics with the job's output unless it exited 0 and printed `OK <rank>` for every rank.
pub fn assert_all_ok(out: &Output, n: u32) {
    let ok = lines_with(out, "OK ");
    let mut want: Vec<String> = (0..n).map(|r| format!("OK {r}")).collect();
    want.sort();
    assert!(
        out.status.success() && ok == want,
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
}

/// Reads a few lines of `child`'s piped stdout, then closes it (the reader of `prog | head`
/// leaving); returns what was read.
pub fn read_then_close_stdout(child: &mut Child, lines: usize) -> Vec<String> {
    read_then_close(child.stdout.take().expect("stdout piped"), lines)
}

/// [`read_then_close_stdout`] for a stream of `child`'s (its stdout or stderr).
pub fn read_then_close(stream: impl Read, lines: usize) -> Vec<String> {
    use std::io::BufRead;
    std::io::BufReader::new(stream)
        .lines()
        .take(lines)
        .map(|l| l.expect("a line"))
        .collect()
}

/// A rank's shell script that says "ready", then waits for `sig` (`USR1`, `USR2`): it then
/// says "got-SIG RANK" and exits 0.
pub fn awaits_signal(sig: &str) -> String {
    format!(
        "trap 'echo got-{sig} $IBDYN_RANK; exit 0' {sig}; echo ready; \
         while :; do sleep 0.05; done"
    )
}

/// Once `child` (ranks of [`awaits_signal`], stdout piped) has printed `n` "ready" lines,
/// sends it `sig`; returns the rest of its stdout, sorted, and its status.
pub fn signal_when_ready(
    child: &mut Child,
    n: usize,
    sig: &str,
) -> (Vec<String>, std::process::ExitStatus) {
    let pid = child.id().to_string();
    after_ready(child, n, || {
        let st = Command::new("kill")
            .args([format!("-{sig}"), pid])
            .status()
            .expect("run kill");
        assert!(st.success());
    })
}

/// Once `child` (ranks of [`awaits_signal`], stdout piped) has printed `n` "ready" lines,
/// runs `then`; returns the rest of its stdout, sorted, and its status.
pub fn after_ready(
    child: &mut Child,
    n: usize,
    then: impl FnOnce(),
) -> (Vec<String>, std::process::ExitStatus) {
    use std::io::BufRead;
    let mut lines = std::io::BufReader::new(child.stdout.take().expect("stdout piped")).lines();
    for _ in 0..n {
        assert_eq!(lines.next().expect("a line").expect("a line"), "ready");
    }
    then();
    let mut rest: Vec<String> = lines.map(|l| l.expect("a line")).collect();
    rest.sort();
    (rest, wait_bounded(child, Duration::from_secs(60)))
}

/// The state letter of process `pid` in /proc (`T` stopped, `S` sleeping, ...; `?` gone).
pub fn process_state(pid: u32) -> char {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit(')').next()?.trim_start().chars().next())
        .unwrap_or('?')
}

/// Waits (at most 30 s) until every process of `pids` is stopped (`stopped`) or not.
pub fn wait_stopped(pids: &[u32], stopped: bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let states: Vec<char> = pids.iter().map(|&p| process_state(p)).collect();
        if states.iter().all(|&s| (s == 'T') == stopped) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "processes {pids:?} in states {states:?}, not all {}",
            if stopped { "stopped" } else { "running" }
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Ctrl-Z (SIGTSTP) to `child`, an `ibdyn run` whose `n` ranks print "ready PID" (stdout
/// piped), stops them and it; SIGCONT continues them all; then SIGINT ends the job (130).
pub fn job_control_check(child: &mut Child, n: usize) {
    use std::io::BufRead;
    let mut lines = std::io::BufReader::new(child.stdout.take().expect("stdout piped")).lines();
    let mut pids: Vec<u32> = (0..n)
        .map(|_| {
            let l = lines.next().expect("a line").expect("a line");
            l.strip_prefix("ready ")
                .expect("ready PID")
                .parse()
                .expect("a pid")
        })
        .collect();
    let signal = |sig: &str| {
        let st = Command::new("kill")
            .args([format!("-{sig}"), child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(st.success());
    };
    pids.push(child.id());
    signal("TSTP");
    wait_stopped(&pids, true);
    signal("CONT");
    wait_stopped(&pids, false);
    signal("INT");
    let status = wait_bounded(child, Duration::from_secs(60));
    assert_eq!(status.code(), Some(130), "{status:?}");
}

/// A rank's shell script for [`job_control_check`].
pub const READY_WITH_PID: &str = "echo ready $$; while :; do sleep 0.05; done";

/// The files of `--output-filename DIR` after a master (spawn_check parent 2) ran: its own
/// stdout at the top, each child's under `job.J`; nothing on the terminal.
pub fn check_output_files(dir: &std::path::Path, out: &std::process::Output) {
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "",
        "the ranks' output went to the terminal"
    );
    let read = |p: std::path::PathBuf| std::fs::read_to_string(&p).unwrap_or_default();
    let master = read(dir.join("rank.0/stdout"));
    let job = master
        .split("SPAWNED job=")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .unwrap_or_else(|| panic!("no SPAWNED line in {master:?}"));
    for r in 0..2 {
        let child = read(dir.join(format!("job.{job}/rank.{r}/stdout")));
        assert!(child.starts_with(&format!("CHILD rank={r} ")), "{child:?}");
    }
}

/// The lines of a job's stdout, sorted (ranks print in any order); the job must have succeeded.
pub fn sorted_stdout(out: &Output) -> Vec<String> {
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut lines: Vec<String> = text(&out.stdout).lines().map(String::from).collect();
    lines.sort();
    lines
}

/// The CPUs of a `Cpus_allowed_list` ("0-2,5").
pub fn cpu_list(text: &str) -> Vec<usize> {
    text.trim()
        .split(',')
        .filter(|p| !p.is_empty())
        .flat_map(|p| match p.split_once('-') {
            Some((a, b)) => (a.parse().unwrap()..=b.parse().unwrap()).collect::<Vec<usize>>(),
            None => vec![p.parse().unwrap()],
        })
        .collect()
}

/// This process's `Cpus_allowed_list` as the kernel writes it ("0-1"): what its children, and
/// node daemons started from it, may run on.
pub fn my_cpus_text() -> String {
    let status = std::fs::read_to_string("/proc/self/status").expect("read /proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .expect("a Cpus_allowed_list line")
        .trim()
        .to_string()
}
