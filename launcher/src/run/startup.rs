//! Starting a job's node daemons: on this machine (`--nodes K`) or one per host through a
//! launcher agent (ssh, an exec template, srun); accepting their authenticated connections
//! within a bound that names the host that did not come; wiring them into a tree.

use super::{LEvent, SessionDir};
use crate::error::{LaunchError, Result};
use crate::hosts::{agent, AgentProc, HostPlan};
use crate::link::{self, Outbox};
use crate::placement::tree;
use crate::protocol::{Role, ToDaemon};
use crate::secret;
use crossbeam_channel::Sender;
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

const STARTUP_LIMIT: Duration = Duration::from_secs(30);

pub(crate) struct Daemons {
    procs: Vec<AgentProc>,
}

impl Daemons {
    /// Waits a bounded time for every daemon (agent) to exit, then kills the rest.
    pub(crate) fn reap(&mut self, limit: Duration) {
        let deadline = Instant::now() + limit;
        loop {
            let alive = self
                .procs
                .iter_mut()
                .map(|p| p.child.try_wait())
                .filter(|s| matches!(s, Ok(None)))
                .count();
            if alive == 0 {
                return;
            }
            if Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        for p in &mut self.procs {
            if matches!(p.child.try_wait(), Ok(None)) {
                tracing::warn!("{} (pid {}) did not exit: killing it", p.what, p.child.id());
                let _ = p.child.kill();
                let _ = p.child.wait();
            }
        }
    }
}

impl Daemons {
    /// Start-up failed: the agents and daemons that did come up are of no use.
    fn kill_all(&mut self) {
        for p in &mut self.procs {
            if matches!(p.child.try_wait(), Ok(None)) {
                let _ = p.child.kill();
                let _ = p.child.wait();
            }
        }
    }
}

impl Drop for Daemons {
    fn drop(&mut self) {
        self.reap(Duration::from_secs(5));
    }
}

/// What every daemon of a job is started with.
struct DaemonLaunch<'a> {
    exe: &'a Path,
    nnodes: u32,
    session: &'a Path,
    /// Where the launcher listens, best first (comma-separated).
    addrs: String,
    secret_hex: &'a str,
}

impl DaemonLaunch<'_> {
    fn args(&self, index: Option<u32>, plan: Option<&HostPlan>) -> Vec<String> {
        let mut a = Vec::new();
        if let Some(i) = index {
            a.extend(["--index".into(), i.to_string()]);
        }
        a.extend([
            "--nnodes".into(),
            self.nnodes.to_string(),
            "--session-dir".into(),
            self.session.display().to_string(),
            "--launcher".into(),
            self.addrs.clone(),
        ]);
        if let Some(p) = plan {
            if let Some(i) = &p.iface {
                a.extend(["--iface".into(), i.clone()]);
            }
            if p.agent.secret_on_stdin() {
                a.push("--secret-stdin".into());
            }
            let names: Vec<&str> = p.hosts.iter().map(|h| h.name.as_str()).collect();
            a.extend(["--host-names".into(), names.join(",")]);
        }
        a
    }
}

fn spawn_local_daemon(l: &DaemonLaunch, index: u32) -> Result<AgentProc> {
    let mut cmd = std::process::Command::new(l.exe);
    cmd.arg("daemon")
        .args(l.args(Some(index), None))
        .env(ibdyn_pmi::env::JOB_SECRET, l.secret_hex)
        .stdin(Stdio::null());
    dies_with_launcher(&mut cmd);
    let child = cmd.spawn().map_err(|e| {
        LaunchError::io(
            format!("start node daemon {index} ({})", l.exe.display()),
            e,
        )
    })?;
    Ok(AgentProc::local(
        child,
        format!("node daemon {index}"),
        index,
    ))
}

/// The agent (or daemon) gets its own process group (a terminal's Ctrl-C reaches the job
/// through the launcher only) and dies with the launcher.
fn dies_with_launcher(cmd: &mut std::process::Command) {
    cmd.process_group(0);
    let launcher_pid = std::process::id() as i32;
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            crate::signals::unblock_all_in_child();
            libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGTERM as libc::c_ulong,
                0,
                0,
                0,
            );
            if libc::getppid() != launcher_pid {
                libc::raise(libc::SIGKILL);
            }
            Ok(())
        });
    }
}

/// One agent per host (one `srun` for all with Slurm).
fn spawn_agents(plan: &HostPlan, l: &DaemonLaunch) -> Result<Vec<AgentProc>> {
    let env = agent::forwarded_env();
    let stdin_secret = plan.agent.secret_on_stdin().then_some(l.secret_hex);
    let mut out = Vec::new();
    if plan.agent == crate::hosts::Agent::Srun {
        let script = agent::daemon_script(l.exe, &l.args(None, Some(plan)), &env);
        let mut cmd = plan
            .agent
            .command(&plan.hosts[0].name, &plan.hosts, &script);
        cmd.env(ibdyn_pmi::env::JOB_SECRET, l.secret_hex);
        dies_with_launcher(&mut cmd);
        let names: Vec<&str> = plan.hosts.iter().map(|h| h.name.as_str()).collect();
        let what = format!("{} (srun)", names.join(","));
        out.push(AgentProc::start(cmd, what, (0..l.nnodes).collect(), None)?);
        return Ok(out);
    }
    for (i, h) in plan.hosts.iter().enumerate() {
        let script = agent::daemon_script(l.exe, &l.args(Some(i as u32), Some(plan)), &env);
        let mut cmd = plan.agent.command(&h.name, &plan.hosts, &script);
        if !plan.agent.secret_on_stdin() {
            cmd.env(ibdyn_pmi::env::JOB_SECRET, l.secret_hex);
        }
        dies_with_launcher(&mut cmd);
        let what = format!("{} ({})", h.name, plan.agent.name(&h.name));
        out.push(AgentProc::start(cmd, what, vec![i as u32], stdin_secret)?);
    }
    Ok(out)
}

/// Where the launcher listens and the addresses it tells the daemons, best first: on this
/// machine loopback; with hosts the pinned interface, else the addresses that route to the
/// hosts, then every other address of this machine (a daemon takes the first it reaches and
/// authenticates on).
fn listen_addresses(plan: Option<&HostPlan>) -> Result<(IpAddr, Vec<IpAddr>)> {
    let loopback = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let Some(plan) = plan else {
        return Ok((loopback, vec![loopback]));
    };
    if let Some(i) = &plan.iface {
        let ip = ibdyn_verbs::iface::address_of(i)
            .map_err(|e| LaunchError::Usage(format!("--iface: {e}")))?;
        return Ok((ip, vec![ip]));
    }
    let mut out: Vec<IpAddr> = Vec::new();
    // ssh and srun look host names up anyway; an exec template's hosts may be no names at all
    // (network namespaces), so they are not looked up.
    let resolve = !matches!(plan.agent, crate::hosts::Agent::Exec(_));
    for h in &plan.hosts {
        let ip = h.name.parse::<IpAddr>().ok().or_else(|| {
            use std::net::ToSocketAddrs;
            resolve
                .then(|| (h.name.as_str(), 22).to_socket_addrs().ok())
                .flatten()
                .and_then(|mut a| a.find(|a| a.is_ipv4()))
                .map(|a| a.ip())
        });
        let routed = ip.and_then(ibdyn_verbs::iface::route_source);
        if let Some(ip) = routed.filter(|ip| ip.is_ipv4() && !out.contains(ip)) {
            out.push(ip);
        }
    }
    let all = ibdyn_verbs::iface::local_addresses()
        .map_err(|e| LaunchError::Usage(format!("list this machine's addresses: {e}")))?;
    for a in all.iter().filter(|a| a.ip.is_ipv4() && !a.loopback) {
        if !out.contains(&a.ip) {
            out.push(a.ip);
        }
    }
    out.push(loopback);
    Ok((IpAddr::V4(Ipv4Addr::UNSPECIFIED), out))
}

/// A connected daemon: its stream, the port its children connect to, its node id, and the
/// address it reached us from (where its children find it).
struct Joined {
    stream: TcpStream,
    port: u16,
    node_uid: String,
    ip: IpAddr,
}

fn accept_daemons(
    listener: &TcpListener,
    secret_hex: &str,
    nnodes: u32,
    daemons: &mut Daemons,
) -> Result<Vec<Joined>> {
    let n = nnodes as usize;
    let mut got: Vec<Option<Joined>> = (0..n).map(|_| None).collect();
    let deadline = Instant::now() + STARTUP_LIMIT;
    listener
        .set_nonblocking(true)
        .map_err(|e| LaunchError::io("set_nonblocking", e))?;
    while got.iter().any(Option::is_none) {
        match listener.accept() {
            Ok((mut s, addr)) => {
                s.set_nonblocking(false)
                    .map_err(|e| LaunchError::io("set_nonblocking", e))?;
                let hello = match link::accept_hello(&mut s, secret_hex) {
                    Ok(h) => h,
                    Err(e) => {
                        tracing::warn!("launcher: refused TCP connection: {e}");
                        continue;
                    }
                };
                let i = hello.index as usize;
                match hello.port {
                    Some(port) if hello.role == Role::Daemon && i < n && got[i].is_none() => {
                        got[i] = Some(Joined {
                            stream: s,
                            port,
                            node_uid: hello.node_uid.unwrap_or_default(),
                            ip: addr.ip(),
                        })
                    }
                    _ => tracing::warn!("launcher: refused connection from {addr}: bad hello"),
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                for p in daemons.procs.iter_mut() {
                    let pending = p.indices.iter().any(|&i| got[i as usize].is_none());
                    if let (true, Ok(Some(st))) = (pending, p.child.try_wait()) {
                        return Err(match p.stderr {
                            Some(_) => p.failure(&st),
                            None => LaunchError::DaemonDied {
                                index: p.indices[0],
                                status: st.to_string(),
                            },
                        });
                    }
                }
                if Instant::now() >= deadline {
                    return Err(missing(daemons, &got));
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(e) => return Err(LaunchError::io("accept", e)),
        }
    }
    listener
        .set_nonblocking(false)
        .map_err(|e| LaunchError::io("set_nonblocking", e))?;
    Ok(got.into_iter().flatten().collect())
}

/// The start-up timed out: which hosts did not connect, and what their agents said.
fn missing(daemons: &Daemons, got: &[Option<Joined>]) -> LaunchError {
    let late: Vec<String> = daemons
        .procs
        .iter()
        .filter(|p| p.indices.iter().any(|&i| got[i as usize].is_none()))
        .map(|p| match p.stderr.as_ref().map(|t| t.text()) {
            Some(said) if !said.is_empty() => format!("{} (said: {said})", p.what),
            _ => p.what.clone(),
        })
        .collect();
    LaunchError::Host {
        host: late.join("; "),
        why: format!(
            "its node daemon did not connect back within {} s (is the host reachable, and can \
             it reach this machine? --iface pins the interface)",
            STARTUP_LIMIT.as_secs()
        ),
    }
}

/// Running node daemons wired into a tree, and the launcher's links to them.
pub(crate) struct DaemonSet {
    pub(crate) daemons: Daemons,
    pub(crate) outboxes: Vec<Outbox>,
    pub(crate) node_uid0: String,
    pub(crate) session: SessionDir,
}

/// Starts `nnodes` daemons (on this machine, or one per host of `plan`), wires them into a
/// tree and turns their lines into `LEvent`s on `tx`.
pub(crate) fn start_daemons(
    nnodes: u32,
    plan: Option<&HostPlan>,
    exe: &Path,
    tx: &Sender<LEvent>,
) -> Result<DaemonSet> {
    let nnodes = plan.map_or(nnodes, |p| p.hosts.len() as u32);
    let session = SessionDir::create()?;
    // A singleton that adopts these daemons chose the secret already (it is running).
    let secret_hex = match std::env::var(ibdyn_pmi::env::JOB_SECRET)
        .ok()
        .and_then(|s| secret::parse_secret(&s))
    {
        Some(s) if std::env::var_os("IBDYN_ADOPTING").is_some() => secret::format_secret(s),
        _ => secret::format_secret(secret::random_u64()?),
    };
    let (bind_ip, advertised) = listen_addresses(plan)?;
    let listener = TcpListener::bind((bind_ip, 0))
        .map_err(|e| LaunchError::io(format!("bind a TCP port on {bind_ip}"), e))?;
    let port = listener
        .local_addr()
        .map_err(|e| LaunchError::io("local_addr", e))?
        .port();
    std::fs::write(session.0.join("launcher.port"), format!("{port}\n"))
        .map_err(|e| LaunchError::io("write launcher.port", e))?;
    let addrs: Vec<String> = advertised
        .iter()
        .map(|ip| SocketAddr::new(*ip, port).to_string())
        .collect();
    let launch = DaemonLaunch {
        exe,
        nnodes,
        session: &session.0,
        addrs: addrs.join(","),
        secret_hex: &secret_hex,
    };
    let mut daemons = Daemons { procs: Vec::new() };
    match plan {
        None => {
            for d in 0..nnodes {
                daemons.procs.push(spawn_local_daemon(&launch, d)?);
            }
        }
        Some(p) => daemons.procs = spawn_agents(p, &launch)?,
    }
    let joined = match accept_daemons(&listener, &secret_hex, nnodes, &mut daemons) {
        Ok(j) => j,
        Err(e) => {
            daemons.kill_all();
            return Err(e);
        }
    };
    for p in &daemons.procs {
        p.echo_stderr();
    }
    link::refuse_late_connections(listener, secret_hex.clone(), "launcher".into());
    let node_uid0 = joined
        .first()
        .map(|j| j.node_uid.clone())
        .unwrap_or_default();
    let peers: Vec<(u16, IpAddr)> = joined.iter().map(|j| (j.port, j.ip)).collect();
    let mut outboxes = Vec::new();
    for (d, j) in joined.into_iter().enumerate() {
        let d = d as u32;
        let mut s = j.stream;
        let parent = tree::parent(d).map(|p| peers[p as usize]);
        let msg = ToDaemon::Peers {
            parent_port: parent.map(|p| p.0),
            parent_ip: parent.map(|p| p.1),
        };
        s.write_all(msg.encode().to_line().as_bytes())
            .map_err(|e| LaunchError::io(format!("write to daemon {d}"), e))?;
        let _ = s.set_nodelay(true);
        let w = s
            .try_clone()
            .map_err(|e| LaunchError::io("clone a TCP stream", e))?;
        outboxes.push(link::start_writer(w, format!("daemon{d}")));
        let (t1, t2) = (tx.clone(), tx.clone());
        link::start_reader(
            s,
            format!("daemon{d}"),
            move |f| {
                let _ = t1.send(LEvent::Daemon(d, f));
            },
            move || {
                let _ = t2.send(LEvent::DaemonClosed(d));
            },
        )?;
    }
    Ok(DaemonSet {
        daemons,
        outboxes,
        node_uid0,
        session,
    })
}
