//! Jobs across hosts emulated by network namespaces (tests/common/netns.rs: one namespace per
//! host with its own address, joined by a bridge in a namespace of its own). The launcher
//! runs inside host 0 and starts each host's daemon with `--launcher-exec 'ip netns exec
//! {host}'`: ranks report the address of the host they were placed on, and the world's
//! allreduce and ring cross the hosts over the fabric (a rank bound to loopback could not
//! reach another namespace). Spawn onto a named host, connect/accept between hosts, a host
//! that cannot be reached or refuses (ssh's own words in the error), and the interface pinned
//! with `--iface`. Skipped loudly where namespaces cannot be made (not root).

mod common;

use common::dvm::show;
use common::netns::{skip, NetLab, IFACE};
use common::*;
use std::process::Output;
use std::time::{Duration, Instant};

const EXEC: &str = "ip netns exec {host}";

fn lab(test: &str, n: usize) -> Option<NetLab> {
    match NetLab::new(n) {
        Ok(l) => Some(l),
        Err(why) => {
            skip(test, &why);
            None
        }
    }
}

/// `ibdyn ARGS` run inside host `at` of the lab, bounded; the scratch dir is checked clean.
fn ibdyn_in(lab: &NetLab, s: &Scratch, at: usize, args: &[&str]) -> Output {
    let mut c = lab.command_in(at, "timeout");
    c.args(["--signal=TERM", "--kill-after=10", "120"])
        .arg(ibdyn_bin())
        .args(args)
        .env("TMPDIR", &s.dir)
        .env_remove("IBDYN_LOG")
        .env_remove("IBDYN_IFACE");
    let out = run_bounded(c, None, Duration::from_secs(150));
    s.assert_clean();
    out
}

/// The `addrs` and `fabric` a `hosts_check` line reports.
fn reported(line: &str) -> (String, String) {
    let addrs = line
        .split(" addrs ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .unwrap_or_default();
    let fabric = line
        .split(" fabric ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .unwrap_or_default();
    (addrs.to_string(), fabric.to_string())
}

#[test]
fn a_job_spans_namespace_hosts_placed_by_slots() {
    let Some(lab) = lab("a_job_spans_namespace_hosts_placed_by_slots", 3) else {
        return;
    };
    let s = Scratch::new("hosts-world");
    let prog = example_bin("hosts_check");
    // Block by slots: rank 0 on host 1, ranks 1-2 on host 2, rank 3 on host 0.
    let hosts = format!(
        "{},{}:2,{}",
        lab.hosts[1].name, lab.hosts[2].name, lab.hosts[0].name
    );
    let out = ibdyn_in(
        &lab,
        &s,
        0,
        &[
            "run",
            "-n",
            "4",
            "--hosts",
            &hosts,
            "--launcher-exec",
            EXEC,
            "--tag-output",
            prog.to_str().unwrap(),
            "world",
        ],
    );
    assert!(out.status.success(), "{}", show(&out));
    let expect = [1, 2, 2, 0];
    for (rank, &h) in expect.iter().enumerate() {
        let line = lines_with(&out, &format!("[{rank}] hosts_check: rank {rank} "));
        assert_eq!(line.len(), 1, "rank {rank}: {}", show(&out));
        let (addrs, fabric) = reported(&line[0]);
        assert_eq!(addrs, lab.hosts[h].ip, "rank {rank}: {}", show(&out));
        assert_eq!(fabric, lab.hosts[h].ip, "rank {rank}: {}", show(&out));
    }
    assert_eq!(
        lines_with(&out, "[0] hosts_check: world ok").len(),
        1,
        "{}",
        show(&out)
    );

    // Round-robin over the same hosts.
    let out = ibdyn_in(
        &lab,
        &s,
        0,
        &[
            "run",
            "-n",
            "4",
            "--hosts",
            &hosts,
            "--map-by",
            "node",
            "--launcher-exec",
            EXEC,
            "--tag-output",
            prog.to_str().unwrap(),
            "world",
        ],
    );
    assert!(out.status.success(), "{}", show(&out));
    for (rank, h) in [1usize, 2, 0, 2].into_iter().enumerate() {
        let line = lines_with(&out, &format!("[{rank}] hosts_check: rank {rank} "));
        assert_eq!(reported(&line[0]).0, lab.hosts[h].ip, "{}", show(&out));
    }
}

/// `ibdyn run -n 1 --hosts (all) OPTIONS hosts_check spawn HOST1 ARGS` inside host 0.
fn spawn_onto_host_1(lab: &NetLab, s: &Scratch, options: &[&str], args: &[&str]) -> Output {
    let hosts = lab.host_list(&[]);
    let prog = example_bin("hosts_check");
    let head = ["run", "-n", "1", "--hosts", &hosts, "--launcher-exec", EXEC];
    let tail = [prog.to_str().unwrap(), "spawn", &lab.hosts[1].name];
    ibdyn_in(lab, s, 0, &[&head[..], options, &tail, args].concat())
}

#[test]
fn spawn_onto_a_named_host_and_connect_accept_across_hosts() {
    let Some(lab) = lab("spawn_onto_a_named_host_and_connect_accept_across_hosts", 2) else {
        return;
    };
    let s = Scratch::new("hosts-spawn");
    let hosts = lab.host_list(&[]);
    let out = spawn_onto_host_1(&lab, &s, &["--iface", IFACE, "--tag-output"], &[]);
    assert!(out.status.success(), "{}", show(&out));
    let child: Vec<String> = text(&out.stdout)
        .lines()
        .filter(|l| l.contains("hosts_check: child "))
        .map(str::to_string)
        .collect();
    assert_eq!(child.len(), 1, "{}", show(&out));
    assert_eq!(
        reported(&child[0]).0,
        lab.hosts[1].ip,
        "the child is not on host 1: {}",
        show(&out)
    );
    assert!(
        text(&out.stdout).contains("hosts_check: spawn ok"),
        "{}",
        show(&out)
    );

    // Rank 0 (host 0) accepts, rank 1 (host 1) connects through the name service.
    let cs = example_bin("client_server");
    let out = ibdyn_in(
        &lab,
        &s,
        0,
        &[
            "run",
            "-n",
            "2",
            "--hosts",
            &hosts,
            "--launcher-exec",
            EXEC,
            cs.to_str().unwrap(),
            "pair",
            "hosts-test-service",
        ],
    );
    assert!(out.status.success(), "{}", show(&out));
    assert!(
        text(&out.stdout).contains("client_server: connected and answered"),
        "{}",
        show(&out)
    );
}

/// A copy learns its host's fabric address (`IBDYN_FABRIC_IP`, set per rank by the host's
/// daemon) only with its assignment: the sockets it bound ahead are bound again there, so the
/// parent on the other host reaches it (merge and allreduce across the hosts).
#[test]
fn a_prestarted_copy_on_another_host_is_reached_at_that_hosts_address() {
    let Some(lab) = lab(
        "a_prestarted_copy_on_another_host_is_reached_at_that_hosts_address",
        2,
    ) else {
        return;
    };
    let s = Scratch::new("hosts-prestart");
    let out = spawn_onto_host_1(&lab, &s, &[], &["prestart"]);
    assert!(out.status.success(), "{}", show(&out));
    let stdout = text(&out.stdout);
    // The first child is started cold; the next are copies (exec'd while the template on
    // host 1 starts), until one forked from the template (the check stops there).
    let children: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.split("hosts_check: prestarted ").nth(1))
        .collect();
    let n = children.len();
    assert!(n >= 2 && children[0] == "0 forked 0", "{}", show(&out));
    assert!(
        children[1..n - 1].iter().all(|c| c.starts_with("1 ")) && children[n - 1] == "1 forked 1",
        "{}",
        show(&out)
    );
    for line in stdout
        .lines()
        .filter(|l| l.contains("hosts_check: child addrs"))
    {
        assert_eq!(reported(line).0, lab.hosts[1].ip, "{}", show(&out));
    }
    assert!(stdout.contains("hosts_check: spawn ok"), "{}", show(&out));
}

#[test]
fn a_host_that_cannot_be_reached_fails_the_job_naming_it() {
    let Some(lab) = lab("a_host_that_cannot_be_reached_fails_the_job_naming_it", 2) else {
        return;
    };
    let s = Scratch::new("hosts-unreachable");
    let hosts = format!("{},ibdyn-no-such-host", lab.hosts[1].name);
    let t = Instant::now();
    let out = ibdyn_in(
        &lab,
        &s,
        0,
        &[
            "run",
            "-n",
            "2",
            "--hosts",
            &hosts,
            "--launcher-exec",
            EXEC,
            "true",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let err = text(&out.stderr);
    assert!(
        err.contains("host ibdyn-no-such-host (launcher-exec)")
            && err.contains("Cannot open network namespace"),
        "{}",
        show(&out)
    );
    assert!(
        t.elapsed() < Duration::from_secs(20),
        "took {:?}",
        t.elapsed()
    );

    // ssh to a host whose port 22 nobody listens on: ssh's refusal is in the error.
    if which("ssh").is_none() {
        skip("ssh refusal part", "no ssh client installed");
        return;
    }
    let out = ibdyn_in(
        &lab,
        &s,
        0,
        &["run", "-n", "2", "--hosts", &lab.hosts[1].ip, "true"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("host {} (ssh)", lab.hosts[1].ip))
            && err.contains("Connection refused"),
        "{}",
        show(&out)
    );
}

pub fn which(program: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/sbin".into()])
        .map(|d| d.join(program))
        .find(|p| p.exists())
}

#[test]
fn a_dvm_on_namespace_hosts_runs_jobs_across_them() {
    let Some(lab) = lab("a_dvm_on_namespace_hosts_runs_jobs_across_them", 2) else {
        return;
    };
    let s = Scratch::new("hosts-dvm");
    let hosts = lab.host_list(&[]);
    let prog = example_bin("hosts_check");
    let ibdyn = ibdyn_bin();
    let script = format!(
        "{i} dvm start --hosts {hosts} --launcher-exec '{EXEC}' || exit 9; \
         {i} run --dvm -n 2 --tag-output {p} world; st=$?; {i} dvm stop; exit $st",
        i = ibdyn.display(),
        p = prog.display()
    );
    let out = ibdyn_in_sh(&lab, &s, &script);
    assert!(out.status.success(), "{}", show(&out));
    let mut seen: Vec<String> = (0..2)
        .map(|r| {
            let line = lines_with(&out, &format!("[{r}] hosts_check: rank {r} "));
            assert_eq!(line.len(), 1, "{}", show(&out));
            reported(&line[0]).0
        })
        .collect();
    seen.sort();
    let mut want = vec![lab.hosts[0].ip.clone(), lab.hosts[1].ip.clone()];
    want.sort();
    assert_eq!(seen, want, "one rank per host: {}", show(&out));
}

/// `sh -c SCRIPT` inside host 0, bounded; the scratch dir is checked clean.
fn ibdyn_in_sh(lab: &NetLab, s: &Scratch, script: &str) -> Output {
    let mut c = lab.command_in(0, "timeout");
    c.args([
        "--signal=TERM",
        "--kill-after=10",
        "120",
        "sh",
        "-c",
        script,
    ])
    .env("TMPDIR", &s.dir)
    .env_remove("IBDYN_LOG")
    .env_remove("IBDYN_IFACE");
    let out = run_bounded(c, None, Duration::from_secs(150));
    s.assert_clean();
    out
}
