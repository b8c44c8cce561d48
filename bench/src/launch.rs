//! `ibdyn-bench launch`: wall time of `ibdyn run -n N` of a program that only initialises
//! and finalises PMI, against the floor of fork+exec of that program N times without PMI.
//! `launch --hosts 1,2,4,8`: the same across K emulated hosts (network namespaces with an
//! sshd each; needs root and openssh-server), ibdyn's ssh launcher against MPICH's
//! `mpiexec.hydra` with its ssh launcher on the same hosts through the same ssh, with the
//! floor of K ssh sessions running `true` at once; and (K >= 2) the spawn latency of P
//! children onto host K from a one-rank job on host 1.

use crate::floors_proc;
use crate::report::Report;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(clap::Args)]
pub struct Args {
    /// Process counts.
    #[arg(long, value_delimiter = ',', default_values_t = [2u32, 4, 8, 16, 32, 64])]
    n: Vec<u32>,
    /// Daemon counts.
    #[arg(long, value_delimiter = ',', default_values_t = [1u32, 4])]
    nodes: Vec<u32>,
    /// Launches per point (the median is reported).
    #[arg(long, default_value_t = 5)]
    reps: u32,
    /// The `ibdyn` binary (default: next to this one).
    #[arg(long)]
    ibdyn: Option<PathBuf>,
    /// Emulated host counts (e.g. `1,2,4,8`): launch across that many namespace hosts
    /// through ssh instead of on this machine's node daemons.
    #[arg(long, value_delimiter = ',')]
    hosts: Option<Vec<u32>>,
    /// With --hosts: ranks per host.
    #[arg(long, default_value_t = 1)]
    ppn: u32,
    /// With --hosts: MPICH's `mpiexec.hydra` (default: on PATH; rows left out without it).
    #[arg(long)]
    hydra: Option<PathBuf>,
    /// Internal: spawn-latency parent (spawns onto this host).
    #[arg(long, hide = true)]
    spawn_parent: Option<String>,
    /// Internal: a spawned child that leaves at once.
    #[arg(long, hide = true)]
    spawn_child: bool,
    /// Internal: initialise and finalise PMI, nothing else.
    #[arg(long, hide = true)]
    worker: bool,
}

fn launch_once(ibdyn: &Path, me: &Path, n: u32, nodes: u32) -> Result<Duration, String> {
    let t = Instant::now();
    let st = Command::new(ibdyn)
        .args(["run", "-n", &n.to_string(), "--nodes", &nodes.to_string()])
        .arg(me)
        .args(["launch", "--worker"])
        .stdin(Stdio::null())
        .status()
        .map_err(|e| format!("{}: {e}", ibdyn.display()))?;
    if !st.success() {
        return Err(format!("ibdyn run -n {n} --nodes {nodes} failed: {st}"));
    }
    Ok(t.elapsed())
}

pub fn run(args: Args, json: bool) -> Result<(), String> {
    if args.spawn_child {
        return crate::hosts_spawn::child();
    }
    if let Some(host) = &args.spawn_parent {
        return crate::hosts_spawn::parent(host, args.ppn, args.reps);
    }
    if args.worker {
        let mut c = ibdyn::pmi::PmiClient::init().map_err(|e| e.to_string())?;
        return c.finalize().map_err(|e| e.to_string());
    }
    let ibdyn = crate::pmi::ibdyn_path(&args.ibdyn)?;
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    if let Some(counts) = &args.hosts {
        return run_hosts(&args, counts, &ibdyn, &me, json);
    }
    let mut report = Report::new("launch", json);
    for &n in &args.n {
        let p = |op: &str, k: &str| {
            vec![
                ("op", op.to_string()),
                ("n", n.to_string()),
                ("nodes", k.to_string()),
            ]
        };
        let floor =
            floors_proc::fork_exec_floor(Path::new(floors_proc::TRIVIAL), &[], n, args.reps)
                .map_err(|e| format!("fork+exec floor: {e}"))?;
        report.floor(
            &p("fork+exec N x /bin/true", "-"),
            "median",
            "ms",
            floor.as_secs_f64() * 1e3,
        );
        // The same worker binary without a launcher: it runs as a PMI singleton.
        let bare = floors_proc::fork_exec_floor(&me, &["launch", "--worker"], n, args.reps)
            .map_err(|e| format!("fork+exec of the worker: {e}"))?;
        report.floor(
            &p("fork+exec N x worker (singleton)", "-"),
            "median",
            "ms",
            bare.as_secs_f64() * 1e3,
        );
        for &k in &args.nodes {
            let mut v = (0..args.reps.max(1))
                .map(|_| launch_once(&ibdyn, &me, n, k))
                .collect::<Result<Vec<_>, _>>()?;
            v.sort();
            report.add(
                &p("ibdyn run (init+finalize)", &k.to_string()),
                "median",
                "ms",
                v[v.len() / 2].as_secs_f64() * 1e3,
            );
        }
    }
    report.finish();
    Ok(())
}

fn timed(mut cmd: Command, what: &str) -> Result<Duration, String> {
    let t = Instant::now();
    let out = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("{what}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{what} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(t.elapsed())
}

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1e3
}

fn hydra_path(given: &Option<PathBuf>) -> Option<PathBuf> {
    if let Some(p) = given {
        return Some(p.clone());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("mpiexec.hydra"))
        .find(|p| p.exists())
}

/// `launch --hosts K,...`: ibdyn and hydra through ssh across K namespace hosts.
fn run_hosts(
    args: &Args,
    counts: &[u32],
    ibdyn: &Path,
    me: &Path,
    json: bool,
) -> Result<(), String> {
    let most = counts.iter().copied().max().unwrap_or(1).max(1) as usize;
    let lab = crate::netlab::NetLab::new(most)?;
    let hydra = hydra_path(&args.hydra);
    if hydra.is_none() {
        eprintln!("ibdyn-bench: no mpiexec.hydra (apt install mpich): its rows are left out");
    }
    let ssh = lab.ssh();
    let mut report = Report::new("launch-hosts", json);
    let reps = args.reps.max(1);
    for &k in counts {
        let k = k.max(1) as usize;
        let n = (k as u32 * args.ppn).to_string();
        let hosts = lab.hosts(k, args.ppn);
        let p = |op: &str| {
            vec![
                ("op", op.to_string()),
                ("hosts", k.to_string()),
                ("n", n.clone()),
            ]
        };
        // Floor: K ssh sessions running `true`, all at once, from the login namespace.
        let mut floor = Vec::new();
        for _ in 0..reps {
            let mut c = lab.in_ns(0, "sh");
            let script: String = lab.ips[1..=k]
                .iter()
                .map(|ip| format!("{} {ip} true & ", ssh.display()))
                .collect::<String>()
                + "wait";
            c.args(["-c", &script]);
            floor.push(timed(c, "ssh to every host")?);
        }
        report.floor(&p("K x ssh true (parallel)"), "median", "ms", median(floor));
        let mut v = Vec::new();
        for _ in 0..reps {
            let mut c = lab.in_ns(0, &ibdyn.display().to_string());
            c.args([
                "run",
                "-n",
                &n,
                "--hosts",
                &hosts,
                "--iface",
                crate::netlab::IFACE,
            ])
            .arg(me)
            .args(["launch", "--worker"])
            .env("IBDYN_SSH", &ssh);
            v.push(timed(c, "ibdyn run --hosts")?);
        }
        report.add(&p("ibdyn run --hosts (ssh)"), "median", "ms", median(v));
        if let Some(h) = &hydra {
            let mut v = Vec::new();
            for _ in 0..reps {
                let mut c = lab.in_ns(0, &h.display().to_string());
                c.args(["-launcher", "ssh", "-launcher-exec"])
                    .arg(&ssh)
                    .args(["-iface", crate::netlab::IFACE, "-hosts", &hosts, "-n", &n])
                    .arg(me)
                    .args(["launch", "--worker"]);
                v.push(timed(c, "mpiexec.hydra")?);
            }
            report.peer(
                "mpich",
                &p("mpiexec.hydra (ssh)"),
                "median",
                "ms",
                median(v),
            );
        }
        if k >= 2 {
            let two = format!("{},{}", lab.ips[1], lab.ips[k]);
            let mut c = lab.in_ns(0, &ibdyn.display().to_string());
            c.args([
                "run",
                "-n",
                "1",
                "--hosts",
                &two,
                "--iface",
                crate::netlab::IFACE,
            ])
            .arg(me)
            .args(["launch", "--spawn-parent", &lab.ips[k]])
            .args(["--ppn", &args.ppn.to_string(), "--reps", &reps.to_string()])
            .env("IBDYN_SSH", &ssh);
            let out = c
                .stdin(Stdio::null())
                .output()
                .map_err(|e| format!("spawn-latency job: {e}"))?;
            let ms = crate::hosts_spawn::parse(&String::from_utf8_lossy(&out.stdout)).ok_or_else(
                || {
                    format!(
                        "spawn-latency job failed ({}): {}",
                        out.status,
                        String::from_utf8_lossy(&out.stderr).trim()
                    )
                },
            )?;
            let q = vec![
                ("op", "spawn onto host K (ibdyn)".to_string()),
                ("hosts", k.to_string()),
                ("n", args.ppn.to_string()),
            ];
            report.add(&q, "median", "ms", ms);
        }
    }
    report.finish();
    Ok(())
}
