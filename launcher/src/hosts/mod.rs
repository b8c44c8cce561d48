//! Real hosts: which hosts a job runs on (`--hosts`, `--hostfile`, a Slurm allocation) and
//! how a node daemon is started on each (ssh, an exec template, one `srun`).

pub mod agent;
pub mod hostfile;
pub mod slurm;

pub use agent::{Agent, AgentProc};
pub use hostfile::Host;

use crate::error::{LaunchError, Result};
use std::path::PathBuf;

/// The ssh command (`IBDYN_SSH`, words; `{host}` where the host goes, else appended).
pub const SSH_ENV: &str = "IBDYN_SSH";
const DEFAULT_SSH: &str = "ssh -x -o BatchMode=yes";

/// `--launcher`: how daemons are started.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LauncherKind {
    /// Every daemon on this machine (`--nodes K` emulates K nodes).
    Local,
    /// `ssh HOST ibdyn daemon ...` per host (`IBDYN_SSH` changes the command).
    Ssh,
    /// One `srun` inside a Slurm allocation.
    Slurm,
}

/// The host options of `ibdyn run` and `ibdyn dvm start`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct HostArgs {
    /// Hosts to run on: `a,b:4,c` (`:N` slots, default 1; also `--host`, as mpirun takes it).
    #[arg(
        long,
        visible_alias = "host",
        value_name = "HOST[:SLOTS],...",
        conflicts_with = "hostfile"
    )]
    pub hosts: Option<String>,
    /// A file of hosts: one a line, optional `slots=N` (or `host:N`), `#` comments.
    #[arg(long, value_name = "FILE")]
    pub hostfile: Option<PathBuf>,
    /// How node daemons are started: `ssh` (the default with hosts), `slurm` (the default
    /// inside an allocation), `local` (this machine only).
    #[arg(long, value_enum)]
    pub launcher: Option<LauncherKind>,
    /// Start each host's daemon with this command instead of ssh, `{host}` replaced by the
    /// host (e.g. `ip netns exec {host}`); the daemon's command follows it.
    #[arg(long, value_name = "TEMPLATE")]
    pub launcher_exec: Option<String>,
    /// The network interface (or address) the daemons and the fabric use (also
    /// `IBDYN_IFACE`); default: the one that reaches the other hosts.
    #[arg(long, value_name = "NAME")]
    pub iface: Option<String>,
}

/// Hosts and the agent that starts their daemons.
#[derive(Clone, Debug)]
pub struct HostPlan {
    pub hosts: Vec<Host>,
    pub agent: Agent,
    pub iface: Option<String>,
}

impl HostArgs {
    /// The plan these options (and the environment) ask for; `None`: daemons on this
    /// machine as today. `nodes_given`: `--nodes` was on the command line.
    pub fn plan(&self, nodes_given: bool) -> Result<Option<HostPlan>> {
        let plan = self.plan_hosts(nodes_given)?;
        if plan.is_none() && self.iface.is_some() {
            return Err(LaunchError::Usage(
                "--iface applies to daemons on hosts (--hosts, --hostfile, Slurm); on this \
                 machine set IBDYN_IFACE for the ranks"
                    .into(),
            ));
        }
        Ok(plan)
    }

    fn plan_hosts(&self, nodes_given: bool) -> Result<Option<HostPlan>> {
        let iface = self
            .iface
            .clone()
            .or_else(|| std::env::var(ibdyn_verbs::iface::IFACE_ENV).ok())
            .filter(|s| !s.trim().is_empty());
        let listed = match (&self.hosts, &self.hostfile) {
            (Some(h), _) => Some(hostfile::parse_list(h)?),
            (None, Some(f)) => Some(hostfile::read_file(f)?),
            (None, None) => None,
        };
        if listed.is_some() && nodes_given {
            return Err(LaunchError::Usage(
                "--nodes emulates nodes on this machine; with --hosts/--hostfile give slots \
                 instead (`--hosts a:4,b:4`)"
                    .into(),
            ));
        }
        let kind = self.launcher;
        if kind == Some(LauncherKind::Local) || (listed.is_none() && nodes_given) {
            if listed.is_some() || self.launcher_exec.is_some() {
                return Err(LaunchError::Usage(
                    "--launcher local starts daemons on this machine: drop --hosts, \
                     --hostfile and --launcher-exec"
                        .into(),
                ));
            }
            return Ok(None);
        }
        let slurm = slurm::from_env().transpose()?;
        let hosts = match (listed, &slurm) {
            (Some(h), _) => h,
            (None, Some(h)) => h.clone(),
            (None, None) if kind == Some(LauncherKind::Slurm) => {
                return Err(LaunchError::Usage(format!(
                    "--launcher slurm: not inside a Slurm allocation ({} and {} are not set); \
                     use salloc/sbatch, or --hosts",
                    slurm::JOB_ID,
                    slurm::NODELIST
                )))
            }
            (None, None) if self.launcher_exec.is_some() || kind.is_some() => {
                return Err(LaunchError::Usage(
                    "--launcher/--launcher-exec need hosts: give --hosts or --hostfile".into(),
                ))
            }
            (None, None) => return Ok(None),
        };
        let agent = match (&self.launcher_exec, kind) {
            (Some(t), _) => Agent::exec(t)?,
            (None, Some(LauncherKind::Slurm)) => Agent::Srun,
            (None, Some(LauncherKind::Ssh)) => Agent::ssh(&ssh_command())?,
            (None, _) if slurm.is_some() && self.hosts.is_none() && self.hostfile.is_none() => {
                Agent::Srun
            }
            (None, _) => Agent::ssh(&ssh_command())?,
        };
        Ok(Some(HostPlan {
            hosts,
            agent,
            iface,
        }))
    }

    /// The same options as command-line arguments (for `dvm start` → `dvm serve`).
    pub fn to_args(&self) -> Vec<String> {
        let mut a = Vec::new();
        let mut push = |k: &str, v: Option<String>| {
            if let Some(v) = v {
                a.push(k.to_string());
                a.push(v);
            }
        };
        push("--hosts", self.hosts.clone());
        push(
            "--hostfile",
            self.hostfile.as_ref().map(|p| p.display().to_string()),
        );
        push(
            "--launcher",
            self.launcher.map(|k| {
                match k {
                    LauncherKind::Local => "local",
                    LauncherKind::Ssh => "ssh",
                    LauncherKind::Slurm => "slurm",
                }
                .to_string()
            }),
        );
        push("--launcher-exec", self.launcher_exec.clone());
        push("--iface", self.iface.clone());
        a
    }
}

fn ssh_command() -> String {
    std::env::var(SSH_ENV)
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| DEFAULT_SSH.to_string())
}

/// `ibdyn info`: which launcher `ibdyn run` would use here, and why.
pub fn describe() -> String {
    let ssh = ssh_command();
    match slurm::from_env() {
        Some(Ok(hosts)) => format!(
            "launcher ibdyn run would use: slurm (allocation {}, {} node(s): {}; one srun \
             starts the daemons); with --hosts: {ssh}",
            std::env::var(slurm::JOB_ID).unwrap_or_default(),
            hosts.len(),
            hosts
                .iter()
                .map(|h| format!("{}:{}", h.name, h.slots))
                .collect::<Vec<_>>()
                .join(",")
        ),
        Some(Err(e)) => format!("launcher: inside a Slurm allocation that cannot be read: {e}"),
        None => format!(
            "launcher ibdyn run would use: local (--nodes K on this machine); with --hosts or \
             --hostfile: {ssh} HOST (set {SSH_ENV} or --launcher-exec to change it)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(hosts: Option<&str>) -> HostArgs {
        HostArgs {
            hosts: hosts.map(str::to_string),
            ..HostArgs::default()
        }
    }

    #[test]
    fn host_options_choose_the_agent_and_refuse_contradictions() {
        let p = args(Some("a,b:2")).plan(false).unwrap().expect("a plan");
        assert_eq!(p.hosts.len(), 2);
        assert!(matches!(p.agent, Agent::Ssh(_)));
        let p = HostArgs {
            launcher_exec: Some("ip netns exec {host}".into()),
            ..args(Some("a"))
        }
        .plan(false)
        .unwrap()
        .expect("a plan");
        assert_eq!(p.agent, Agent::exec("ip netns exec {host}").unwrap());
        assert!(args(Some("a")).plan(true).is_err(), "--hosts with --nodes");
        let local = HostArgs {
            launcher: Some(LauncherKind::Local),
            ..args(Some("a"))
        };
        assert!(local.plan(false).is_err(), "--launcher local with --hosts");
        let iface_alone = HostArgs {
            iface: Some("lo".into()),
            ..args(None)
        };
        assert!(iface_alone.plan(true).is_err(), "--iface without hosts");
        assert!(args(None).plan(true).unwrap().is_none());
        let a = HostArgs {
            launcher_exec: Some("x {host}".into()),
            iface: Some("ibd0".into()),
            ..args(Some("a:2"))
        };
        assert_eq!(
            a.to_args(),
            [
                "--hosts",
                "a:2",
                "--launcher-exec",
                "x {host}",
                "--iface",
                "ibd0"
            ]
        );
    }
}
