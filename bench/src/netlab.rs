//! Emulated hosts for `launch --hosts`: a login namespace (where the launcher runs) and K
//! host namespaces, each with interface `ibd0` and its own address, joined by a bridge in a
//! namespace of its own; an sshd in each host namespace with a key made for the run, and an
//! ssh wrapper using it (the same ssh for ibdyn and for hydra). Removed on drop. Needs root,
//! `ip` and openssh-server.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub const IFACE: &str = "ibd0";
const SSHD: &str = "/usr/sbin/sshd";

pub struct NetLab {
    /// Namespace names: [0] the login namespace, then the hosts.
    pub names: Vec<String>,
    pub ips: Vec<String>,
    made: Vec<String>,
    sshds: Vec<Child>,
    pub dir: PathBuf,
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
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

fn keygen(path: &Path) -> Result<(), String> {
    let st = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .stdin(Stdio::null())
        .status()
        .map_err(|e| format!("ssh-keygen: {e}"))?;
    st.success()
        .then_some(())
        .ok_or_else(|| format!("ssh-keygen: {st}"))
}

impl NetLab {
    /// A login namespace and `hosts` host namespaces with sshd running in each host.
    pub fn new(hosts: usize) -> Result<NetLab, String> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err("emulated hosts need root (network namespaces)".into());
        }
        if !Path::new(SSHD).exists() {
            return Err("openssh-server is not installed (scripts/deps.sh)".into());
        }
        let pid = std::process::id();
        let tag = format!("ibdb-{pid}");
        let dir = std::env::temp_dir().join(format!("ibdyn-bench-lab-{pid}"));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let mut lab = NetLab {
            names: Vec::new(),
            ips: Vec::new(),
            made: Vec::new(),
            sshds: Vec::new(),
            dir,
        };
        lab.build(&tag, &format!("10.99.{}", pid % 250), hosts)?;
        lab.start_sshds()?;
        Ok(lab)
    }

    fn add_ns(&mut self, name: &str) -> Result<(), String> {
        ip(&["netns", "add", name])?;
        self.made.push(name.to_string());
        ip(&["-n", name, "link", "set", "lo", "up"])
    }

    fn build(&mut self, tag: &str, subnet: &str, hosts: usize) -> Result<(), String> {
        let sw = format!("{tag}-sw");
        self.add_ns(&sw)?;
        ip(&["-n", &sw, "link", "add", "br0", "type", "bridge"])?;
        ip(&["-n", &sw, "link", "set", "br0", "up"])?;
        for i in 0..=hosts {
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
            self.names.push(name);
            self.ips.push(addr);
        }
        Ok(())
    }

    fn start_sshds(&mut self) -> Result<(), String> {
        let d = self.dir.clone();
        keygen(&d.join("host_key"))?;
        keygen(&d.join("client_key"))?;
        std::fs::copy(d.join("client_key.pub"), d.join("authorized_keys"))
            .map_err(|e| e.to_string())?;
        let _ = std::fs::create_dir_all("/run/sshd");
        let wrapper = format!(
            "#!/bin/sh\nexec ssh -x -o BatchMode=yes -F /dev/null -i {k} \
             -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR \"$@\"\n",
            k = d.join("client_key").display()
        );
        let w = d.join("ssh");
        std::fs::write(&w, wrapper).map_err(|e| e.to_string())?;
        std::fs::set_permissions(&w, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .map_err(|e| e.to_string())?;
        for i in 1..self.names.len() {
            let config = d.join(format!("sshd_config.{i}"));
            let text = format!(
                "Port 22\nListenAddress {ip}\nHostKey {d}/host_key\nPidFile none\n\
                 AuthorizedKeysFile {d}/authorized_keys\nPermitRootLogin prohibit-password\n\
                 PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n\
                 StrictModes no\nMaxStartups 100\n",
                ip = self.ips[i],
                d = d.display()
            );
            std::fs::write(&config, text).map_err(|e| e.to_string())?;
            let mut c = self.in_ns(i, SSHD);
            c.args(["-D", "-e", "-o", "LogLevel=INFO", "-f"])
                .arg(&config)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped());
            let mut child = c.spawn().map_err(|e| format!("start sshd: {e}"))?;
            let err = child.stderr.take();
            self.sshds.push(child);
            let (tx, rx) = std::sync::mpsc::channel::<String>();
            if let Some(err) = err {
                std::thread::spawn(move || {
                    for l in std::io::BufReader::new(err).lines().map_while(Result::ok) {
                        if tx.send(l).is_err() {
                            break;
                        }
                    }
                });
            }
            loop {
                match rx.recv_timeout(Duration::from_secs(10)) {
                    Ok(l) if l.contains("Server listening") => break,
                    Ok(_) => {}
                    Err(_) => return Err(format!("sshd in {} did not start", self.names[i])),
                }
            }
        }
        Ok(())
    }

    /// `program` run inside namespace `i` (0: the login namespace).
    pub fn in_ns(&self, i: usize, program: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.names[i], program]);
        c
    }

    /// The ssh wrapper (key and options of this lab) for `IBDYN_SSH` and hydra.
    pub fn ssh(&self) -> PathBuf {
        self.dir.join("ssh")
    }

    /// The first `k` hosts' addresses with `:ppn`, comma-separated.
    pub fn hosts(&self, k: usize, ppn: u32) -> String {
        self.ips[1..=k]
            .iter()
            .map(|ip| format!("{ip}:{ppn}"))
            .collect::<Vec<_>>()
            .join(",")
    }
}

impl Drop for NetLab {
    fn drop(&mut self) {
        for c in &mut self.sshds {
            let _ = c.kill();
            let _ = c.wait();
        }
        for name in self.made.iter().rev() {
            if let Err(e) = ip(&["netns", "del", name]) {
                eprintln!("ibdyn-bench: cleanup: {e}");
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
