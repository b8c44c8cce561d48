//! mpi4py built from its PyPI source against ibdyn (`MPI4PY_BUILD_MPICC=ibdyn-cc`, into
//! target/mpi4py-venv by `bash scripts/abi-deps.sh`): the Python suite of
//! tests/abi/python/suite.py (point-to-point of buffers and pickled objects, collectives,
//! spawn + merge + disconnect, connect/accept) passes under `ibdyn run`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn python() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/mpi4py-venv/bin/python");
    let has_mpi4py = p.is_file()
        && Command::new(&p)
            .args(["-c", "import mpi4py"])
            .status()
            .is_ok_and(|s| s.success());
    has_mpi4py.then_some(p)
}

#[test]
fn the_mpi4py_suite_passes_under_ibdyn_run() {
    let Some(py) = python() else {
        eprintln!(
            "\n*** SKIPPED: mpi4py is not built in target/mpi4py-venv; run \
             `bash scripts/abi-deps.sh` (builds it from source in under a minute) ***\n"
        );
        return;
    };
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
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/abi/python/suite.py");
    let tmp = std::env::temp_dir().join(format!("ibdyn-mpi4py-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).expect("scratch dir");
    for n in [2, 3] {
        let out = Command::new("timeout")
            .args(["--kill-after=10", "300"])
            .arg(&ibdyn)
            .args(["run", "--abi", "-n", &n.to_string()])
            .arg(&py)
            .arg(&suite)
            .env("IBDYN_ABI_LIBDIR", &libdir)
            .env("TMPDIR", &tmp)
            .output()
            .expect("run ibdyn");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains(&format!("mpi4py suite: ok on {n} ranks")),
            "the mpi4py suite on {n} ranks: {}\nstdout:\n{stdout}\nstderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&tmp);
}
