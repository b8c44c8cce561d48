//! One process, both ends: delivery, gather, full ring, sizes, naming, cleanup, corruption.

mod common;

use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;

use common::{my_pid, shm_exists};
use ibdyn_shm::{
    remove_segments_of, remove_segments_of_any, RecvQueue, SendQueue, ShmConfig, ShmError,
};

const SMALL: ShmConfig = ShmConfig {
    cell_payload: 64,
    cells: 8,
};

fn recv_vec(q: &RecvQueue) -> Option<Vec<u8>> {
    q.try_recv(|b| b.to_vec())
}

#[test]
fn gathers_parts_into_one_packet() {
    let rx = RecvQueue::create_with_suffix("gather", &ShmConfig::DEFAULT).unwrap();
    assert_eq!(rx.name(), format!("ibdyn-{}-gather", my_pid()));
    let tx = SendQueue::open(rx.name()).unwrap();
    assert_eq!(tx.max_payload(), rx.max_payload());
    assert_eq!(tx.receiver_pid(), my_pid());
    assert_eq!(recv_vec(&rx), None);
    assert!(tx.try_send(&[b"hello ", b"", b"world"]).unwrap());
    assert!(tx.try_send(&[]).unwrap());
    assert_eq!(recv_vec(&rx).as_deref(), Some(&b"hello world"[..]));
    assert_eq!(recv_vec(&rx).as_deref(), Some(&b""[..]));
    assert_eq!(recv_vec(&rx), None);
}

#[test]
fn full_ring_refuses_then_recovers_over_many_laps() {
    for cfg in [
        SMALL,
        ShmConfig {
            cell_payload: 64,
            cells: 64,
        },
    ] {
        let rx = RecvQueue::create_with_suffix(&format!("full{}", cfg.cells), &cfg).unwrap();
        let tx = SendQueue::open(rx.name()).unwrap();
        let mut next_send = 0u32;
        let mut next_recv = 0u32;
        for _lap in 0..5 {
            while tx.try_send(&[&next_send.to_le_bytes()]).unwrap() {
                next_send += 1;
            }
            assert_eq!(
                next_send - next_recv,
                cfg.cells as u32,
                "ring holds exactly `cells`"
            );
            while let Some(v) = rx.try_recv(|b| u32::from_le_bytes(b.try_into().unwrap())) {
                assert_eq!(v, next_recv);
                next_recv += 1;
            }
            assert_eq!(next_recv, next_send);
        }
    }
}

#[test]
fn packet_larger_than_a_cell_is_an_error() {
    let rx = RecvQueue::create_with_suffix("large", &SMALL).unwrap();
    let tx = SendQueue::open(rx.name()).unwrap();
    let big = [0u8; 65];
    match tx.try_send(&[&big[..40], &big[40..]]) {
        Err(ShmError::TooLarge { len: 65, max: 64 }) => {}
        other => panic!("expected TooLarge, got {other:?}"),
    }
    assert!(tx.try_send(&[&big[..64]]).unwrap());
    assert_eq!(recv_vec(&rx).map(|v| v.len()), Some(64));
}

#[test]
fn drop_unlinks_and_names_are_exclusive_per_process() {
    let rx = RecvQueue::create_with_suffix("excl", &SMALL).unwrap();
    let name = rx.name().to_string();
    assert!(shm_exists(&name));
    match RecvQueue::create_with_suffix("excl", &SMALL) {
        Err(ShmError::AlreadyOpen { .. }) => {}
        other => panic!(
            "expected AlreadyOpen, got {:?}",
            other.map(|q| q.name().to_string())
        ),
    }
    let tx = SendQueue::open(&name).unwrap();
    assert!(tx.receiver_alive());
    drop(rx);
    assert!(!shm_exists(&name));
    assert!(!tx.receiver_alive());
    assert!(matches!(
        SendQueue::open(&name),
        Err(ShmError::Missing { .. })
    ));
    // The name is free again.
    let again = RecvQueue::create_with_suffix("excl", &SMALL).unwrap();
    assert!(
        !tx.receiver_alive(),
        "a new segment of the same name is not the old receiver"
    );
    drop(again);
}

#[test]
fn stale_segment_of_our_pid_is_replaced() {
    let name = format!("ibdyn-{}-stale", my_pid());
    std::fs::write(format!("/dev/shm/{name}"), b"left by a dead process").unwrap();
    let rx = RecvQueue::create_with_suffix("stale", &SMALL).unwrap();
    let tx = SendQueue::open(&name).unwrap();
    assert!(tx.try_send(&[b"fresh"]).unwrap());
    assert_eq!(recv_vec(&rx).as_deref(), Some(&b"fresh"[..]));
    drop(rx);
    assert!(!shm_exists(&name));
}

#[test]
fn open_rejects_missing_foreign_and_malformed_segments() {
    assert!(matches!(
        SendQueue::open(&format!("ibdyn-{}-nothing", my_pid())),
        Err(ShmError::Missing { .. })
    ));
    assert!(matches!(
        SendQueue::open("../etc/passwd"),
        Err(ShmError::Config(_))
    ));

    let junk = format!("ibdyn-{}-junk", my_pid());
    let path = format!("/dev/shm/{junk}");
    std::fs::write(&path, vec![0xabu8; 4096]).unwrap();
    let got = SendQueue::open(&junk);
    std::fs::remove_file(&path).unwrap();
    assert!(
        matches!(got, Err(ShmError::BadMagic { .. })),
        "{:?}",
        got.err()
    );

    std::fs::write(&path, b"short").unwrap();
    let got = SendQueue::open(&junk);
    std::fs::remove_file(&path).unwrap();
    assert!(
        matches!(got, Err(ShmError::Malformed { .. })),
        "{:?}",
        got.err()
    );

    // Header words of a real segment, corrupted one at a time (offsets from layout.rs).
    let rx = RecvQueue::create_with_suffix("corrupt", &SMALL).unwrap();
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(format!("/dev/shm/{}", rx.name()))
        .unwrap();
    let word = |off: u64| {
        let mut b = [0u8; 8];
        file.read_exact_at(&mut b, off).unwrap();
        b
    };
    let version = u64::from_le_bytes(word(8)) & 0xffff_ffff;
    let cases: [(u64, u64, &str); 6] = [
        (8, 99 | (256 << 32), "version"),
        (8, version | (128 << 32), "header size"),
        (16, 3, "cells not a power of two"),
        (16, 16, "cells disagree with size"),
        (16, u64::MAX, "cells huge"),
        (32, 4096, "payload disagrees with stride"),
    ];
    for (off, bad, what) in cases {
        let good = word(off);
        file.write_all_at(&bad.to_le_bytes(), off).unwrap();
        let got = SendQueue::open(rx.name());
        file.write_all_at(&good, off).unwrap();
        match got {
            Err(ShmError::Version { found: 99, .. }) | Err(ShmError::Malformed { .. }) => {}
            other => panic!("{what}: expected an error, got {:?}", other.map(|_| ())),
        }
    }
    assert!(
        SendQueue::open(rx.name()).is_ok(),
        "restored header is accepted"
    );
}

#[test]
fn corrupt_packet_length_is_dropped_not_trusted() {
    let rx = RecvQueue::create_with_suffix("badlen", &SMALL).unwrap();
    let tx = SendQueue::open(rx.name()).unwrap();
    assert!(tx.try_send(&[b"first"]).unwrap());
    assert!(tx.try_send(&[b"second"]).unwrap());
    let file = OpenOptions::new()
        .write(true)
        .open(format!("/dev/shm/{}", rx.name()))
        .unwrap();
    // Length word of cell 0: header 256 bytes, then sequence u64, then length u32.
    file.write_all_at(&u32::MAX.to_le_bytes(), 256 + 8).unwrap();
    assert_eq!(recv_vec(&rx).as_deref(), Some(&b"second"[..]));
    assert_eq!(recv_vec(&rx), None);
    // The dropped cell was released: the ring still holds `cells` packets.
    let mut n = 0;
    while tx.try_send(&[b"x"]).unwrap() {
        n += 1;
    }
    assert_eq!(n, SMALL.cells);
}

#[test]
fn the_queue_tells_whose_packets_it_still_holds() {
    let rx = RecvQueue::create_with_suffix("holds", &SMALL).unwrap();
    let tx = SendQueue::open(rx.name()).unwrap();
    let me = my_pid() as u32;
    let other = me + 1;
    assert!(!rx.holds_packet_of(me));
    // Another process claimed cell 0 and has not published it yet (claim position 1, its pid
    // in the cell's producer word): our packet behind it cannot be read.
    let file = OpenOptions::new()
        .write(true)
        .open(format!("/dev/shm/{}", rx.name()))
        .unwrap();
    file.write_all_at(&1u64.to_le_bytes(), 64).unwrap();
    file.write_all_at(&other.to_le_bytes(), 256 + 12).unwrap();
    assert!(tx.try_send(&[b"mine"]).unwrap());
    assert_eq!(recv_vec(&rx), None, "held behind the unpublished cell");
    assert!(rx.holds_packet_of(me));
    assert!(rx.holds_packet_of(other));
    assert!(!rx.holds_packet_of(other + 1));
    assert!(!rx.holds_packet_of(0));
    // The other process publishes (sequence 1, empty packet): both are read, none is held.
    file.write_all_at(&0u32.to_le_bytes(), 256 + 8).unwrap();
    file.write_all_at(&1u64.to_le_bytes(), 256).unwrap();
    assert_eq!(recv_vec(&rx).as_deref(), Some(&b""[..]));
    assert_eq!(recv_vec(&rx).as_deref(), Some(&b"mine"[..]));
    assert!(!rx.holds_packet_of(me));
    assert!(!rx.holds_packet_of(other));
}

#[test]
fn remove_segments_of_matches_pid_exactly() {
    let pid = 2_000_000_000;
    let names = [
        "ibdyn-2000000000",
        "ibdyn-2000000000-extra",
        "ibdyn-20000000001",
    ];
    for n in names {
        std::fs::write(format!("/dev/shm/{n}"), b"x").unwrap();
    }
    let removed = remove_segments_of(pid).unwrap();
    let other_left = shm_exists(names[2]);
    let _ = std::fs::remove_file(format!("/dev/shm/{}", names[2]));
    assert_eq!(removed, 2);
    assert!(!shm_exists(names[0]) && !shm_exists(names[1]));
    assert!(
        other_left,
        "a different pid sharing the digits must survive"
    );
}

#[test]
fn one_read_removes_the_objects_of_several_processes() {
    let names = [
        "ibdyn-2000000002",
        "ibdyn-2000000003-coll-1-2",
        "ibdyn-2000000004",
        "ibdyn-2000000002x",
    ];
    for n in names {
        std::fs::write(format!("/dev/shm/{n}"), b"x").unwrap();
    }
    let removed = remove_segments_of_any(&[2_000_000_002, 2_000_000_003]).unwrap();
    let left: Vec<bool> = names.iter().map(|n| shm_exists(n)).collect();
    for n in names {
        let _ = std::fs::remove_file(format!("/dev/shm/{n}"));
    }
    assert_eq!(removed, 2);
    assert_eq!(left, [false, false, true, true]);
}

#[test]
fn config_is_validated() {
    let bad = ShmConfig {
        cell_payload: 100,
        cells: 8,
    };
    assert!(matches!(
        RecvQueue::create_with_suffix("badcfg", &bad),
        Err(ShmError::Config(_))
    ));
    assert!(!shm_exists(&format!("ibdyn-{}-badcfg", my_pid())));
}

#[test]
fn nested_receive_inside_a_callback_sees_nothing() {
    let rx = RecvQueue::create_with_suffix("nested", &SMALL).unwrap();
    let tx = SendQueue::open(rx.name()).unwrap();
    for i in 0..3u8 {
        assert!(tx.try_send(&[&[i]]).unwrap());
    }
    let inner = rx.try_recv(|outer| {
        rx.wait(std::time::Duration::ZERO);
        (outer.to_vec(), rx.try_recv(|b| b.to_vec()))
    });
    assert_eq!(inner, Some((vec![0], None)));
    assert_eq!(recv_vec(&rx), Some(vec![1]));
    assert_eq!(recv_vec(&rx), Some(vec![2]));
}

#[test]
fn queues_cross_threads_as_intended() {
    fn send<T: Send>() {}
    fn sync<T: Sync>() {}
    send::<RecvQueue>();
    send::<SendQueue>();
    sync::<SendQueue>(); // many producer threads may share one mapping
}

#[test]
fn open_does_not_follow_symlinks() {
    let rx = RecvQueue::create_with_suffix("target", &SMALL).unwrap();
    let link = format!("ibdyn-{}-link", my_pid());
    let path = format!("/dev/shm/{link}");
    std::os::unix::fs::symlink(format!("/dev/shm/{}", rx.name()), &path).unwrap();
    let got = SendQueue::open(&link);
    std::fs::remove_file(&path).unwrap();
    assert!(matches!(got, Err(ShmError::Io { .. })), "{:?}", got.err());
}
