//! Test program for PMI-level spawn: `spawn_check MODE [ARGS]`. Parents print `OK <rank>` when
//! every check passed, `FAIL ...` and exit 1 otherwise; children print `CHILD ...` lines.

use ibdyn::pmi::{kvsname_of, PmiClient, PmiError, SpawnCommand, SpawnReply, SpawnRequest};
use std::time::{Duration, Instant};

type Res<T> = Result<T, String>;

fn e<E: std::fmt::Display>(what: &str) -> impl Fn(E) -> String + '_ {
    move |err| format!("{what}: {err}")
}

fn me() -> String {
    std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "spawn_check".into())
}

fn cmd(args: &[&str], n: u32, info: &[(&str, &str)]) -> SpawnCommand {
    SpawnCommand {
        program: me(),
        args: args.iter().map(|s| s.to_string()).collect(),
        nprocs: n,
        info: info
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

const WAIT: Duration = Duration::from_secs(30);

/// Polls job_status until every rank of `job` has ended (bounded).
fn wait_job(c: &mut PmiClient, job: u32) -> Res<ibdyn::pmi::JobStatus> {
    let deadline = Instant::now() + WAIT;
    let mut pause = Duration::from_micros(200);
    loop {
        let st = c.job_status(job).map_err(e("job_status"))?;
        if st.all_exited() {
            return Ok(st);
        }
        if Instant::now() >= deadline {
            return Err(format!("job {job} did not end: {st:?}"));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

/// Reads what each child put, from the child job's key-value space.
fn hear_children(c: &mut PmiClient, reply: &SpawnReply) -> Res<()> {
    for r in 0..reply.size {
        let v = c
            .get_wait_from(&reply.kvsname, &format!("hello-{r}"), WAIT)
            .map_err(e("get_wait_from child"))?;
        println!("HEARD {r} {v}");
    }
    Ok(())
}

fn child(c: &mut PmiClient, what: &str) -> Res<()> {
    if !c.spawned() {
        return Err("spawned() is false in a child".into());
    }
    let parent = c.parent_job_id().ok_or("no parent job id")?;
    let pre = c.get("preput-key").map_err(e("get preput"))?;
    let info = std::env::var("IBDYN_INFO_WIREUP").unwrap_or_else(|_| "-".into());
    let extra = std::env::var("SPAWN_CHECK_ENV").unwrap_or_else(|_| "-".into());
    let cwd = std::env::current_dir()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    println!(
        "CHILD rank={} size={} appnum={} node={} preput={pre} wireup={info} env={extra} cwd={cwd}",
        c.rank(),
        c.size(),
        c.appnum(),
        c.node_id()
    );
    c.put(
        &format!("pid-{}", c.rank()),
        &std::process::id().to_string(),
    )
    .map_err(e("put pid"))?;
    c.put(
        &format!("hello-{}", c.rank()),
        &format!("node{}", c.node_id()),
    )
    .map_err(e("put hello"))?;
    // Cross-job read: the parent's key-value space.
    let pv = c
        .get_wait_from(&kvsname_of(parent), "parent-says", WAIT)
        .map_err(e("get_wait_from parent"))?;
    if pv != "hi" {
        return Err(format!("parent said {pv:?}"));
    }
    if what == "stubborn" {
        // Outlives a SIGTERM: ended only by the SIGKILL that follows it.
        // SAFETY: setting a signal's disposition to ignore has no preconditions.
        unsafe { libc::signal(libc::SIGTERM, libc::SIG_IGN) };
        println!("STUBBORN {}", c.rank());
        std::io::Write::flush(&mut std::io::stdout()).map_err(e("flush"))?;
        std::thread::sleep(Duration::from_secs(120));
        return Err("slept 120 s without being killed".into());
    }
    if what == "sleep" {
        // Ended only by a kill (a teardown), not by its parents' end.
        std::thread::sleep(Duration::from_secs(120));
        return Err("slept 120 s without being killed".into());
    }
    if what == "wait-release" {
        // A sibling may be killed meanwhile: no collective here.
        c.get_wait_from(&kvsname_of(parent), "release", WAIT)
            .map_err(e("wait for release"))?;
    } else {
        c.fence().map_err(e("child fence"))?;
    }
    c.finalize().map_err(e("finalize"))?;
    Ok(())
}

fn spawn_and_hear(c: &mut PmiClient, req: &SpawnRequest) -> Res<SpawnReply> {
    let reply = c.spawn(req).map_err(e("spawn"))?;
    let nodes: Vec<String> = reply
        .children
        .iter()
        .map(|ch| ch.node.to_string())
        .collect();
    println!(
        "SPAWNED job={} size={} nodes={}",
        reply.job_id,
        reply.size,
        nodes.join(",")
    );
    hear_children(c, &reply)?;
    Ok(reply)
}

/// The floor: fork+exec+exit of N copies of this program (no PMI), mean over REPS.
fn floor(args: &[String]) -> Res<()> {
    let n: u32 = args.first().and_then(|a| a.parse().ok()).unwrap_or(1);
    let reps: u32 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(20);
    let mut times = Vec::new();
    for _ in 0..reps + 2 {
        let t = Instant::now();
        let kids: Vec<std::process::Child> = (0..n)
            .map(|_| std::process::Command::new(me()).arg("nothing").spawn())
            .collect::<Result<_, _>>()
            .map_err(e("fork+exec"))?;
        for mut k in kids {
            k.wait().map_err(e("wait"))?;
        }
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let times = &times[2..];
    let mean = times.iter().sum::<f64>() / times.len() as f64;
    let min = times.iter().cloned().fold(f64::MAX, f64::min);
    println!("FLOOR n={n} reps={reps} mean_ms={mean:.3} min_ms={min:.3}");
    Ok(())
}

fn run(mode: &str, args: &[String]) -> Res<()> {
    match mode {
        "nothing" => return Ok(()),
        "floor" => return floor(args),
        _ => {}
    }
    let mut c = PmiClient::init().map_err(e("init"))?;
    if mode == "child" {
        return child(&mut c, args.first().map_or("", String::as_str));
    }
    if mode == "trivial" {
        return c.finalize().map_err(e("finalize"));
    }
    if mode == "server" || mode == "client" {
        return name_service(&mut c, mode == "server");
    }
    let r = c.rank();
    let n: u32 = args.first().and_then(|a| a.parse().ok()).unwrap_or(2);
    let preput = vec![("preput-key".to_string(), format!("from-{}", c.job_id()))];
    c.put("parent-says", "hi").map_err(e("put"))?;
    match mode {
        // spawn N children; info as extra `key=value` arguments.
        "parent" => {
            let info: Vec<(String, String)> = args[1.min(args.len())..]
                .iter()
                .filter_map(|a| a.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let info: Vec<(&str, &str)> =
                info.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            let req = SpawnRequest {
                commands: vec![cmd(&["child"], n, &info)],
                preput,
            };
            let reply = spawn_and_hear(&mut c, &req)?;
            let st = wait_job(&mut c, reply.job_id)?;
            if let Some(bad) = st.first_abnormal() {
                return Err(format!("child rank {} {}", bad.rank, bad.how()));
            }
        }
        // Reads the children's keys only after every child has exited (the race of a parent
        // that reads late, forced).
        "late" => {
            let req = SpawnRequest {
                commands: vec![cmd(&["child"], n, &[])],
                preput,
            };
            let reply = c.spawn(&req).map_err(e("spawn"))?;
            let st = wait_job(&mut c, reply.job_id)?;
            if let Some(bad) = st.first_abnormal() {
                return Err(format!("child rank {} {}", bad.rank, bad.how()));
            }
            hear_children(&mut c, &reply)?;
            let never = c.get_wait_from(&reply.kvsname, "never-put", WAIT);
            println!("NEVER {}", never.is_err());
        }
        "multi" => {
            let req = SpawnRequest {
                commands: vec![cmd(&["child"], 2, &[]), cmd(&["child"], 1, &[])],
                preput,
            };
            let reply = spawn_and_hear(&mut c, &req)?;
            wait_job(&mut c, reply.job_id)?;
        }
        "missing" => {
            let bad = SpawnCommand {
                program: "/nonexistent/ibdyn-no-such-program".into(),
                args: vec![],
                nprocs: 2,
                info: vec![],
            };
            for req in [
                SpawnRequest {
                    commands: vec![bad.clone()],
                    preput: preput.clone(),
                },
                SpawnRequest {
                    commands: vec![cmd(&["child", "wait-release"], 1, &[]), bad],
                    preput: preput.clone(),
                },
            ] {
                match c.spawn(&req) {
                    Err(PmiError::SpawnFailed(reply)) => {
                        for ch in &reply.children {
                            println!(
                                "CHILDSTART rank={} errno={} msg={}",
                                ch.rank, ch.errno, ch.message
                            );
                        }
                        let st = wait_job(&mut c, reply.job_id)?;
                        println!("FAILEDJOB exited={}", st.exited.len());
                    }
                    other => return Err(format!("spawn of a missing program gave {other:?}")),
                }
            }
            c.put("after", "still-works").map_err(e("put after"))?;
            c.fence().map_err(e("fence after"))?;
            let v = c.get("after").map_err(e("get after"))?;
            if v != "still-works" {
                return Err(format!("get after gave {v:?}"));
            }
        }
        // Spawn children that wait, say so, and hang (until killed: the test kills us).
        // spawn two jobs of N sleeping children, then fail: the run tears everything down.
        "fail-after-spawns" => {
            for _ in 0..2 {
                let req = SpawnRequest {
                    commands: vec![cmd(&["child", "sleep"], n, &[])],
                    preput: preput.clone(),
                };
                spawn_and_hear(&mut c, &req)?;
            }
            println!("SPAWNED");
            std::io::Write::flush(&mut std::io::stdout()).map_err(e("flush"))?;
            std::process::exit(3);
        }
        // `hang-stubborn`: children that outlive a SIGTERM, for the order of ends in a stop.
        "hang" | "hang-stubborn" => {
            let child = if mode == "hang" {
                "wait-release"
            } else {
                "stubborn"
            };
            let req = SpawnRequest {
                commands: vec![cmd(&["child", child], n, &[])],
                preput,
            };
            spawn_and_hear(&mut c, &req)?;
            println!("SPAWNED");
            std::io::Write::flush(&mut std::io::stdout()).map_err(e("flush"))?;
            std::thread::sleep(Duration::from_secs(120));
        }
        "kill" => {
            let req = SpawnRequest {
                commands: vec![cmd(&["child", "wait-release"], 2, &[])],
                preput,
            };
            let reply = spawn_and_hear(&mut c, &req)?;
            let pid: i32 = c
                .get_wait_from(&reply.kvsname, "pid-1", WAIT)
                .map_err(e("pid"))?
                .parse()
                .map_err(e("pid"))?;
            let killed = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status()
                .map_err(e("kill"))?;
            if !killed.success() {
                return Err(format!("kill {pid} failed"));
            }
            let deadline = Instant::now() + WAIT;
            loop {
                let st = c.job_status(reply.job_id).map_err(e("job_status"))?;
                if let Some(x) = st.exited.iter().find(|x| x.rank == 1) {
                    println!("STATUS rank 1 {}", x.how());
                    break;
                }
                if Instant::now() >= deadline {
                    return Err("rank 1 not reported".into());
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            c.put("release", "1").map_err(e("put release"))?;
            wait_job(&mut c, reply.job_id)?;
        }
        // N cycles of a trivial child; reports the daemon's fds/threads/children growth.
        "cycles" => {
            let req = SpawnRequest {
                commands: vec![cmd(&["trivial"], 1, &[])],
                preput,
            };
            let daemon = std::os::unix::process::parent_id() as i32;
            let mut before = None;
            for i in 0..n {
                if i == 20 {
                    before = Some(census(daemon));
                }
                let reply = c.spawn(&req).map_err(e(&format!("spawn #{i}")))?;
                wait_job(&mut c, reply.job_id)?;
            }
            // The daemon's helper threads of the last child may still be finishing.
            std::thread::sleep(Duration::from_millis(200));
            let after = census(daemon);
            println!("CENSUS before={:?} after={:?}", before, after);
        }
        // Times the spawn call of N trivial children, REPS times.
        "time" => {
            let reps: u32 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(20);
            let mut command = cmd(&["trivial"], n, &[]);
            // An optional third argument: another program to time (e.g. /bin/true).
            if let Some(p) = args.get(2) {
                command.program = p.clone();
                command.args.clear();
            }
            let req = SpawnRequest {
                commands: vec![command],
                preput,
            };
            let mut times = Vec::new();
            for _ in 0..reps + 2 {
                let t = Instant::now();
                let reply = c.spawn(&req).map_err(e("spawn"))?;
                times.push(t.elapsed().as_secs_f64() * 1e3);
                wait_job(&mut c, reply.job_id)?;
            }
            let times = &times[2..];
            let mean = times.iter().sum::<f64>() / times.len() as f64;
            let min = times.iter().cloned().fold(f64::MAX, f64::min);
            let max = times.iter().cloned().fold(0.0, f64::max);
            println!("TIME n={n} reps={reps} mean_ms={mean:.3} min_ms={min:.3} max_ms={max:.3}");
        }
        other => return Err(format!("unknown mode {other:?}")),
    }
    c.finalize().map_err(e("finalize"))?;
    println!("OK {r}");
    Ok(())
}

/// Two independently started jobs meet through the name service: the server publishes,
/// the client looks it up and publishes its answer.
fn name_service(c: &mut PmiClient, server: bool) -> Res<()> {
    let lookup = |c: &mut PmiClient, name: &str| -> Res<String> {
        let deadline = Instant::now() + WAIT;
        loop {
            match c.lookup_name(name) {
                Ok(v) => return Ok(v),
                Err(PmiError::ServiceNotFound(_)) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                Err(err) => return Err(format!("lookup {name}: {err}")),
            }
        }
    };
    let me = format!("job{}", c.job_id());
    if server {
        c.publish_name("spawn-check-svc", &me)
            .map_err(e("publish"))?;
        let peer = lookup(c, "spawn-check-reply")?;
        println!("SERVER {me} met {peer}");
        c.unpublish_name("spawn-check-svc")
            .map_err(e("unpublish"))?;
    } else {
        let peer = lookup(c, "spawn-check-svc")?;
        c.publish_name("spawn-check-reply", &me)
            .map_err(e("publish"))?;
        println!("CLIENT {me} met {peer}");
        // Leave the reply until the server has seen it (its unpublish of its own name).
        let deadline = Instant::now() + WAIT;
        while c.lookup_name("spawn-check-svc").is_ok() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        c.unpublish_name("spawn-check-reply")
            .map_err(e("unpublish"))?;
    }
    c.finalize().map_err(e("finalize"))?;
    println!("OK {}", c.rank());
    Ok(())
}

/// (open fds, threads, child processes) of `pid`.
fn census(pid: i32) -> (usize, usize, usize) {
    let count = |p: String| std::fs::read_dir(p).map(|d| d.count()).unwrap_or(0);
    let fds = count(format!("/proc/{pid}/fd"));
    let threads = count(format!("/proc/{pid}/task"));
    let kids = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter(|stat| {
            stat.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<i32>().ok())
                == Some(pid)
        })
        .count();
    (fds, threads, kids)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args.first().cloned().unwrap_or_else(|| "parent".into());
    if let Err(err) = run(&mode, &args[1.min(args.len())..]) {
        let rank = std::env::var("IBDYN_RANK").unwrap_or_default();
        println!("FAIL {mode} rank {rank}: {err}");
        std::process::exit(1);
    }
}
