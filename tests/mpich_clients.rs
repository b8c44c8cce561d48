//! Other MPIs' processes under `ibdyn run`: programs built with Debian's MPICH 4.0
//! (`mpicc.mpich`, package `libmpich-dev`) and with MPICH 5 (the PyPI wheel in
//! target/abi-venv, `scripts/abi-deps.sh`) talk PMI-1 to ibdyn's node daemons over the socket
//! each rank inherits (`PMI_FD`) or by TCP (`PMI_PORT` + `PMI_ID`), and their
//! `MPI_Comm_spawn` goes through the daemons (`mcmd=spawn`). Debian's MPICH 4.0 is built
//! with ch4:ucx, which cannot spawn even under its own mpiexec: its spawn is not tested.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Which MPICH builds a program.
#[derive(Clone, Copy, Debug)]
enum Mpich {
    /// Debian's 4.0 (`mpicc.mpich`).
    Debian4,
    /// MPICH 5 from PyPI (`target/abi-venv/bin/mpicc`).
    Wheel5,
}

impl Mpich {
    fn compiler(self) -> Option<PathBuf> {
        match self {
            Mpich::Debian4 => {
                let path = std::env::var_os("PATH")?;
                std::env::split_paths(&path)
                    .map(|d| d.join("mpicc.mpich"))
                    .find(|p| p.exists())
            }
            Mpich::Wheel5 => {
                Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("target/abi-venv/bin/mpicc"))
                    .filter(|p| p.exists())
            }
        }
    }

    fn install_hint(self) -> &'static str {
        match self {
            Mpich::Debian4 => "apt-get install mpich libmpich-dev (scripts/deps.sh)",
            Mpich::Wheel5 => {
                "bash scripts/abi-deps.sh (pip install mpich==5.0.2 into target/abi-venv)"
            }
        }
    }
}

/// Builds tests/mpich/NAME.c with `mpich` into `dir`; None (after a loud SKIPPED line) when
/// that MPICH is not installed.
fn build(mpich: Mpich, name: &str, dir: &Path, test: &str) -> Option<PathBuf> {
    let skip = |why: String| {
        eprintln!(
            "\n*** SKIPPED {test}: {why}; install it with: {} ***\n",
            mpich.install_hint()
        );
        None
    };
    let Some(cc) = mpich.compiler() else {
        return skip(format!("no compiler for {mpich:?}"));
    };
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/mpich/{name}.c"));
    let exe = dir.join(format!("{name}-{mpich:?}"));
    let out = Command::new(&cc)
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .output()
        .expect("run the MPICH compiler");
    if !out.status.success() {
        let err = text(&out.stderr);
        if err.contains("mpi.h") {
            return skip(format!("{} has no mpi.h", cc.display()));
        }
        panic!("{} failed to build {name}.c:\n{err}", cc.display());
    }
    Some(exe)
}

fn run_job(s: &Scratch, args: &[&str]) -> std::process::Output {
    s.run(args, None)
}

fn hello_allreduce(mpich: Mpich, n: u32, nodes: u32, test: &str, by_port: bool) {
    let s = Scratch::new("mpich");
    let bins = Scratch::new("mpich-bin");
    let Some(exe) = build(mpich, "hello_allreduce", &bins.dir, test) else {
        return;
    };
    let (n_s, nodes_s) = (n.to_string(), nodes.to_string());
    let mut args = vec!["run", "-n", &n_s, "--nodes", &nodes_s];
    // Without PMI_FD, MPICH's client connects to PMI_PORT and names itself by PMI_ID.
    if by_port {
        args.extend(["env", "-u", "PMI_FD"]);
    }
    let exe_s = exe.to_string_lossy().into_owned();
    args.push(&exe_s);
    let out = run_job(&s, &args);
    assert_all_ok(&out, n);
}

#[test]
fn debian_mpich_hello_and_allreduce_on_one_node() {
    hello_allreduce(
        Mpich::Debian4,
        3,
        1,
        "debian_mpich_hello_and_allreduce_on_one_node",
        false,
    );
}

#[test]
fn debian_mpich_hello_and_allreduce_on_two_nodes() {
    hello_allreduce(
        Mpich::Debian4,
        4,
        2,
        "debian_mpich_hello_and_allreduce_on_two_nodes",
        false,
    );
}

#[test]
fn debian_mpich_connects_by_pmi_port_without_pmi_fd() {
    hello_allreduce(
        Mpich::Debian4,
        3,
        2,
        "debian_mpich_connects_by_pmi_port_without_pmi_fd",
        true,
    );
}

#[test]
fn mpich5_hello_and_allreduce_on_one_and_two_nodes() {
    let test = "mpich5_hello_and_allreduce_on_one_and_two_nodes";
    hello_allreduce(Mpich::Wheel5, 2, 1, test, false);
    hello_allreduce(Mpich::Wheel5, 3, 2, test, false);
    hello_allreduce(Mpich::Wheel5, 2, 2, test, true);
}

fn spawn_merge(parents: u32, children: u32, nodes: u32, test: &str) {
    let s = Scratch::new("mpich-spawn");
    let bins = Scratch::new("mpich-spawn-bin");
    let Some(exe) = build(Mpich::Wheel5, "spawn_merge", &bins.dir, test) else {
        return;
    };
    let (n_s, nodes_s, c_s) = (parents.to_string(), nodes.to_string(), children.to_string());
    let exe_s = exe.to_string_lossy().into_owned();
    let out = run_job(&s, &["run", "-n", &n_s, "--nodes", &nodes_s, &exe_s, &c_s]);
    assert_all_ok(&out, parents);
    let got = lines_with(&out, "CHILD OK ");
    let mut want: Vec<String> = (0..children).map(|r| format!("CHILD OK {r}")).collect();
    want.sort();
    assert_eq!(
        got,
        want,
        "children's lines\nstdout:\n{}\nstderr:\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

#[test]
fn mpich5_spawns_and_merges_through_ibdyn_daemons_on_one_node() {
    spawn_merge(
        2,
        2,
        1,
        "mpich5_spawns_and_merges_through_ibdyn_daemons_on_one_node",
    );
}

#[test]
fn mpich5_spawns_and_merges_through_ibdyn_daemons_on_two_nodes() {
    spawn_merge(
        2,
        3,
        2,
        "mpich5_spawns_and_merges_through_ibdyn_daemons_on_two_nodes",
    );
}

#[test]
fn mpich5_spawns_and_merges_under_the_dvm() {
    let test = "mpich5_spawns_and_merges_under_the_dvm";
    let s = Scratch::new("mpich-dvm");
    let bins = Scratch::new("mpich-dvm-bin");
    let Some(exe) = build(Mpich::Wheel5, "spawn_merge", &bins.dir, test) else {
        return;
    };
    let dvm = common::dvm::Dvm::start(&s, 2);
    let exe_s = exe.to_string_lossy().into_owned();
    let out = dvm.run(&["-n", "2", &exe_s, "2"]);
    assert_all_ok(&out, 2);
    assert_eq!(
        lines_with(&out, "CHILD OK "),
        vec!["CHILD OK 0".to_string(), "CHILD OK 1".to_string()],
        "{}",
        common::dvm::show(&out)
    );
}
