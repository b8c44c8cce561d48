//! The same client under MPICH's launcher (`mpiexec.hydra`, Debian package `mpich`):
//! PMI-1 over PMI_FD, extensions falling back to PMI-1 calls.

mod common;

use common::*;
use std::time::Duration;

#[test]
fn pmi_check_runs_unchanged_under_mpiexec_hydra() {
    let Some(hydra) = mpiexec_hydra() else {
        eprintln!("SKIPPED: mpiexec.hydra is not installed (apt-get install mpich)");
        return;
    };
    let mut cmd = std::process::Command::new(hydra);
    cmd.args(["-n", "4"])
        .arg(example_bin("pmi_check"))
        .arg("hydra");
    let out = run_bounded(cmd, None, Duration::from_secs(120));
    assert_all_ok(&out, 4);
}

#[test]
fn allgather_carries_values_of_any_size_under_mpiexec_hydra() {
    let Some(hydra) = mpiexec_hydra() else {
        eprintln!("SKIPPED: mpiexec.hydra is not installed (apt-get install mpich)");
        return;
    };
    let mut cmd = std::process::Command::new(hydra);
    cmd.args(["-n", "3"])
        .arg(example_bin("pmi_check"))
        .arg("big-allgather");
    let out = run_bounded(cmd, None, Duration::from_secs(120));
    assert_all_ok(&out, 3);
}
