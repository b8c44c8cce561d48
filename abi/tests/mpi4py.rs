//! mpi4py built from its PyPI source against ibdyn (`MPI4PY_BUILD_MPICC=ibdyn-cc`, into
//! target/mpi4py-venv by `bash scripts/abi-deps.sh`), run under `ibdyn run`:
//! - the Python suite of tests/abi/python/suite.py (point-to-point of buffers and pickled
//!   objects, collectives, spawn + merge + disconnect, connect/accept) on 2 and 3 ranks;
//! - mpi4py's own test suite (the `test/` directory of its sdist, which the same script puts
//!   in target/mpi4py-tests) on 1, 2 and 3 ranks, and on 2 ranks over 2 nodes, unchanged:
//!   programs written against other MPIs. `MODULES` lists the modules that pass (README, "Python (mpi4py)", says which others
//!   do not yet and why).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const MODULES: &[&str] = &[
    "test_address",
    "test_attributes",
    "test_buffer",
    "test_cco_buf",
    "test_cco_buf_inter",
    "test_cco_nb_buf",
    "test_cco_nb_vec",
    "test_cco_ngh_buf",
    "test_cco_ngh_obj",
    "test_cco_obj",
    "test_cco_obj_inter",
    "test_cco_pr_buf",
    "test_cco_pr_ngh_buf",
    "test_cco_pr_vec",
    "test_cco_vec",
    "test_cco_vec_inter",
    "test_cffi",
    "test_comm",
    "test_comm_inter",
    "test_comm_topo",
    "test_ctypes",
    "test_doc",
    "test_dynproc",
    "test_environ",
    "test_errhandler",
    "test_errorcode",
    "test_exceptions",
    "test_file",
    "test_grequest",
    "test_group",
    "test_handle",
    "test_info",
    "test_io",
    "test_mpiabi",
    "test_mpiapi",
    "test_mpimem",
    "test_msgspec",
    "test_msgzero",
    "test_objmodel",
    "test_op",
    "test_p2p_buf",
    "test_p2p_buf_matched",
    "test_p2p_buf_part",
    "test_p2p_obj",
    "test_p2p_obj_matched",
    "test_package",
    "test_pickle",
    "test_request",
    "test_rma",
    "test_rma_nb",
    "test_session",
    "test_spawn",
    "test_status",
    "test_subclass",
    "test_threads",
    "test_toplevel",
    "test_util_pkl5",
    "test_util_pool",
    "test_util_sync",
    "test_win",
];

/// Modules that test one process's datatypes and packing only: run on 1 rank (on more they
/// repeat the same local work, test_datatype for 20 s a rank).
const LOCAL_MODULES: &[&str] = &["test_datatype", "test_pack", "test_util_dtlib"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn python() -> Option<PathBuf> {
    let p = root().join("target/mpi4py-venv/bin/python");
    let has_mpi4py = p.is_file()
        && Command::new(&p)
            .args(["-c", "import mpi4py"])
            .status()
            .is_ok_and(|s| s.success());
    has_mpi4py.then_some(p)
}

/// Runs `python ARGS` on `n` ranks under `ibdyn run --abi` in `dir`, with this test run's
/// library.
fn run(n: u32, py: &Path, args: &[&str], dir: &Path) -> Output {
    run_on(1, n, py, args, dir)
}

/// `run` on `nodes` emulated nodes.
fn run_on(nodes: u32, n: u32, py: &Path, args: &[&str], dir: &Path) -> Output {
    let profile = PathBuf::from(env!("CARGO_BIN_EXE_ibdyn-cc"))
        .parent()
        .expect("target/<profile>")
        .to_path_buf();
    let ibdyn = profile.join("ibdyn");
    assert!(
        ibdyn.is_file(),
        "build the ibdyn binary first (cargo build --workspace)"
    );
    // mpi4py was linked against ibdyn-cc's library directory; the library this test run
    // built is in deps/ (cargo refreshes the other copy on `cargo build` only).
    let deps = profile.join("deps");
    let libdir = if deps.join("libmpi_abi.so").is_file() {
        deps
    } else {
        profile
    };
    let tmp = std::env::temp_dir().join(format!("ibdyn-mpi4py-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&tmp).expect("scratch dir");
    let out = Command::new("timeout")
        .args(["--kill-after=10", "600"])
        .arg(&ibdyn)
        .args([
            "run",
            "--abi",
            "--nodes",
            &nodes.to_string(),
            "-n",
            &n.to_string(),
        ])
        .arg(py)
        .args(args)
        .current_dir(dir)
        .env("IBDYN_ABI_LIBDIR", &libdir)
        .env("TMPDIR", &tmp)
        .output()
        .expect("run ibdyn");
    let _ = std::fs::remove_dir_all(&tmp);
    out
}

fn skipped(what: &str) {
    eprintln!("\n*** SKIPPED: {what} is missing; run `bash scripts/abi-deps.sh` (builds mpi4py from source in under a minute) ***\n");
}

#[test]
fn the_mpi4py_suite_passes_under_ibdyn_run() {
    let Some(py) = python() else {
        return skipped("mpi4py (target/mpi4py-venv)");
    };
    let suite = root().join("tests/abi/python/suite.py");
    for n in [2, 3] {
        let out = run(n, &py, &[suite.to_str().expect("utf-8 path")], &root());
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains(&format!("mpi4py suite: ok on {n} ranks")),
            "the mpi4py suite on {n} ranks: {}\nstdout:\n{stdout}\nstderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A Python master spawning with `ibdyn_prestart`: after the first child, copies; once the
/// template interpreter is ready, forked ones. Each child's line printed before `import MPI`
/// shows once.
#[test]
fn a_python_master_gets_forked_copies_of_its_children() {
    let Some(py) = python() else {
        return skipped("mpi4py (target/mpi4py-venv)");
    };
    let script = root().join("tests/abi/python/prestart.py");
    let out = run(1, &py, &[script.to_str().expect("utf-8 path")], &root());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let children: usize = stdout
        .lines()
        .find_map(|l| l.strip_prefix("prestart.py: ok, "))
        .and_then(|l| l.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| {
            panic!(
                "{}\nstdout:\n{stdout}\nstderr:\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            )
        });
    assert!(out.status.success(), "{}", out.status);
    assert_eq!(
        stdout.matches("prestart.py: child before MPI").count(),
        children,
        "{stdout}"
    );
}

#[test]
fn mpi4pys_own_test_modules_pass_under_ibdyn_run() {
    let tests = root().join("target/mpi4py-tests");
    let Some(py) = python().filter(|_| tests.join("main.py").is_file()) else {
        return skipped("mpi4py or its test suite (target/mpi4py-venv, target/mpi4py-tests)");
    };
    // The last: 2 ranks on 2 nodes (one-sided communication, passive target too, across
    // nodes).
    for (nodes, n) in [(1, 1), (1, 2), (1, 3), (2, 2)] {
        let local = if n == 1 { LOCAL_MODULES } else { &[] };
        let args: Vec<&str> = ["main.py", "-q"]
            .into_iter()
            .chain(MODULES.iter().chain(local).copied())
            .collect();
        let out = run_on(nodes, n, &py, &args, &tests);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let oks = stderr.lines().filter(|l| l.starts_with("OK")).count();
        assert!(
            out.status.success() && oks == n as usize,
            "mpi4py's test modules on {n} ranks, {nodes} node(s) ({}; {oks} of {n} ranks said OK):\n{stderr}",
            out.status
        );
    }
}
