//! CMA between real processes: read and write a child's memory, and the errors that tell
//! "refused" from "peer gone".

mod common;

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use common::{fork_child, reap};
use ibdyn_shm::cma::{self, CmaStatus};
use ibdyn_shm::ShmError;

const LIMIT: Duration = Duration::from_secs(30);

fn pattern(len: usize, salt: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31) ^ salt)
        .collect()
}

#[test]
fn reads_and_writes_a_peer_buffer() {
    const LEN: usize = (4 << 20) + 12345;
    let mut buf = vec![0u8; LEN];
    let addr = buf.as_mut_ptr() as usize;
    let (mut ours, mut theirs) = UnixStream::pair().unwrap();
    ours.set_read_timeout(Some(LIMIT)).unwrap();
    let child = fork_child(move || {
        theirs.set_read_timeout(Some(LIMIT)).unwrap();
        buf.copy_from_slice(&pattern(LEN, 0x11)); // the child's copy differs from the parent's
        let mut go = [0u8; 1];
        if theirs.write_all(b"r").is_err() || theirs.read_exact(&mut go).is_err() {
            return 2;
        }
        if buf == pattern(LEN, 0x22) {
            0
        } else {
            1
        }
    });
    let mut ready = [0u8; 1];
    ours.read_exact(&mut ready).unwrap();
    let mut got = vec![0u8; LEN];
    cma::read(child, addr, &mut got).unwrap();
    assert!(got == pattern(LEN, 0x11), "read the child's bytes");
    cma::write(child, addr, &pattern(LEN, 0x22)).unwrap();
    ours.write_all(b"c").unwrap();
    assert_eq!(reap(child, LIMIT), Some(0), "child saw the written bytes");
}

#[test]
fn a_dead_peer_is_reported_as_gone() {
    let child = fork_child(|| 0);
    assert_eq!(reap(child, LIMIT), Some(0));
    let mut b = [0u8; 16];
    match cma::read(child, 0x1000, &mut b) {
        Err(ShmError::PeerGone { pid }) => assert_eq!(pid, child),
        other => panic!("expected PeerGone, got {other:?}"),
    }
}

#[test]
fn a_bad_remote_address_is_an_error() {
    let me = std::process::id() as i32;
    let mut b = [0u8; 16];
    assert!(matches!(
        cma::read(me, 8, &mut b),
        Err(ShmError::BadAddress { .. })
    ));
    assert!(matches!(
        cma::read(me, usize::MAX - 4, &mut b),
        Err(ShmError::BadAddress { .. })
    ));
    assert!(
        cma::read(me, 0, &mut []).is_ok(),
        "empty transfers need no access"
    );
}

#[test]
fn a_refused_peer_is_reported_as_refused() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: needs root to drop to another user in a child");
        return;
    }
    let secret = pattern(64, 0x33);
    let addr = secret.as_ptr() as usize;
    let parent = std::process::id() as i32;
    let child = fork_child(move || {
        // SAFETY: plain credential change in the child.
        if unsafe { libc::setresuid(65534, 65534, 65534) } != 0 {
            return 2;
        }
        let mut b = [0u8; 64];
        match cma::read(parent, addr, &mut b) {
            Err(ShmError::CmaRefused { pid, .. }) if pid == parent => 0,
            _ => 1,
        }
    });
    assert_eq!(
        reap(child, LIMIT),
        Some(0),
        "an unprivileged peer gets CmaRefused"
    );
    drop(secret);
}

#[test]
fn probe_and_allow_peers_agree_with_yama() {
    let scope = cma::ptrace_scope();
    match scope {
        None | Some(0) | Some(1) => cma::allow_peers().unwrap(),
        Some(_) => assert!(matches!(cma::allow_peers(), Err(ShmError::CmaSetup(_)))),
    }
    let status = cma::probe();
    assert!(!status.to_string().is_empty());
    if matches!(scope, None | Some(0) | Some(1)) {
        // Either permitted, or refused for a reason outside Yama (a container policy).
        if let CmaStatus::Refused(why) = &status {
            assert!(
                !why.contains("Yama"),
                "allow_peers should have lifted Yama: {why}"
            );
        }
    }
}
