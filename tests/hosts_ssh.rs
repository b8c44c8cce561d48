//! A job across namespace hosts started through real ssh: an sshd inside each emulated host
//! (its own host key, config and authorized key, made for the test in a temp dir), `ibdyn
//! run --hosts` with the default ssh launcher (`IBDYN_SSH` adds the test's key). Skipped
//! loudly where namespaces cannot be made or openssh-server is not installed
//! (scripts/deps.sh installs it).

mod common;

use common::dvm::show;
use common::netns::{skip, NetLab};
use common::*;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const SSHD: &str = "/usr/sbin/sshd";

/// One sshd inside a namespace host; killed on drop.
struct Sshd(Child);

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
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
        .ok_or_else(|| format!("ssh-keygen failed: {st}"))
}

/// Starts sshd in host `i` of the lab and waits (bounded) until it listens.
fn start_sshd(lab: &NetLab, i: usize, dir: &Path) -> Result<Sshd, String> {
    let host = &lab.hosts[i];
    let config = dir.join(format!("sshd_config.{i}"));
    let text = format!(
        "Port 22\nListenAddress {ip}\nHostKey {d}/host_key\nPidFile none\n\
         AuthorizedKeysFile {d}/authorized_keys\nPermitRootLogin prohibit-password\n\
         PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n\
         StrictModes no\nLogLevel ERROR\n",
        ip = host.ip,
        d = dir.display()
    );
    std::fs::write(&config, text).map_err(|e| e.to_string())?;
    // sshd insists on its privilege-separation directory.
    let _ = std::fs::create_dir_all("/run/sshd");
    let mut c = lab.command_in(i, SSHD);
    c.arg("-D")
        .arg("-e")
        .arg("-o")
        .arg("LogLevel=INFO")
        .arg("-f")
        .arg(&config)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = c.spawn().map_err(|e| format!("start sshd: {e}"))?;
    let err = child.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(err).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let sshd = Sshd(child);
    let mut said = Vec::new();
    loop {
        match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(l) if l.contains("Server listening") => return Ok(sshd),
            Ok(l) => said.push(l),
            Err(_) => return Err(format!("sshd did not start: {}", said.join(" / "))),
        }
    }
}

#[test]
fn a_job_spans_namespace_hosts_through_real_ssh() {
    let test = "a_job_spans_namespace_hosts_through_real_ssh";
    if !Path::new(SSHD).exists() {
        skip(
            test,
            "openssh-server is not installed (scripts/deps.sh installs it)",
        );
        return;
    }
    let lab = match NetLab::new(3) {
        Ok(l) => l,
        Err(why) => return skip(test, &why),
    };
    let s = Scratch::new("hosts-ssh");
    let keys = Scratch::new("hosts-ssh-keys");
    let dir: PathBuf = keys.dir.clone();
    keygen(&dir.join("host_key")).expect("host key");
    keygen(&dir.join("client_key")).expect("client key");
    std::fs::copy(dir.join("client_key.pub"), dir.join("authorized_keys")).expect("authorize");
    let mut sshds = Vec::new();
    for i in 1..3 {
        match start_sshd(&lab, i, &dir) {
            Ok(d) => sshds.push(d),
            Err(why) => return skip(test, &why),
        }
    }
    let ssh = format!(
        "ssh -x -o BatchMode=yes -F /dev/null -i {} -o StrictHostKeyChecking=no \
         -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR",
        dir.join("client_key").display()
    );
    let hosts = format!("{},{}:2", lab.hosts[1].ip, lab.hosts[2].ip);
    let prog = example_bin("hosts_check");
    let mut c = lab.command_in(0, "timeout");
    c.args(["--signal=TERM", "--kill-after=10", "120"])
        .arg(ibdyn_bin())
        .args(["run", "-n", "3", "--hosts", &hosts, "--tag-output"])
        .arg(&prog)
        .arg("world")
        .env("TMPDIR", &s.dir)
        .env("IBDYN_SSH", &ssh)
        .env_remove("IBDYN_LOG")
        .env_remove("IBDYN_IFACE");
    let out = run_bounded(c, None, Duration::from_secs(150));
    assert!(out.status.success(), "{}", show(&out));
    for (rank, h) in [1usize, 2, 2].into_iter().enumerate() {
        let line = lines_with(&out, &format!("[{rank}] hosts_check: rank {rank} "));
        assert_eq!(line.len(), 1, "{}", show(&out));
        assert!(
            line[0].contains(&format!(
                " addrs {} fabric {}",
                lab.hosts[h].ip, lab.hosts[h].ip
            )),
            "rank {rank} not on host {h}: {}",
            show(&out)
        );
    }
    assert!(
        text(&out.stdout).contains("hosts_check: world ok"),
        "{}",
        show(&out)
    );
    s.assert_clean();

    // ssh passes no environment and starts in the home directory: the ranks still run with
    // the launcher's environment (less what describes its host) in its working directory.
    let mut c = lab.command_in(0, "timeout");
    c.args(["--signal=TERM", "--kill-after=10", "120"])
        .arg(ibdyn_bin())
        .args(["run", "-n", "2", "--hosts", &hosts, "--map-by", "node"])
        .args([
            "sh",
            "-c",
            "echo \"$IBDYN_RANK $FWD_CHECK $(pwd) ${SSH_CONNECTION%% *}\"",
        ])
        .current_dir(&dir)
        .env("TMPDIR", &s.dir)
        .env("IBDYN_SSH", &ssh)
        .env("FWD_CHECK", "forwarded")
        .env("SSH_CONNECTION", "of the launcher")
        .env_remove("IBDYN_LOG")
        .env_remove("IBDYN_IFACE");
    let out = run_bounded(c, None, Duration::from_secs(150));
    assert!(out.status.success(), "{}", show(&out));
    let mut lines: Vec<String> = text(&out.stdout).lines().map(String::from).collect();
    lines.sort();
    let (here, from) = (dir.display(), &lab.hosts[0].ip);
    assert_eq!(
        lines,
        [
            format!("0 forwarded {here} {from}"),
            format!("1 forwarded {here} {from}")
        ],
        "{}",
        show(&out)
    );
    s.assert_clean();
    drop(sshds);
}
