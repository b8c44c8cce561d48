//! The C programs of tests/abi/ built with MPICH 5's `mpicc_abi` (the `mpich` wheel in
//! target/abi-venv, from scripts/abi-deps.sh) run unchanged on ibdyn (`ibdyn run --abi`) and
//! on MPICH's own library (`mpiexec` of the wheel): the same binary passes on both, which
//! shows both that ibdyn is a standard-ABI library and that the tests are right.
//! (errors.c, fatal.c and spawn_fail.c check ibdyn's own answers to bad input, which the
//! standard leaves to the implementation, so they run on ibdyn only: c_programs.rs.)

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const PROGRAMS: &[(&str, u32)] = &[
    ("hello", 2),
    ("ring", 3),
    ("allreduce", 4),
    ("p2p_modes", 3),
    ("datatypes", 3),
    ("coll_all", 4),
    ("comm_mgmt", 3),
    ("intercomm", 4),
    ("spawn_merge", 2),
    ("spawn_multiple", 2),
    ("join", 2),
    ("mprobe_order", 2),
    ("truncate_status", 2),
    ("nbc_order", 3),
    ("nbc_progress", 4),
    ("overtake", 2),
    ("long_double_ops", 3),
    ("errhandler_user", 2),
    ("large_inter", 4),
    ("pack", 2),
    ("attr_mpi1", 2),
    ("grequest", 2),
    ("threads", 3),
    ("sessions", 2),
    ("partitioned", 2),
    ("rma", 3),
    ("io", 3),
    ("tool", 2),
    ("inter_nonblocking", 1),
    ("dims", 1),
    ("keyval_free", 2),
    ("userop_layout", 4),
    ("complex_ops", 3),
    ("set_elements", 1),
    ("init_badargs", 4),
    ("pair_types", 2),
    ("coll_ignored", 4),
];

fn venv() -> Option<PathBuf> {
    let v = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/abi-venv");
    v.join("bin/mpicc_abi").is_file().then_some(v)
}

fn profile_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_ibdyn-cc"))
        .parent()
        .expect("target/<profile>")
        .to_path_buf()
}

fn bounded(cmd: &mut Command) -> Output {
    cmd.output().expect("run a job")
}

fn describe(o: &Output) -> String {
    format!(
        "{}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn mpicc_abi_binaries_pass_on_ibdyn_and_on_mpich() {
    let Some(venv) = venv() else {
        eprintln!("\n*** SKIPPED: MPICH 5's mpicc_abi not found in target/abi-venv; run `bash scripts/abi-deps.sh` ***\n");
        return;
    };
    let ibdyn = profile_dir().join("ibdyn");
    assert!(
        ibdyn.is_file(),
        "build the ibdyn binary first (cargo build --workspace)"
    );
    // The library this test run built lives in deps/ (cargo refreshes the copy beside ibdyn
    // on `cargo build` only): `ibdyn run --abi` takes it from IBDYN_ABI_LIBDIR.
    let deps = profile_dir().join("deps");
    let libdir = if deps.join("libmpi_abi.so").is_file() {
        deps
    } else {
        profile_dir()
    };
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/abi");
    let scratch =
        Scratch(std::env::temp_dir().join(format!("ibdyn-abi-mpich-{}", std::process::id())));
    let dir = &scratch.0;
    std::fs::create_dir_all(dir.join("tmp")).expect("scratch dir");
    for &(name, n) in PROGRAMS {
        let exe = dir.join(name);
        let out = bounded(
            Command::new(venv.join("bin/mpicc_abi"))
                .args(["-Wall", "-Werror", "-Wno-unused-variable", "-I"])
                .arg(&src)
                .arg("-o")
                .arg(&exe)
                .arg(src.join(format!("{name}.c"))),
        );
        assert!(
            out.status.success(),
            "mpicc_abi {name}.c: {}",
            describe(&out)
        );
        let on_ibdyn = bounded(
            Command::new("timeout")
                .args(["--kill-after=10", "180"])
                .arg(&ibdyn)
                .args(["run", "--abi", "-n", &n.to_string()])
                .arg(&exe)
                .env("IBDYN_ABI_LIBDIR", &libdir)
                .env("TMPDIR", dir.join("tmp")),
        );
        assert!(
            on_ibdyn.status.success(),
            "{name} (mpicc_abi) on ibdyn: {}",
            describe(&on_ibdyn)
        );
        let on_mpich = bounded(
            Command::new("timeout")
                .args(["--kill-after=10", "180"])
                .arg(venv.join("bin/mpiexec"))
                .args(["-n", &n.to_string()])
                .arg(&exe)
                .current_dir(dir)
                // cargo puts target/<profile>/deps (ibdyn's library) on the test's
                // LD_LIBRARY_PATH, which would win over the binary's RUNPATH to MPICH.
                .env_remove("LD_LIBRARY_PATH")
                .env("TMPDIR", dir.join("tmp")),
        );
        assert!(
            on_mpich.status.success(),
            "{name} (mpicc_abi) on MPICH 5: {}",
            describe(&on_mpich)
        );
        assert!(
            !String::from_utf8_lossy(&on_mpich.stderr).contains("ibdyn"),
            "{name} under mpiexec loaded ibdyn's library: {}",
            describe(&on_mpich)
        );
        println!("{name}: passes on ibdyn and on MPICH 5");
    }
}

/// The test's directory, removed when the test ends, also when a check fails.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
