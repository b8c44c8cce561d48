//! `ibdyn run` inside a single-node Slurm allocation: the test starts munged, slurmctld and
//! slurmd (Debian's `slurm-wlm` packages, scripts/deps.sh installs them) with a generated
//! configuration in a temp dir, everything on loopback; `salloc -N1 ibdyn run -n 4 ...`
//! takes its host and slots from the allocation and starts its daemon with srun (the ranks
//! run inside Slurm step 0), a spawn onto the allocation's node works, and `ibdyn dvm start`
//! inside the allocation starts its daemons with srun too. Skipped loudly
//! when the Slurm or munge daemons are not installed or do not start. Everything the test
//! started is stopped on drop.

mod common;

use common::dvm::show;
use common::netns::skip;
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const NODE: &str = "ibdn1";

fn which(program: &str) -> Option<PathBuf> {
    ["/usr/sbin", "/usr/bin", "/sbin", "/bin"]
        .iter()
        .map(|d| Path::new(d).join(program))
        .find(|p| p.exists())
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// munged, slurmctld and slurmd of one test; stopped (with every process of their jobs) on
/// drop.
struct Cluster {
    dir: Scratch,
    daemons: Vec<Child>,
}

impl Cluster {
    fn conf(&self) -> PathBuf {
        self.dir.dir.join("slurm.conf")
    }

    fn start() -> Result<Cluster, String> {
        for p in [
            "munged",
            "slurmctld",
            "slurmd",
            "salloc",
            "srun",
            "sinfo",
            "squeue",
        ] {
            which(p).ok_or_else(|| format!("{p} is not installed (scripts/deps.sh)"))?;
        }
        let mut c = Cluster {
            dir: Scratch::new("slurm"),
            daemons: Vec::new(),
        };
        let d = c.dir.dir.clone();
        for sub in ["state", "spool"] {
            std::fs::create_dir_all(d.join(sub)).map_err(|e| e.to_string())?;
        }
        let key: Vec<u8> = (0..1024u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8 ^ std::process::id() as u8)
            .collect();
        let key_path = d.join("munge.key");
        std::fs::write(&key_path, key).map_err(|e| e.to_string())?;
        std::fs::set_permissions(
            &key_path,
            std::os::unix::fs::PermissionsExt::from_mode(0o400),
        )
        .map_err(|e| e.to_string())?;
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map_err(|e| e.to_string())?
            .trim()
            .to_string();
        let dd = d.display();
        let conf = format!(
            "ClusterName=ibdyntest\nSlurmctldHost={host}(127.0.0.1)\n\
             SlurmctldPort={}\nSlurmdPort={}\nStateSaveLocation={dd}/state\n\
             SlurmdSpoolDir={dd}/spool\nSlurmctldPidFile={dd}/ctld.pid\n\
             SlurmdPidFile={dd}/d.pid\nSlurmctldLogFile={dd}/ctld.log\n\
             SlurmdLogFile={dd}/d.log\nSlurmUser=root\nSlurmdUser=root\n\
             AuthType=auth/munge\nAuthInfo=socket={dd}/munge.sock\nCredType=cred/munge\n\
             ProctrackType=proctrack/pgid\nTaskPlugin=task/none\n\
             JobAcctGatherType=jobacct_gather/none\n\
             AccountingStorageType=accounting_storage/none\nJobCompType=jobcomp/none\n\
             SchedulerType=sched/builtin\nSelectType=select/linear\nReturnToService=2\n\
             MpiDefault=none\nSlurmdParameters=config_overrides\n\
             NodeName={NODE} NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN\n\
             PartitionName=test Nodes={NODE} Default=YES MaxTime=INFINITE State=UP \
             OverSubscribe=YES\n",
            free_port(),
            free_port()
        );
        std::fs::write(c.conf(), conf).map_err(|e| e.to_string())?;
        let quiet = |mut cmd: Command| {
            cmd.stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .env("SLURM_CONF", d.join("slurm.conf"));
            cmd
        };
        let mut munged = Command::new("munged");
        munged.args(["-F", "--force"]).args([
            format!("--key-file={dd}/munge.key"),
            format!("--socket={dd}/munge.sock"),
            format!("--pid-file={dd}/munged.pid"),
            format!("--log-file={dd}/munged.log"),
            format!("--seed-file={dd}/munge.seed"),
        ]);
        c.spawn(quiet(munged), "munged")?;
        c.wait_for(|| d.join("munge.sock").exists(), "munged's socket")?;
        let mut ctld = Command::new("slurmctld");
        ctld.args(["-D", "-i"]);
        c.spawn(quiet(ctld), "slurmctld")?;
        let mut slurmd = Command::new("slurmd");
        slurmd.args(["-D", "-N", NODE]);
        c.spawn(quiet(slurmd), "slurmd")?;
        let conf_path = c.conf();
        c.wait_for(
            || {
                Command::new("sinfo")
                    .args(["-h", "-o", "%t"])
                    .env("SLURM_CONF", &conf_path)
                    .stderr(Stdio::null())
                    .output()
                    .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle")
            },
            "the node to be idle",
        )?;
        Ok(c)
    }

    fn spawn(&mut self, mut cmd: Command, what: &str) -> Result<(), String> {
        let child = cmd.spawn().map_err(|e| format!("start {what}: {e}"))?;
        self.daemons.push(child);
        Ok(())
    }

    fn wait_for(&mut self, mut ready: impl FnMut() -> bool, what: &str) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !ready() {
            for d in &mut self.daemons {
                if let Ok(Some(st)) = d.try_wait() {
                    return Err(format!("a Slurm/munge daemon exited ({st}) before {what}"));
                }
            }
            if Instant::now() >= deadline {
                return Err(format!("no {what} within 20 s"));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(())
    }

    /// `salloc -N1 ARGS`, bounded.
    fn salloc(&self, args: &[&str], tmp: &Scratch) -> Output {
        let mut c = Command::new("timeout");
        c.args(["--signal=TERM", "--kill-after=10", "120", "salloc", "-N1"])
            .args(args)
            .env("SLURM_CONF", self.conf())
            .env("TMPDIR", &tmp.dir)
            .env_remove("IBDYN_LOG");
        run_bounded(c, None, Duration::from_secs(150))
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // Let the jobs' step daemons finish with slurmd before it goes (bounded).
        let conf = self.conf();
        let _ = self.wait_for(
            || {
                Command::new("squeue")
                    .args(["-h"])
                    .env("SLURM_CONF", &conf)
                    .stderr(Stdio::null())
                    .output()
                    .is_ok_and(|o| o.stdout.is_empty())
            },
            "empty queue",
        );
        // A step daemon lingers a moment after its job; the test's own are the only ones here.
        let _ = self.wait_for(|| step_daemons().is_empty(), "step daemons to end");
        for d in self.daemons.iter_mut().rev() {
            // SAFETY: kill with a pid of our own child.
            unsafe { libc::kill(d.id() as i32, libc::SIGTERM) };
        }
        for d in &mut self.daemons {
            let _ = wait_or_kill(d, Duration::from_secs(5));
        }
        // Job steps (slurmstepd) outlive slurmd: end those of this test's config.
        let needle = self.dir.dir.to_string_lossy().into_owned();
        for (pid, _) in processes_mentioning(&needle) {
            // SAFETY: kill of a process started for this test (its environment names our dir).
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
    }
}

/// Pids of running `slurmstepd` processes.
fn step_daemons() -> Vec<u32> {
    std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
                .filter(|pid| {
                    std::fs::read_to_string(format!("/proc/{pid}/comm"))
                        .is_ok_and(|c| c.trim() == "slurmstepd")
                })
                .collect()
        })
        .unwrap_or_default()
}

fn wait_or_kill(c: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Ok(Some(st)) = c.try_wait() {
            return Some(st);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = c.kill();
    c.wait().ok()
}

#[test]
fn a_job_and_a_spawn_inside_a_single_node_slurm_allocation() {
    let test = "a_job_and_a_spawn_inside_a_single_node_slurm_allocation";
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return skip(test, "the test's Slurm daemons need root");
    }
    let cluster = match Cluster::start() {
        Ok(c) => c,
        Err(why) => return skip(test, &why),
    };
    let s = Scratch::new("slurm-jobs");
    let ibdyn = ibdyn_bin();
    let prog = example_bin("hosts_check");
    let (ibdyn, prog) = (ibdyn.to_str().unwrap(), prog.to_str().unwrap());

    let out = cluster.salloc(&[ibdyn, "info"], &s);
    assert!(
        text(&out.stdout).contains("would use: slurm (allocation"),
        "{}",
        show(&out)
    );

    // `--iface lo`: the node is this machine; keep every connection on loopback.
    let out = cluster.salloc(
        &[
            ibdyn,
            "run",
            "-n",
            "4",
            "--iface",
            "lo",
            "--tag-output",
            prog,
            "world",
        ],
        &s,
    );
    assert!(out.status.success(), "{}", show(&out));
    for rank in 0..4 {
        let line = lines_with(&out, &format!("[{rank}] hosts_check: rank {rank} "));
        assert_eq!(line.len(), 1, "{}", show(&out));
        assert!(
            line[0].ends_with(" slurm_step 0"),
            "rank {rank} is not inside the srun step: {}",
            show(&out)
        );
    }
    assert!(text(&out.stdout).contains("hosts_check: world ok"));
    s.assert_clean();

    let out = cluster.salloc(
        &[
            ibdyn, "run", "-n", "2", "--iface", "lo", prog, "spawn", NODE,
        ],
        &s,
    );
    assert!(out.status.success(), "{}", show(&out));
    assert!(
        text(&out.stdout).contains("hosts_check: spawn ok"),
        "{}",
        show(&out)
    );
    s.assert_clean();

    // `ibdyn dvm start` inside the allocation starts its daemons with srun too.
    let script = format!(
        "{ibdyn} dvm start --iface lo || exit 9; squeue -h -s -o 'step %i'; \
         {ibdyn} run --dvm -n 2 --tag-output {prog} world; st=$?; {ibdyn} dvm stop; exit $st"
    );
    let out = cluster.salloc(&["sh", "-c", &script], &s);
    assert!(out.status.success(), "{}", show(&out));
    assert!(
        text(&out.stdout)
            .lines()
            .any(|l| l.starts_with("step ") && l.ends_with(".0")),
        "the DVM's daemons are not a Slurm step: {}",
        show(&out)
    );
    assert_eq!(lines_with(&out, "[").len(), 3, "{}", show(&out));
    s.assert_clean();
}
