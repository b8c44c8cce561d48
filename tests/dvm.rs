//! Persistent daemons: `ibdyn dvm start` / `run --dvm` / `dvm stop`, two jobs under one DVM
//! meeting through the name service, spawns under the DVM, a client without the secret
//! refused, and nothing left behind after the stop. Then many jobs at once on two node
//! daemons: every line of every rank arrives, in order, before its `ibdyn run` ends; jobs
//! start while others end; a server and a client start at the same instant; a master leaves
//! right after spawning; jobs and clients are killed midway; a job that cannot start, or a
//! DVM that never answers, fails within a bound.
//!
//! `IBDYN_TEST_SLOW_LAUNCHER_LINK=0:MS` (daemon 0 holds each line to the controller back)
//! forces the interleaving that lost lines: the other daemon's lines overtake daemon 0's
//! announcement of a job (`all:MS`: a client's departure overtakes every announcement). `IBDYN_DVM_STRESS_ROUNDS` sets the rounds of the 8-jobs stress
//! (`cargo test --test dvm -- --ignored` runs 50).

mod common;

use common::dvm::{show, Dvm};
use common::*;
use ibdyn::pmi::{wire, SpawnCommand, SpawnRequest};
use std::io::{BufRead, Read, Write};
use std::process::Output;
use std::time::{Duration, Instant};

#[test]
fn dvm_runs_jobs_returns_status_and_stops_clean() {
    let s = Scratch::new("dvm");
    let mut dvm = Dvm::start(&s, 2);
    let hello = example_bin("hello");
    for _ in 0..2 {
        let out = dvm.run(&["-n", "3", "--tag-output", hello.to_str().unwrap()]);
        assert!(out.status.success(), "{}", show(&out));
        assert_eq!(lines_with(&out, "[").len(), 3, "{}", show(&out));
    }
    let out = dvm.run(&["-n", "2", "sh", "-c", "exit 3"]);
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("exited with code 3"),
        "{}",
        show(&out)
    );
    let out = dvm.run(&["-n", "1", "no-such-program-ibdyn"]);
    assert_eq!(out.status.code(), Some(127), "{}", show(&out));
    // The DVM still serves after those.
    let spawn = example_bin("spawn_check");
    let out = dvm.run(&["-n", "1", spawn.to_str().unwrap(), "parent", "3"]);
    assert_all_ok(&out, 1);
    assert_eq!(lines_with(&out, "CHILD ").len(), 3, "{}", show(&out));
    dvm.stop();
}

#[test]
fn two_jobs_under_one_dvm_meet_through_the_name_service() {
    let s = Scratch::new("dvmns");
    let mut dvm = Dvm::start(&s, 2);
    let prog = example_bin("spawn_check");
    let server = {
        let mut c = s.ibdyn(&["run", "--dvm", "-n", "1", prog.to_str().unwrap(), "server"]);
        c.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        c.spawn().expect("start server job")
    };
    let client = dvm.run(&["-n", "1", prog.to_str().unwrap(), "client"]);
    let server = server.wait_with_output().expect("server output");
    assert_all_ok(&client, 1);
    assert_all_ok(&server, 1);
    let c = lines_with(&client, "CLIENT");
    let sv = lines_with(&server, "SERVER");
    assert_eq!(
        (c.len(), sv.len()),
        (1, 1),
        "{}\n{}",
        show(&client),
        show(&server)
    );
    // Each names the other's job.
    let cjob = c[0].split(' ').nth(1).unwrap();
    let sjob = sv[0].split(' ').nth(1).unwrap();
    assert!(
        c[0].ends_with(sjob) && sv[0].ends_with(cjob),
        "{c:?} {sv:?}"
    );
    dvm.stop();
}

#[test]
fn names_a_job_left_published_are_withdrawn_when_it_ends() {
    let s = Scratch::new("dvmnames");
    let mut dvm = Dvm::start(&s, 2);
    let prog = example_bin("dvm_check");
    let prog = prog.to_str().unwrap();
    // Twice: the second publish fails ("already published") if the first name was left.
    // Ranks on both daemons, so that names come from the root's node and from the other.
    for _ in 0..2 {
        let out = dvm.run(&["-n", "2", "--map-by", "node", prog, "publish", "svc-left"]);
        assert!(out.status.success(), "{}", show(&out));
        let out = dvm.run(&["-n", "1", prog, "absent", "svc-left", "2"]);
        assert!(out.status.success(), "{}", show(&out));
    }
    dvm.stop();
}

/// A connecting root that ends after the answer reached it, before it confirmed it
/// (`IBDYN_TEST_CONNECT_VANISH`): the accepting root notices that it is gone, drops it, and
/// pairs with the next client within the same accept.
#[test]
fn an_accept_whose_connecting_root_vanishes_takes_the_next_client() {
    let s = Scratch::new("dvmvanish");
    let bounds = [
        ("IBDYN_ACCEPT_TIMEOUT", "30"),
        ("IBDYN_CONNECT_TIMEOUT", "30"),
    ];
    let dvm = Dvm::start_with(&s, 2, &bounds);
    let prog = example_bin("dvm_check");
    let prog = prog.to_str().unwrap();
    let server = dvm.spawn(&["-n", "1", prog, "server", "svc-vanish"]);
    let mut vanish = s.ibdyn(&["run", "--dvm", "-n", "1", prog, "client", "svc-vanish"]);
    vanish.envs(bounds).env("IBDYN_TEST_CONNECT_VANISH", "0");
    let out = run_bounded(vanish, None, Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("exits before confirming"),
        "{}",
        show(&out)
    );
    let client = dvm.run(&["-n", "1", prog, "client", "svc-vanish"]);
    assert!(client.status.success(), "{}", show(&client));
    let server = server.wait_with_output().expect("server output");
    assert!(server.status.success(), "{}", show(&server));
}

#[test]
fn a_client_without_the_secret_is_refused() {
    let s = Scratch::new("dvmsecret");
    let mut dvm = Dvm::start(&s, 1);
    let contact = dvm.contact();
    let port: u16 = contact
        .split_whitespace()
        .find_map(|t| t.strip_prefix("port="))
        .and_then(|p| p.parse().ok())
        .expect("port in contact file");
    let mut sock = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    sock.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    // A hello whose proof is not the HMAC of the DVM's challenge under its secret.
    let proof = "ab".repeat(32);
    let hello = format!("cmd=ibdyn_auth proof={proof} nonce=01 role=client index=0\ncmd=c_stop\n");
    sock.write_all(hello.as_bytes()).unwrap();
    let mut buf = Vec::new();
    let _ = sock.read_to_end(&mut buf);
    let got = text(&buf);
    assert!(
        got.starts_with("cmd=ibdyn_challenge ") && got.lines().count() == 1,
        "a wrong-secret client got more than the challenge: {got:?}"
    );
    // The DVM was not stopped by it and still runs jobs.
    dvm.assert_serves();
    dvm.stop();
}

/// Jobs that print: `dvm_check lines TAG K` on `n` ranks, or the same lines from `sh`
/// (which prints at once, without a PMI start-up first, like the issue's `echo` jobs).
struct LinesJob {
    tag: String,
    n: u32,
    k: u32,
    shell: bool,
}

/// `dvm_check lines` in shell (one line: spawn arguments cannot hold a newline).
const SH_LINES: &str = concat!(
    r#"r=$IBDYN_RANK; echo "LINES $r start"; i=0; "#,
    r#"while [ $i -lt $2 ]; do echo "$1 $r $i"; echo "$1 $r e$i" >&2; i=$((i+1)); done; "#,
    r#"echo "LINES $r done""#
);

impl LinesJob {
    fn new(tag: String, n: u32, k: u32) -> LinesJob {
        LinesJob {
            tag,
            n,
            k,
            shell: false,
        }
    }

    fn in_shell(mut self) -> LinesJob {
        self.shell = true;
        self
    }

    fn args(&self) -> Vec<String> {
        let mut a = vec!["-n".into(), self.n.to_string()];
        if self.shell {
            a.extend(["sh".into(), "-c".into(), SH_LINES.into(), "sh".into()]);
        } else {
            a.extend([
                example_bin("dvm_check").display().to_string(),
                "lines".into(),
            ]);
        }
        a.extend([self.tag.clone(), self.k.to_string()]);
        a
    }

    fn run(&self, dvm: &Dvm) -> Output {
        let args = self.args();
        dvm.run(&args.iter().map(String::as_str).collect::<Vec<_>>())
    }

    /// Exit 0, and of every rank every line on stdout and stderr, in order, nothing else
    /// of this tag.
    fn check(&self, out: &Output) {
        assert!(out.status.success(), "{}: {}", self.tag, show(out));
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        for r in 0..self.n {
            let mine = |all: &str, prefix: &str| -> Vec<String> {
                all.lines()
                    .filter(|l| l.starts_with(prefix))
                    .map(str::to_string)
                    .collect()
            };
            let want: Vec<String> = (0..self.k)
                .map(|i| format!("{} {r} {i}", self.tag))
                .collect();
            let want_err: Vec<String> = (0..self.k)
                .map(|i| format!("{} {r} e{i}", self.tag))
                .collect();
            let prefix = format!("{} {r} ", self.tag);
            assert_eq!(mine(&stdout, &prefix), want, "{}: {}", self.tag, show(out));
            assert_eq!(
                mine(&stderr, &prefix),
                want_err,
                "{}: {}",
                self.tag,
                show(out)
            );
            for edge in ["start", "done"] {
                let line = format!("LINES {r} {edge}");
                assert!(
                    stdout.lines().any(|l| l == line),
                    "{}: no {line:?}\n{}",
                    self.tag,
                    show(out)
                );
            }
        }
    }
}

/// `jobs` submitted at the same moment (one thread each); every one checked.
fn all_at_once(dvm: &Dvm, jobs: &[LinesJob]) {
    let outs: Vec<Output> = std::thread::scope(|sc| {
        let hs: Vec<_> = jobs.iter().map(|j| sc.spawn(|| j.run(dvm))).collect();
        hs.into_iter()
            .map(|h| h.join().expect("job thread"))
            .collect()
    });
    for (j, out) in jobs.iter().zip(&outs) {
        j.check(out);
    }
}

/// Eight jobs of 1 to 3 ranks at a time (half of them shell jobs that print at once),
/// `rounds` times, on two node daemons.
fn eight_at_a_time(rounds: u32, env: &[(&str, &str)]) {
    let s = Scratch::new("dvm8");
    let mut dvm = Dvm::start_with(&s, 2, env);
    for round in 0..rounds {
        let jobs: Vec<LinesJob> = (0..8)
            .map(|j| {
                let job = LinesJob::new(format!("J{round}.{j}"), 1 + j % 3, 12);
                if j % 2 == 1 {
                    job.in_shell()
                } else {
                    job
                }
            })
            .collect();
        all_at_once(&dvm, &jobs);
    }
    dvm.stop();
}

fn stress_rounds(default: u32) -> u32 {
    std::env::var("IBDYN_DVM_STRESS_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(default)
}

#[test]
fn eight_jobs_at_a_time_lose_no_line() {
    eight_at_a_time(stress_rounds(4), &[]);
}

/// The long form of the issue-19 stress: 8 jobs at a time, 50 rounds.
#[test]
#[ignore]
fn eight_jobs_at_a_time_fifty_rounds() {
    eight_at_a_time(stress_rounds(50), &[]);
}

/// Daemon 0 (which announced every job alone before) is slowed, so the other daemon's
/// output and ends of a job come first: before the fix that lost every such line.
#[test]
fn output_that_overtakes_the_root_is_not_lost() {
    eight_at_a_time(1, &[("IBDYN_TEST_SLOW_LAUNCHER_LINK", "0:20")]);
}

#[test]
fn jobs_start_while_others_end() {
    let s = Scratch::new("dvmpipe");
    let mut dvm = Dvm::start(&s, 2);
    // Four lanes of four jobs each, of different lengths: a job of one lane starts while
    // the jobs of the others are starting, printing or ending.
    std::thread::scope(|sc| {
        for lane in 0..4u32 {
            let dvm = &dvm;
            sc.spawn(move || {
                for step in 0..4u32 {
                    let job = LinesJob::new(
                        format!("P{lane}.{step}"),
                        1 + (lane + step) % 3,
                        4 + 10 * ((lane * 3 + step) % 4),
                    );
                    job.check(&job.run(dvm));
                }
            });
        }
    });
    dvm.stop();
}

/// A server job and a client job submitted at the same instant, twice with jobs that print
/// alongside, on a DVM whose daemon 0 (the name service) lags.
#[test]
fn a_server_and_a_client_started_together_meet() {
    let s = Scratch::new("dvmpair");
    let mut dvm = Dvm::start_with(&s, 2, &[("IBDYN_TEST_SLOW_LAUNCHER_LINK", "0:5")]);
    let prog = example_bin("dvm_check");
    let prog = prog.to_str().unwrap();
    for round in 0..3 {
        let name = format!("pair{round}");
        let dvm = &dvm;
        let (server, client) = std::thread::scope(|sc| {
            let server = sc.spawn(|| dvm.run(&["-n", "2", prog, "server", &name]));
            let client = sc.spawn(|| dvm.run(&["-n", "3", prog, "client", &name]));
            for j in 0..round {
                sc.spawn(move || {
                    let job = LinesJob::new(format!("S{round}.{j}"), 2, 6);
                    job.check(&job.run(dvm));
                });
            }
            (
                server.join().expect("server"),
                client.join().expect("client"),
            )
        });
        for (out, role, n) in [(&server, "SERVER", 2), (&client, "CLIENT", 3)] {
            assert!(out.status.success(), "{role}: {}", show(out));
            for r in 0..n {
                for edge in ["start", "done"] {
                    let line = format!("{role} {r} {edge}");
                    assert!(
                        text(&out.stdout).lines().any(|l| l == line),
                        "no {line:?}: {}",
                        show(out)
                    );
                }
            }
        }
    }
    dvm.stop();
}

/// The master spawns three children and leaves at once; its `ibdyn run` ends only after the
/// children's output (daemon 0, which answers the spawn, lags behind the others).
#[test]
fn a_master_that_leaves_right_after_spawning_gets_its_childrens_output() {
    let s = Scratch::new("dvmspawner");
    let mut dvm = Dvm::start_with(&s, 2, &[("IBDYN_TEST_SLOW_LAUNCHER_LINK", "0:20")]);
    let prog = example_bin("dvm_check");
    for _ in 0..2 {
        let out = dvm.run(&["-n", "2", prog.to_str().unwrap(), "spawner", "3", "4"]);
        assert!(out.status.success(), "{}", show(&out));
        for r in 0..3 {
            let want: Vec<String> = (0..4).map(|i| format!("CHILD {r} {i}")).collect();
            let got: Vec<String> = text(&out.stdout)
                .lines()
                .filter(|l| l.starts_with(&format!("CHILD {r} ")))
                .filter(|l| !l.ends_with("start") && !l.ends_with("done"))
                .map(str::to_string)
                .collect();
            assert_eq!(got, want, "{}", show(&out));
        }
    }
    dvm.stop();
}

/// Waits (bounded) until `ok` holds.
fn wait_until(what: &str, limit: Duration, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !ok() {
        assert!(Instant::now() < deadline, "{what} within {limit:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The `hold` ranks of `tag` have all started (their marks exist); the marks are removed.
fn held(s: &Scratch, tag: &str, n: u32) {
    wait_until(
        &format!("every rank of the {tag} job started"),
        Duration::from_secs(30),
        || (0..n).all(|r| s.dir.join(format!("hold-{tag}.{r}")).exists()),
    );
    for r in 0..n {
        let _ = std::fs::remove_file(s.dir.join(format!("hold-{tag}.{r}")));
    }
}

fn gone(tag: &str) {
    wait_until(
        &format!("the ranks of {tag} gone"),
        Duration::from_secs(30),
        || processes_mentioning(tag).is_empty(),
    );
}

/// Mid-way: a client is killed while its ranks run, and a rank of another job dies by a
/// signal; the other jobs get all their lines, the killed client's ranks go, the dying
/// rank's job reports it (status 137) and ends, and the DVM still serves.
#[test]
fn jobs_and_clients_killed_midway() {
    let s = Scratch::new("dvmkill");
    let mut dvm = Dvm::start(&s, 2);
    let prog = example_bin("dvm_check");
    let prog = prog.to_str().unwrap();
    let tag = format!("victim{}", std::process::id());
    let mut victim = dvm.spawn(&["-n", "3", prog, "hold", &tag]);
    held(&s, &tag, 3);
    let jobs: Vec<LinesJob> = (0..4)
        .map(|j| LinesJob::new(format!("K{j}"), 2, 20))
        .collect();
    // Rank 1 dies only once rank 0 has printed (a mark file, waited for at most 30 s): the
    // job's teardown would otherwise end a rank 0 not yet started, whose line then never was.
    let mark = s.dir.join("up0");
    let script = format!(
        "echo up $IBDYN_RANK; if [ $IBDYN_RANK = 0 ]; then touch {m}; exec sleep 30; fi; \
         i=0; while [ ! -e {m} ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); done; rm -f {m}; kill -9 $$",
        m = mark.display()
    );
    std::thread::scope(|sc| {
        let printing = sc.spawn(|| all_at_once(&dvm, &jobs));
        let dying = sc.spawn(|| dvm.run(&["-n", "2", "sh", "-c", &script]));
        victim.kill().expect("kill the client");
        let _ = victim.wait();
        gone(&tag);
        printing.join().expect("printing jobs");
        let out = dying.join().expect("dying job");
        assert_eq!(out.status.code(), Some(137), "{}", show(&out));
        assert!(
            text(&out.stderr).contains("rank 1 was killed by signal 9"),
            "{}",
            show(&out)
        );
        assert_eq!(
            lines_with(&out, "up "),
            vec!["up 0".to_string(), "up 1".to_string()],
            "{}",
            show(&out)
        );
    });
    let after = LinesJob::new("after".into(), 3, 3);
    after.check(&after.run(&dvm));
    dvm.stop();
}

/// A node daemon of the DVM dies while a job has ranks on it: the job's client is told which
/// daemon died and ends with a failure status (not a broken connection), the job's other ranks
/// go, a submission while the DVM stops is refused with a message, and the DVM cleans up.
#[test]
fn a_node_daemon_that_dies_ends_its_jobs_with_a_message() {
    let s = Scratch::new("dvmlost");
    let dvm = Dvm::start(&s, 2);
    let prog = example_bin("dvm_check");
    let prog = prog.to_str().unwrap();
    let tag = format!("lost{}", std::process::id());
    let client = dvm.spawn(&["-n", "2", "--map-by", "node", prog, "hold", &tag]);
    let lost = held_pid(&s, &tag, 1);
    held(&s, &tag, 2);
    let scratch = s.dir.to_str().unwrap();
    s.kill_node_daemon(1);
    let out = client.wait_with_output().expect("the client ends");
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let err = text(&out.stderr);
    assert!(
        err.contains("node daemon 1 died") && !err.contains("protocol error"),
        "{}",
        show(&out)
    );
    // Refused while it stops, or gone already: a message either way, no job.
    let late = dvm.run(&["-n", "1", "true"]);
    assert_ne!(late.status.code(), Some(0), "{}", show(&late));
    assert!(text(&late.stderr).contains("DVM"), "{}", show(&late));
    gone(&tag);
    wait_until("the DVM gone", Duration::from_secs(30), || {
        processes_mentioning(scratch).is_empty()
    });
    s.assert_clean();
    // The lost rank's shared memory, which its dead daemon could not remove.
    let seg = format!("/dev/shm/ibdyn-{lost}");
    assert!(!std::path::Path::new(&seg).exists(), "{seg} left");
}

/// The pid rank `rank` of a `hold` job of `tag` wrote to its mark (waiting for it).
fn held_pid(s: &Scratch, tag: &str, rank: u32) -> u32 {
    let mark = s.dir.join(format!("hold-{tag}.{rank}"));
    let mut pid = None;
    wait_until(
        &format!("rank {rank} of {tag} held"),
        Duration::from_secs(30),
        || {
            pid = std::fs::read_to_string(&mark)
                .ok()
                .and_then(|p| p.parse().ok());
            pid.is_some()
        },
    );
    pid.unwrap_or_default()
}

fn private_dir(s: &Scratch, name: &str) -> std::path::PathBuf {
    use std::os::unix::fs::DirBuilderExt;
    let dir = s.dir.join(name);
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .expect("private dir");
    dir
}

/// A client that submits and leaves while its ranks start: the daemons' announcements of
/// the job are held back, so the DVM hears of the job after the client has left; the job is
/// killed all the same.
#[test]
fn a_job_whose_client_left_before_the_job_was_announced_is_killed() {
    let s = Scratch::new("dvmleave");
    let mut dvm = Dvm::start_with(&s, 2, &[("IBDYN_TEST_SLOW_LAUNCHER_LINK", "all:300")]);
    let contact = dvm.contact();
    let field = |k: &str| {
        contact
            .split_whitespace()
            .find_map(|t| t.strip_prefix(k))
            .expect("contact field")
            .to_string()
    };
    let (port, secret) = (field("port="), field("secret="));
    let prog = example_bin("dvm_check");
    for round in 0..2 {
        let tag = format!("left{}x{round}", std::process::id());
        // The request as `ibdyn run --dvm` writes it (without its environment: the ranks get
        // the DVM's).
        let req = SpawnRequest {
            commands: vec![SpawnCommand {
                program: prog.display().to_string(),
                args: vec!["hold".into(), tag.clone()],
                nprocs: 3,
                info: vec![],
            }],
            preput: vec![],
        };
        let hex = wire::hex_encode(wire::format_spawn(&req).unwrap().as_bytes());
        let mut sock =
            std::net::TcpStream::connect(("127.0.0.1", port.parse::<u16>().unwrap())).unwrap();
        // The opening `ibdyn run --dvm` makes: the DVM's challenge, a proof under its secret.
        let mut challenge = String::new();
        std::io::BufReader::new(sock.try_clone().unwrap())
            .read_line(&mut challenge)
            .unwrap();
        let nonce = challenge.trim().rsplit("nonce=").next().unwrap();
        let proof = ibdyn_launcher::secret::hello_proof(&secret, nonce, "client", 0);
        write!(
            sock,
            "cmd=ibdyn_auth proof={proof} nonce=00 role=client index=0\ncmd=c_run req={hex}\n"
        )
        .unwrap();
        held(&s, &tag, 3);
        drop(sock);
        gone(&tag);
    }
    dvm.stop();
}

/// A program that is found but cannot be executed: status 126 (as a shell gives; 127 is for a
/// program not found) and the reason, on one and on two nodes.
#[test]
fn a_program_that_cannot_start_fails_with_126() {
    use std::os::unix::fs::PermissionsExt;
    let s = Scratch::new("dvmnoexec");
    let mut dvm = Dvm::start(&s, 2);
    let bad = s.dir.join("not-a-program");
    std::fs::write(&bad, "no interpreter line\n").unwrap();
    std::fs::set_permissions(&bad, std::fs::Permissions::from_mode(0o755)).unwrap();
    for n in ["1", "3"] {
        let out = dvm.run(&["-n", n, bad.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(126), "{}", show(&out));
        assert!(
            text(&out.stderr).contains("cannot start rank"),
            "{}",
            show(&out)
        );
    }
    std::fs::remove_file(&bad).unwrap();
    dvm.stop();
}

/// A DVM that takes the connection and never answers: `ibdyn run --dvm` gives up within
/// `IBDYN_SPAWN_TIMEOUT`.
#[test]
fn a_dvm_that_never_answers_is_a_bounded_wait() {
    let s = Scratch::new("dvmsilent");
    let dir = private_dir(&s, "silent-dvm");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::fs::write(
        dir.join("contact"),
        format!(
            "port={port} secret=0123456789abcdef pid={}\n",
            std::process::id()
        ),
    )
    .unwrap();
    let holder = std::thread::spawn(move || {
        let (mut c, _) = listener.accept().expect("the client connects");
        // Read the hello and the job, answer nothing, close when the client gives up.
        let mut first = String::new();
        let _ = std::io::BufReader::new(&mut c).read_line(&mut first);
        let mut rest = Vec::new();
        let _ = c.read_to_end(&mut rest);
    });
    let mut cmd = s.ibdyn(&["run", "--dvm", "-n", "1", "true"]);
    cmd.env("IBDYN_DVM_DIR", &dir)
        .env("IBDYN_SPAWN_TIMEOUT", "1");
    let t = Instant::now();
    let out = run_bounded(cmd, None, Duration::from_secs(30));
    assert!(!out.status.success(), "{}", show(&out));
    assert!(text(&out.stderr).contains("timed out"), "{}", show(&out));
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    holder.join().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn ranks_under_the_dvm_get_the_environment_and_directory_of_their_run() {
    let s = Scratch::new("dvmenv");
    // The DVM's own environment differs from the client's: the ranks must not see it.
    let mut dvm = Dvm::start_with(
        &s,
        2,
        &[("SPAWN_CHECK_ENV", "from-dvm"), ("DVM_ONLY", "dvm")],
    );
    let work = s.dir.join("work dir");
    std::fs::create_dir_all(&work).expect("create the client's directory");
    let client = |args: &[&str]| {
        let mut a = vec!["run", "--dvm"];
        a.extend_from_slice(args);
        let mut c = s.ibdyn(&a);
        c.current_dir(&work)
            .env("SPAWN_CHECK_ENV", "from-client")
            .env("IBDYN_LOG", "warn")
            .env_remove("DVM_ONLY");
        run_bounded(c, None, Duration::from_secs(60))
    };
    let script = "echo ENV $SPAWN_CHECK_ENV ${DVM_ONLY:-unset} $IBDYN_LOG \"$(pwd)\"";
    let out = client(&["-n", "3", "sh", "-c", script]);
    assert!(out.status.success(), "{}", show(&out));
    let want = format!("ENV from-client unset warn {}", work.display());
    let got = lines_with(&out, "ENV ");
    assert_eq!(got.len(), 3, "{}", show(&out));
    assert!(
        got.iter().all(|l| *l == want),
        "want {want:?}\n{}",
        show(&out)
    );
    // Jobs the ranks spawn inherit them too, as under a plain `ibdyn run`.
    let prog = example_bin("spawn_check");
    let out = client(&["-n", "1", prog.to_str().unwrap(), "parent", "2"]);
    assert_all_ok(&out, 1);
    let children = lines_with(&out, "CHILD ");
    assert_eq!(children.len(), 2, "{}", show(&out));
    let cwd = format!("cwd={}", work.display());
    assert!(
        children
            .iter()
            .all(|l| l.contains("env=from-client") && l.ends_with(&cwd)),
        "{}",
        show(&out)
    );
    std::fs::remove_dir(&work).expect("remove the client's directory");
    dvm.stop();
}

#[test]
fn dvm_jobs_get_stdin_on_rank_0() {
    let s = Scratch::new("dvm-stdin");
    let dvm = Dvm::start(&s, 2);
    // 200 KB in many lines and one without a newline: rank 0's `cat` echoes it all, the
    // others read an empty stdin.
    let mut input = Vec::new();
    for i in 0..20_000 {
        input.extend_from_slice(format!("line {i:05}\n").as_bytes());
    }
    input.extend_from_slice(b"no newline at the end");
    for map_by in ["slot", "node"] {
        let cmd = s.ibdyn(&["run", "--dvm", "-n", "3", "--map-by", map_by, "cat"]);
        let out = run_bounded(cmd, Some(&input), Duration::from_secs(60));
        assert!(out.status.success(), "{}", show(&out));
        assert!(
            out.stdout == input,
            "stdout differs from stdin ({} bytes of {})",
            out.stdout.len(),
            input.len()
        );
    }
    drop(dvm);
}

#[test]
fn dvm_jobs_honour_map_by() {
    let s = Scratch::new("dvm-mapby");
    let dvm = Dvm::start(&s, 2);
    let script = "echo \"R $IBDYN_RANK N $IBDYN_NODE\"";
    for (map_by, want) in [("slot", [0, 0, 1, 1]), ("node", [0, 1, 0, 1])] {
        let out = dvm.run(&["-n", "4", "--map-by", map_by, "sh", "-c", script]);
        assert!(out.status.success(), "{}", show(&out));
        let got = lines_with(&out, "R ");
        let want: Vec<String> = want
            .iter()
            .enumerate()
            .map(|(r, n)| format!("R {r} N {n}"))
            .collect();
        assert_eq!(got, want, "--map-by {map_by}: {}", show(&out));
    }
}

/// Ctrl-C on `ibdyn run --dvm` ends the job, also when the client started with SIGINT
/// ignored (a script's background job): the client takes it with sigwait and leaves, and the
/// DVM tears down the job of a client that left.
#[test]
fn sigint_on_a_dvm_client_started_with_it_ignored_ends_the_job() {
    let s = Scratch::new("dvm-sigint");
    let mut dvm = Dvm::start(&s, 2);
    let mut cmd = s.ibdyn(&[
        "run",
        "--dvm",
        "-n",
        "2",
        "sh",
        "-c",
        "echo ready; exec sleep 60",
    ]);
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    use std::os::unix::process::CommandExt;
    // SAFETY: only signal(2), which is async-signal-safe, runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_IGN);
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
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
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(status.code(), Some(128 + 2), "stderr: {err}");
    assert!(err.contains("SIGINT received"), "stderr: {err}");
    // The DVM still serves jobs afterwards.
    dvm.assert_serves();
    dvm.stop();
    s.assert_clean();
}

/// A job under the DVM that fails after spawning takes its spawned jobs down with it, as
/// under `ibdyn run` (they used to sleep on, holding the client until they ended), and a
/// DVM's stop tells each client why and sums up the spawned ranks it killed in one line.
#[test]
fn a_failing_job_takes_its_spawned_jobs_down_and_the_stop_sums_them_up() {
    let s = Scratch::new("dvm-teardown");
    let mut dvm = Dvm::start(&s, 2);
    let prog = example_bin("spawn_check");
    let prog = prog.to_str().unwrap();
    // Its children sleep 120 s unless killed: the bound is the check.
    let out = dvm.run_for(
        &["-n", "1", prog, "fail-after-spawns", "3"],
        Duration::from_secs(40),
    );
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    let err = text(&out.stderr);
    assert!(
        err.contains("rank 0 exited with code 3; tearing the job down"),
        "{}",
        show(&out)
    );
    assert!(!err.contains("killed by signal"), "{}", show(&out));

    // Children that outlive the stop's SIGTERM end after their master, by the SIGKILL that
    // follows: the master's end must not have them cancelled (left out of the sum).
    let mut client = dvm.spawn(&["-n", "1", prog, "hang-stubborn", "4"]);
    let mut lines = std::io::BufReader::new(client.stdout.take().unwrap()).lines();
    let (mut spawned, mut stubborn) = (false, 0);
    while !spawned || stubborn < 4 {
        let line = lines
            .next()
            .expect("the master's and children's lines")
            .unwrap();
        spawned |= line == "SPAWNED";
        stubborn += usize::from(line.starts_with("STUBBORN "));
    }
    dvm.stop();
    let status = wait_bounded(&mut client, Duration::from_secs(30));
    let mut err = String::new();
    client
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(status.code(), Some(128 + 15), "stderr: {err}");
    assert!(
        err.contains("the DVM is stopping (`ibdyn dvm stop`): ending the job"),
        "stderr: {err}"
    );
    assert!(
        err.contains("ibdyn run: 4 rank(s) of spawned jobs ended abnormally during the teardown"),
        "stderr: {err}"
    );
    assert_eq!(err.matches("was killed").count(), 1, "stderr: {err}");
}

/// `ibdyn run --dvm ... | head`: the client leaves with status 141 once its stdout's reader
/// has gone, and the DVM ends the job of a client that left (and still serves).
#[test]
fn a_dvm_job_whose_output_reader_leaves_ends() {
    let s = Scratch::new("dvm-epipe");
    let mut dvm = Dvm::start(&s, 2);
    let tag = format!("epipe{}", std::process::id());
    let mut client = dvm.spawn(&["-n", "2", "yes", &tag]);
    assert_eq!(read_then_close_stdout(&mut client, 2), [tag.as_str(), &tag]);
    let status = wait_bounded(&mut client, Duration::from_secs(30));
    assert_eq!(status.code(), Some(141));
    gone(&tag);
    dvm.assert_serves();
    dvm.stop();
}

/// MPMD under a DVM: the applications form one job, as under `ibdyn run`.
#[test]
fn several_applications_run_as_one_dvm_job() {
    let s = Scratch::new("dvm-mpmd");
    let mut dvm = Dvm::start(&s, 2);
    let ring = example_bin("ring");
    let ring = ring.to_str().unwrap();
    let out = dvm.run(&["-n", "1", ring, ":", "-n", "3", ring]);
    assert!(out.status.success(), "{}", show(&out));
    assert!(
        text(&out.stdout).contains("sum of ranks 6"),
        "{}",
        show(&out)
    );
    let say = "echo app $IBDYN_APPNUM rank $IBDYN_RANK";
    let out = dvm.run(&["-n", "2", "sh", "-c", say, ":", "sh", "-c", say]);
    assert!(out.status.success(), "{}", show(&out));
    let mut lines: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
    lines.sort();
    assert_eq!(lines, ["app 0 rank 0", "app 0 rank 1", "app 1 rank 2"]);
    dvm.stop();
}

/// `--output-filename DIR` under a DVM: the client writes the files, in the same layout.
#[test]
fn a_dvm_jobs_output_goes_to_files() {
    let s = Scratch::new("dvm-outfiles");
    let mut dvm = Dvm::start(&s, 2);
    let dir = std::env::temp_dir().join(format!("ibdyn-dvm-outfiles-{}", std::process::id()));
    let prog = example_bin("spawn_check");
    let out = dvm.run(&[
        "-n",
        "1",
        "--output-filename",
        dir.to_str().unwrap(),
        prog.to_str().unwrap(),
        "parent",
        "2",
    ]);
    check_output_files(&dir, &out);
    let _ = std::fs::remove_dir_all(&dir);
    dvm.stop();
}

/// `ibdyn run --dvm --timeout SECS`: the client ends with 124 once the limit is reached, and
/// the DVM ends its job; the DVM serves on.
#[test]
fn a_dvm_job_past_its_time_limit_ends_with_124() {
    let s = Scratch::new("dvm-timeout");
    let mut dvm = Dvm::start(&s, 2);
    let tag = format!("timeout{}", std::process::id());
    let script = format!(": {tag}; sleep 120; true");
    let out = dvm.run(&["-n", "2", "--timeout", "2", "sh", "-c", &script]);
    assert_eq!(out.status.code(), Some(124), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("time limit of 2 s (--timeout or MPIEXEC_TIMEOUT) was reached"),
        "{}",
        show(&out)
    );
    gone(&tag);
    dvm.assert_serves();
    dvm.stop();
}

/// SIGUSR1/SIGUSR2 to `ibdyn run --dvm` go on to the ranks of its job, and to no other job
/// of the DVM.
#[test]
fn user_signals_to_a_dvm_client_reach_its_ranks_only() {
    let s = Scratch::new("dvm-usr");
    let mut dvm = Dvm::start(&s, 2);
    let prog = example_bin("dvm_check");
    let tag = format!("bystander{}", std::process::id());
    let mut bystander = dvm.spawn(&[
        "-n",
        "2",
        "--map-by",
        "node",
        prog.to_str().unwrap(),
        "hold",
        &tag,
    ]);
    let pid = held_pid(&s, &tag, 1);
    held(&s, &tag, 2);
    let script = awaits_signal("USR2");
    let mut client = dvm.spawn(&["-n", "2", "--map-by", "node", "sh", "-c", &script]);
    let (got, status) = signal_when_ready(&mut client, 2, "USR2");
    assert_eq!(got, ["got-USR2 0", "got-USR2 1"]);
    assert_eq!(status.code(), Some(0), "{status:?}");
    // Sent at the same moment as to the job's own ranks, it would have ended this one
    // (SIGUSR2's default) before they could answer.
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat.rsplit(')').next().unwrap_or("").trim_start();
    assert!(
        !state.is_empty() && !state.starts_with(['Z', 'X']),
        "the other job's rank got the signal: {stat:?}"
    );
    bystander.kill().unwrap();
    let _ = bystander.wait();
    gone(&tag);
    dvm.stop();
}

/// Ctrl-Z on `ibdyn run --dvm` stops its job's ranks and the client; SIGCONT continues them.
#[test]
fn ctrl_z_on_a_dvm_client_stops_its_ranks() {
    let s = Scratch::new("dvm-tstp");
    let mut dvm = Dvm::start(&s, 2);
    let mut client = dvm.spawn(&["-n", "2", "--map-by", "node", "sh", "-c", READY_WITH_PID]);
    job_control_check(&mut client, 2);
    dvm.stop();
}

/// Bound jobs of one DVM take the units other jobs' ranks do not hold: a second job started
/// while the first runs is bound to the next hardware thread, not the first one again (with
/// one CPU, the first again). Before, every job was bound from the first unit on.
#[test]
fn bound_jobs_of_one_dvm_take_the_free_units() {
    let s = Scratch::new("dvm-bind");
    let dvm = Dvm::start(&s, 1);
    let mine = cpu_list(&my_cpus_text());
    let release = s.dir.join("release");
    let cpus = "grep Cpus_allowed_list /proc/self/status | cut -f2";
    let hold = format!(
        "{cpus}; while [ ! -e {} ]; do sleep 0.05; done",
        release.display()
    );
    let mut first = dvm.spawn(&["--bind-to", "hwthread", "sh", "-c", &hold]);
    let mut lines = std::io::BufReader::new(first.stdout.take().unwrap()).lines();
    let held = lines.next().unwrap().unwrap();
    assert_eq!(held, mine[0].to_string());
    let out = dvm.run(&["--bind-to", "hwthread", "sh", "-c", cpus]);
    assert!(out.status.success(), "{}", show(&out));
    let want = mine.get(1).unwrap_or(&mine[0]).to_string();
    assert_eq!(text(&out.stdout).trim(), want);
    std::fs::write(&release, "").unwrap();
    let st = wait_bounded(&mut first, Duration::from_secs(60));
    assert!(st.success());
    std::fs::remove_file(&release).unwrap();
    drop(dvm);
    s.assert_clean();
}
