//! The node daemons' sweep of /dev/shm, alone in its test binary: every node daemon that ends
//! removes the objects of this user's exited processes, so one ending in a test running beside
//! this one would remove the object this test checks is kept with the sweep off. Cargo runs
//! test binaries one after the other.

mod common;

use common::*;
use std::time::Duration;

/// A node daemon killed on another host leaves its ranks' objects in that host's /dev/shm,
/// beyond the reach of the launcher's sweep; the next node daemon that ends on the host
/// removes them (here: an object named for an exited process), unless `IBDYN_SHM_SWEEP=0`.
#[test]
fn objects_of_exited_processes_go_when_a_node_daemon_ends() {
    let s = Scratch::new("shm-sweep");
    // Kept a zombie until the end, so that its pid is not reused meanwhile.
    let mut exited = std::process::Command::new("true").spawn().unwrap();
    let pid = exited.id();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        if stat
            .rsplit(')')
            .next()
            .unwrap()
            .trim_start()
            .starts_with('Z')
        {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "true did not exit");
        std::thread::sleep(Duration::from_millis(5));
    }
    let seg = std::path::PathBuf::from(format!("/dev/shm/ibdyn-{pid}-left-by-a-lost-daemon"));
    std::fs::write(&seg, b"x").unwrap();
    let mut kept = s.ibdyn(&["run", "-n", "1", "--nodes", "2", "true"]);
    kept.env("IBDYN_SHM_SWEEP", "off");
    let out_kept = run_bounded(kept, None, Duration::from_secs(60));
    let left_when_off = seg.exists();
    let out = s.run(&["run", "-n", "1", "--nodes", "2", "true"], None);
    let left = seg.exists();
    let _ = std::fs::remove_file(&seg);
    exited.wait().unwrap();
    assert!(out_kept.status.success(), "{out_kept:?}");
    assert!(
        left_when_off,
        "{} removed with IBDYN_SHM_SWEEP=off",
        seg.display()
    );
    assert!(out.status.success(), "{out:?}");
    assert!(!left, "{} left", seg.display());
    s.assert_clean();
}
