//! mpi4py's own test suite (the `test/` directory of its sdist, fetched into
//! target/mpi4py-tests by `bash scripts/abi-deps.sh`), run unchanged under `ibdyn run` on 1, 2
//! and 3 ranks: programs written against other MPIs. `MODULES` lists the modules that pass
//! (README, "Python (mpi4py)", says which others do not yet and why).

use std::path::{Path, PathBuf};
use std::process::Command;

const MODULES: &[&str] = &[
    "test_address",
    "test_buffer",
    "test_attributes",
    "test_cco_buf",
    "test_cco_buf_inter",
    "test_cco_ngh_buf",
    "test_cco_ngh_obj",
    "test_cco_nb_buf",
    "test_cco_nb_vec",
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
    "test_errorcode",
    "test_exceptions",
    "test_group",
    "test_handle",
    "test_info",
    "test_mpiabi",
    "test_mpiapi",
    "test_mpimem",
    "test_msgzero",
    "test_op",
    "test_p2p_buf",
    "test_p2p_buf_matched",
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
    "test_threads",
    "test_toplevel",
    "test_util_pkl5",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn mpi4pys_own_test_modules_pass_under_ibdyn_run() {
    let py = root().join("target/mpi4py-venv/bin/python");
    let tests = root().join("target/mpi4py-tests");
    let built = py.is_file()
        && Command::new(&py)
            .args(["-c", "import mpi4py"])
            .status()
            .is_ok_and(|s| s.success());
    if !built || !tests.join("main.py").is_file() {
        eprintln!(
            "\n*** SKIPPED: mpi4py or its test suite is missing (target/mpi4py-venv, \
             target/mpi4py-tests); run `bash scripts/abi-deps.sh` ***\n"
        );
        return;
    }
    let profile = PathBuf::from(env!("CARGO_BIN_EXE_ibdyn-cc"))
        .parent()
        .expect("target/<profile>")
        .to_path_buf();
    let ibdyn = profile.join("ibdyn");
    assert!(
        ibdyn.is_file(),
        "build the ibdyn binary first (cargo build --workspace)"
    );
    // The library this test run built (see mpi4py.rs).
    let deps = profile.join("deps");
    let libdir = if deps.join("libmpi_abi.so").is_file() {
        deps
    } else {
        profile
    };
    let tmp = std::env::temp_dir().join(format!("ibdyn-mpi4py-up-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).expect("scratch dir");
    for n in [1, 2, 3] {
        let out = Command::new("timeout")
            .args(["--kill-after=10", "600"])
            .arg(&ibdyn)
            .args(["run", "--abi", "-n", &n.to_string()])
            .arg(&py)
            .arg("main.py")
            .arg("-q")
            .args(MODULES)
            .current_dir(&tests)
            .env("IBDYN_ABI_LIBDIR", &libdir)
            .env("TMPDIR", &tmp)
            .output()
            .expect("run ibdyn");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let oks = stderr.lines().filter(|l| l.starts_with("OK")).count();
        assert!(
            out.status.success() && oks == n,
            "mpi4py's test modules on {n} ranks ({}; {oks} of {n} ranks said OK):\n{stderr}",
            out.status
        );
    }
    let _ = std::fs::remove_dir_all(&tmp);
}
