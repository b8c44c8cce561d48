//! Starting, watching and stopping the ranks of a job on this daemon.

use super::{Daemon, Event};
use crate::placement::Placement;
use crate::signals;
use crossbeam_channel::Sender;
use ibdyn_pmi::env;
use ibdyn_pmi::wire::{msg_token, Command};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// After a rank is reaped, how long its output pipes may stay open (a grandchild holding
/// them) before its exit is reported anyway.
pub(crate) const EOF_GRACE: Duration = Duration::from_secs(1);

/// Everything needed to start ranks of one job: "start these ranks of this job here".
#[derive(Clone, Debug)]
pub struct JobSpec {
    pub jobid: u32,
    pub kvsname: String,
    pub size: u32,
    pub appnum: i32,
    pub placement: Placement,
    pub program: String,
    pub args: Vec<String>,
    pub session_dir: PathBuf,
    pub pmi_sock: PathBuf,
}

#[derive(Default)]
pub(crate) struct RankState {
    pub(crate) pid: Option<i32>,
    pub(crate) stdin: Option<Sender<Option<Vec<u8>>>>,
    /// Sequence number of the next collective this rank enters.
    pub(crate) next_seq: u64,
    pub(crate) conn: Option<super::ConnId>,
    pub(crate) finalized: bool,
    /// Reported as gone to the collectives (finalized, disconnected or exited).
    pub(crate) gone: bool,
    pub(crate) exit: Option<(Option<i32>, Option<i32>)>,
    pub(crate) eofs: u8,
    pub(crate) reaped_at: Option<Instant>,
    pub(crate) reported: bool,
}

pub(crate) struct Job {
    pub(crate) spec: JobSpec,
    pub(crate) ranks: BTreeMap<u32, RankState>,
}

impl Job {
    pub(crate) fn new(spec: JobSpec) -> Job {
        Job {
            spec,
            ranks: BTreeMap::new(),
        }
    }
}

fn pump_output(mut pipe: impl Read + Send + 'static, rank: u32, fd: u8, tx: Sender<Event>) {
    let spawned = std::thread::Builder::new()
        .name(format!("out{rank}.{fd}"))
        .spawn(move || {
            let mut pending: Vec<u8> = Vec::new();
            let mut buf = vec![0u8; 16384];
            loop {
                match pipe.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        pending.extend_from_slice(&buf[..n]);
                        // Forward whole lines; a very long line goes in pieces.
                        let cut = match pending.iter().rposition(|&b| b == b'\n') {
                            Some(p) => p + 1,
                            None if pending.len() >= 65536 => pending.len(),
                            None => continue,
                        };
                        let data: Vec<u8> = pending.drain(..cut).collect();
                        let _ = tx.send(Event::Output { rank, fd, data });
                    }
                }
            }
            if !pending.is_empty() {
                let _ = tx.send(Event::Output {
                    rank,
                    fd,
                    data: pending,
                });
            }
            let _ = tx.send(Event::OutputEof { rank });
        });
    if let Err(e) = spawned {
        tracing::warn!("cannot start an output thread for rank {rank}: {e}");
    }
}

fn wait_for(pid: i32, rank: u32, tx: Sender<Event>) {
    let spawned = std::thread::Builder::new()
        .name(format!("wait{rank}"))
        .spawn(move || {
            use nix::sys::wait::{waitpid, WaitStatus};
            loop {
                match waitpid(nix::unistd::Pid::from_raw(pid), None) {
                    Ok(WaitStatus::Exited(_, code)) => {
                        let _ = tx.send(Event::Exited {
                            rank,
                            pid,
                            code: Some(code),
                            signal: None,
                        });
                        return;
                    }
                    Ok(WaitStatus::Signaled(_, sig, _)) => {
                        let _ = tx.send(Event::Exited {
                            rank,
                            pid,
                            code: None,
                            signal: Some(sig as i32),
                        });
                        return;
                    }
                    Ok(_) | Err(nix::errno::Errno::EINTR) => continue,
                    Err(e) => {
                        tracing::warn!("waitpid({pid}) for rank {rank}: {e}");
                        let _ = tx.send(Event::Exited {
                            rank,
                            pid,
                            code: None,
                            signal: None,
                        });
                        return;
                    }
                }
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("cannot start a wait thread for rank {rank}: {e}");
    }
}

impl Daemon {
    /// Starts `ranks` of job `spec` on this daemon: the one place processes are created
    /// (the initial job now; spawned jobs later, with their own `JobSpec`).
    pub(crate) fn start_ranks(&mut self, spec: &JobSpec, ranks: &[u32]) {
        for &r in ranks {
            if let Err(e) = self.start_rank(spec, r) {
                let msg = format!("cannot start rank {r}: {:?}: {e}", spec.program);
                self.to_launcher(
                    Command::new("d_start_failed")
                        .arg("rank", r)
                        .arg("msg", msg_token(&msg)),
                );
                let rs = self.job.ranks.entry(r).or_default();
                rs.gone = true;
            }
        }
    }

    fn start_rank(&mut self, spec: &JobSpec, rank: u32) -> std::io::Result<()> {
        let mut cmd = std::process::Command::new(&spec.program);
        cmd.args(&spec.args)
            .env(env::PMI_SOCK, &spec.pmi_sock)
            .env(env::RANK, rank.to_string())
            .env(env::SIZE, spec.size.to_string())
            .env(env::JOBID, spec.jobid.to_string())
            .env(env::NODE, self.me.to_string())
            .env(env::NODE_UID, &self.node_uid)
            .env(env::NNODES, self.nnodes.to_string())
            .env(env::JOB_SECRET, &self.secret_hex)
            .env(env::SESSION_DIR, &spec.session_dir)
            .env(env::APPNUM, spec.appnum.to_string())
            .env_remove(env::HYDRA_PMI_FD)
            .stdin(if rank == 0 {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let daemon_pid = std::process::id() as i32;
        // SAFETY: only async-signal-safe calls (prctl, getppid, raise) between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                crate::signals::unblock_all_in_child();
                libc::prctl(
                    libc::PR_SET_PDEATHSIG,
                    libc::SIGKILL as libc::c_ulong,
                    0,
                    0,
                    0,
                );
                if libc::getppid() != daemon_pid {
                    libc::raise(libc::SIGKILL);
                }
                Ok(())
            });
        }
        let mut child = cmd.spawn()?;
        let pid = child.id() as i32;
        tracing::debug!("daemon {}: rank {rank} started as pid {pid}", self.me);
        let tx = self.events.clone();
        if let Some(out) = child.stdout.take() {
            pump_output(out, rank, 1, tx.clone());
        }
        if let Some(err) = child.stderr.take() {
            pump_output(err, rank, 2, tx.clone());
        }
        let stdin = child.stdin.take().map(|mut w| {
            let (stx, srx) = crossbeam_channel::unbounded::<Option<Vec<u8>>>();
            let _ = std::thread::Builder::new()
                .name("stdin".into())
                .spawn(move || {
                    for chunk in srx {
                        match chunk {
                            Some(data) if w.write_all(&data).is_ok() => {}
                            _ => return,
                        }
                    }
                });
            stx
        });
        wait_for(pid, rank, tx);
        let rs = self.job.ranks.entry(rank).or_default();
        rs.pid = Some(pid);
        rs.stdin = stdin;
        Ok(())
    }

    pub(crate) fn stdin_to_rank0(&mut self, data: Option<Vec<u8>>) {
        if let Some(rs) = self.job.ranks.get_mut(&0) {
            match (&rs.stdin, data) {
                (Some(tx), Some(d)) => {
                    let _ = tx.send(Some(d));
                }
                (Some(_), None) => rs.stdin = None,
                _ => {}
            }
        }
    }

    pub(crate) fn signal_ranks(&mut self, sig: i32) {
        for (r, rs) in &self.job.ranks {
            if let (Some(pid), None) = (rs.pid, rs.reaped_at) {
                tracing::debug!(
                    "daemon {}: {} to rank {r} (pid {pid})",
                    self.me,
                    signals::name(sig)
                );
                // SAFETY: kill(2) on the process group of a child we have not reaped yet (each
                // rank leads its own group, so helpers it started go too); the pid is still ours.
                unsafe { libc::kill(-pid, sig) };
            }
        }
    }

    pub(crate) fn on_output_eof(&mut self, rank: u32) {
        if let Some(rs) = self.job.ranks.get_mut(&rank) {
            rs.eofs += 1;
        }
        self.report_exit(rank, false);
    }

    pub(crate) fn on_exited(
        &mut self,
        rank: u32,
        pid: i32,
        code: Option<i32>,
        signal: Option<i32>,
    ) {
        match ibdyn_shm::remove_segments_of(pid) {
            Ok(n) if n > 0 => tracing::debug!(
                "daemon {}: removed {n} shared-memory segments of rank {rank}",
                self.me
            ),
            Ok(_) => {}
            Err(e) => tracing::warn!(
                "daemon {}: cleaning /dev/shm after rank {rank}: {e}",
                self.me
            ),
        }
        let Some(rs) = self.job.ranks.get_mut(&rank) else {
            return;
        };
        rs.exit = Some((code, signal));
        rs.reaped_at = Some(Instant::now());
        rs.stdin = None;
        let why = match (code, signal) {
            (_, Some(s)) => format!("was killed by {}", signals::name(s)),
            (Some(c), _) => format!("exited with code {c}"),
            _ => "exited".to_string(),
        };
        self.rank_gone(rank, &why);
        self.report_exit(rank, false);
    }

    /// Tells the launcher that `rank` is done once it is reaped and its output drained.
    pub(crate) fn report_exit(&mut self, rank: u32, force: bool) {
        let Some(rs) = self.job.ranks.get_mut(&rank) else {
            return;
        };
        let Some((code, signal)) = rs.exit else {
            return;
        };
        if rs.reported || !(force || rs.eofs >= 2) {
            return;
        }
        rs.reported = true;
        let mut cmd = Command::new("d_exit").arg("rank", rank);
        if let Some(c) = code {
            cmd = cmd.arg("code", c);
        }
        if let Some(s) = signal {
            cmd = cmd.arg("signal", s);
        }
        self.to_launcher(cmd);
    }
}
