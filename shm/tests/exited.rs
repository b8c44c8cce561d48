//! `remove_segments_of_exited`: what processes that died with their node daemon left in
//! /dev/shm goes; what live processes own stays. Alone in its test binary, since it sweeps
//! the whole directory.

use ibdyn_shm::remove_segments_of_exited;
use std::path::Path;

#[test]
fn entries_of_exited_processes_go_and_those_of_live_ones_stay() {
    // SAFETY: the child only exits.
    let child = unsafe { libc::fork() };
    assert!(child >= 0);
    if child == 0 {
        // SAFETY: ends the child at once.
        unsafe { libc::_exit(0) };
    }
    let mut st = 0;
    // SAFETY: reaping our own child.
    unsafe { libc::waitpid(child, &mut st, 0) };
    let me = std::process::id();
    let dead = [format!("ibdyn-{child}"), format!("ibdyn-{child}-coll-1-2")];
    let live = format!("ibdyn-{me}-exited-test");
    for name in dead.iter().chain([&live]) {
        std::fs::write(Path::new("/dev/shm").join(name), b"x").unwrap();
    }
    assert!(remove_segments_of_exited().unwrap() >= 2);
    for name in &dead {
        assert!(!Path::new("/dev/shm").join(name).exists(), "{name} left");
    }
    assert!(Path::new("/dev/shm").join(&live).exists(), "{live} removed");
    std::fs::remove_file(Path::new("/dev/shm").join(&live)).unwrap();
}
