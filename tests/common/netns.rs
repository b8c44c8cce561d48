//! Emulated hosts: one network namespace per host, each with an interface `ibd0` and its own
//! IPv4 address, all joined by a bridge that lives in a namespace of its own (so nothing of
//! the machine's own network, firewall or routes is touched or reached). Needs root and
//! `ip`; where namespaces cannot be made the lab is not built and the caller skips loudly.
//! Every namespace is removed by `Drop` (also when the test panics).

use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

/// The interface name every emulated host has (so `--iface ibd0` works everywhere).
pub const IFACE: &str = "ibd0";

pub struct NsHost {
    /// The namespace name, also the host name the tests give `--hosts`.
    pub name: String,
    pub ip: String,
}

pub struct NetLab {
    pub hosts: Vec<NsHost>,
    switch: String,
    made: Vec<String>,
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out: Output = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("ip {}: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Prints why a test does not run, where it cannot be missed.
pub fn skip(test: &str, why: &str) {
    eprintln!("\n*** SKIPPED {test}: {why} ***\n");
}

impl NetLab {
    /// `n` emulated hosts; `Err` says why they cannot be made here (the test should skip).
    pub fn new(n: usize) -> Result<NetLab, String> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return Err("network namespaces need root".into());
        }
        let c = NEXT.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        let tag = format!("ibdyn-{pid}-{c}");
        // A private subnet per lab; the bridge namespace keeps it off the machine's network.
        let subnet = format!("10.{}.{}", 100 + (c % 100), pid % 250);
        let mut lab = NetLab {
            hosts: Vec::new(),
            switch: format!("{tag}-sw"),
            made: Vec::new(),
        };
        lab.build(n, &tag, &subnet)?;
        Ok(lab)
    }

    fn add_ns(&mut self, name: &str) -> Result<(), String> {
        ip(&["netns", "add", name])?;
        self.made.push(name.to_string());
        ip(&["-n", name, "link", "set", "lo", "up"])
    }

    fn build(&mut self, n: usize, tag: &str, subnet: &str) -> Result<(), String> {
        let sw = self.switch.clone();
        self.add_ns(&sw)?;
        ip(&["-n", &sw, "link", "add", "br0", "type", "bridge"])?;
        ip(&["-n", &sw, "link", "set", "br0", "up"])?;
        for i in 0..n {
            let name = format!("{tag}-h{i}");
            let addr = format!("{subnet}.{}", i + 2);
            self.add_ns(&name)?;
            let port = format!("p{i}");
            ip(&[
                "-n", &sw, "link", "add", &port, "type", "veth", "peer", "name", IFACE, "netns",
                &name,
            ])?;
            ip(&["-n", &sw, "link", "set", &port, "master", "br0", "up"])?;
            ip(&[
                "-n",
                &name,
                "addr",
                "add",
                &format!("{addr}/24"),
                "dev",
                IFACE,
            ])?;
            ip(&["-n", &name, "link", "set", IFACE, "up"])?;
            self.hosts.push(NsHost { name, ip: addr });
        }
        Ok(())
    }

    /// `cmd ARGS` run inside host `i`'s namespace.
    pub fn command_in(&self, i: usize, program: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.hosts[i].name, program]);
        c
    }

    /// The host names, comma-separated, with `:slots` where given.
    pub fn host_list(&self, slots: &[u32]) -> String {
        self.hosts
            .iter()
            .enumerate()
            .map(|(i, h)| match slots.get(i) {
                Some(s) => format!("{}:{s}", h.name),
                None => h.name.clone(),
            })
            .collect::<Vec<_>>()
            .join(",")
    }
}

impl Drop for NetLab {
    fn drop(&mut self) {
        // Processes still inside would keep nothing alive: deleting the name unmounts it and
        // the kernel frees the namespace with its last process; the tests end theirs first.
        for name in self.made.iter().rev() {
            if let Err(e) = ip(&["netns", "del", name]) {
                eprintln!("netns cleanup: {e}");
            }
        }
    }
}
