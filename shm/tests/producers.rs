//! Several real processes: concurrent producers, the doorbell, crash cleanup.

mod common;

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

use common::{fork_child, reap, shm_exists, Children};
use ibdyn_shm::{remove_segments_of, RecvQueue, SendQueue, ShmConfig};

const LIMIT: Duration = Duration::from_secs(60);

/// Receives with the back-off a real progress loop uses; `None` after `LIMIT`.
fn recv_blocking<R>(q: &RecvQueue, mut f: impl FnMut(&[u8]) -> R) -> Option<R> {
    let start = Instant::now();
    let mut idle = 0u32;
    loop {
        if let Some(r) = q.try_recv(&mut f) {
            return Some(r);
        }
        idle += 1;
        if idle < 100 {
            std::hint::spin_loop();
        } else if idle < 200 {
            std::thread::yield_now();
        } else {
            if start.elapsed() > LIMIT {
                return None;
            }
            q.wait(Duration::from_millis(5));
        }
    }
}

fn send_blocking(q: &SendQueue, parts: &[&[u8]]) -> bool {
    let start = Instant::now();
    loop {
        if q.try_send(parts).expect("packet fits a cell") {
            return true;
        }
        if start.elapsed() > LIMIT {
            return false;
        }
        std::thread::yield_now();
    }
}

fn filler(producer: u32, seq: u32) -> Vec<u8> {
    let len = (seq as usize * 7 + producer as usize) % 200;
    (0..len)
        .map(|i| (i as u32 ^ seq ^ (producer << 4)) as u8)
        .collect()
}

#[test]
fn concurrent_producers_deliver_every_packet_once_in_order() {
    const PRODUCERS: u32 = 5;
    const PACKETS: u32 = 4000;
    // A small ring, so producers keep colliding on claims and on a full ring.
    let cfg = ShmConfig {
        cell_payload: 256,
        cells: 16,
    };
    let rx = RecvQueue::create_with_suffix("mpsc", &cfg).unwrap();
    let name = rx.name().to_string();
    let mut children = Children(
        (0..PRODUCERS)
            .map(|p| {
                let name = name.clone();
                fork_child(move || {
                    let Ok(tx) = SendQueue::open(&name) else {
                        return 2;
                    };
                    for seq in 0..PACKETS {
                        let head = [p.to_le_bytes(), seq.to_le_bytes()].concat();
                        if !send_blocking(&tx, &[&head, &filler(p, seq)]) {
                            return 3;
                        }
                    }
                    0
                })
            })
            .collect(),
    );
    let mut next = vec![0u32; PRODUCERS as usize];
    let total = PRODUCERS * PACKETS;
    for _ in 0..total {
        let got = recv_blocking(&rx, |b| {
            let p = u32::from_le_bytes(b[0..4].try_into().unwrap());
            let seq = u32::from_le_bytes(b[4..8].try_into().unwrap());
            let intact = b[8..] == filler(p, seq)[..];
            (p, seq, intact)
        });
        let Some((p, seq, intact)) = got else {
            panic!("stalled with {next:?} received");
        };
        assert!(p < PRODUCERS, "producer id {p}");
        assert_eq!(
            seq, next[p as usize],
            "producer {p} out of order or duplicated"
        );
        assert!(intact, "payload of producer {p} packet {seq} damaged");
        next[p as usize] += 1;
    }
    assert_eq!(rx.try_recv(|_| ()), None, "nothing beyond what was sent");
    assert!(children.reap_all(LIMIT).iter().all(|c| *c == Some(0)));
    assert!(next.iter().all(|&n| n == PACKETS));
}

#[test]
fn doorbell_wakes_a_sleeping_receiver() {
    let rx = RecvQueue::create_with_suffix("bell", &ShmConfig::DEFAULT).unwrap();
    let name = rx.name().to_string();
    let child = fork_child(move || {
        // Wait until the receiver has announced it sleeps (flag at byte 132 of the header),
        // then send: only the doorbell can wake it before its long timeout.
        let Ok(file) = File::open(format!("/dev/shm/{name}")) else {
            return 2;
        };
        let start = Instant::now();
        let mut flag = [0u8; 4];
        while u32::from_le_bytes(flag) == 0 {
            if file.read_exact_at(&mut flag, 132).is_err() || start.elapsed() > LIMIT {
                return 3;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let Ok(tx) = SendQueue::open(&name) else {
            return 4;
        };
        if tx.try_send(&[b"ding"]).unwrap_or(false) {
            0
        } else {
            5
        }
    });
    let timeout = Duration::from_secs(120);
    let start = Instant::now();
    let mut got = None;
    while got.is_none() && start.elapsed() < timeout {
        rx.wait(timeout);
        got = rx.try_recv(|b| b.to_vec());
    }
    assert_eq!(got.as_deref(), Some(&b"ding"[..]));
    assert!(
        start.elapsed() < timeout,
        "woken by the doorbell, not by the timeout"
    );
    assert_eq!(reap(child, LIMIT), Some(0));
}

#[test]
fn daemon_cleanup_removes_what_a_crashed_process_left() {
    let child = fork_child(|| {
        let q = RecvQueue::create(&ShmConfig::DEFAULT).expect("create");
        assert_eq!(q.name(), format!("ibdyn-{}", std::process::id()));
        std::mem::forget(q); // "crash": no Drop
        0
    });
    assert_eq!(reap(child, LIMIT), Some(0));
    let name = format!("ibdyn-{child}");
    assert!(shm_exists(&name), "a crashed process leaves its segment");
    assert_eq!(remove_segments_of(child).unwrap(), 1);
    assert!(!shm_exists(&name));
}

#[test]
fn a_producer_dying_mid_send_does_not_block_the_queue() {
    use std::os::unix::fs::FileExt;
    let rx = RecvQueue::create_with_suffix("abandon", &ShmConfig::DEFAULT).unwrap();
    let dead = fork_child(|| 0);
    assert_eq!(reap(dead, LIMIT), Some(0));
    // Forge what a producer killed between claim and publish leaves: the enqueue position
    // (header byte 64) moved past cell 0, whose sequence still says "claimed", and whose
    // producer field (cell byte 12) names the dead process.
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(format!("/dev/shm/{}", rx.name()))
        .unwrap();
    file.write_all_at(&1u64.to_le_bytes(), 64).unwrap();
    file.write_all_at(&(dead as u32).to_le_bytes(), 256 + 12)
        .unwrap();
    let tx = SendQueue::open(rx.name()).unwrap();
    assert!(tx.try_send(&[b"after"]).unwrap());
    assert_eq!(
        rx.try_recv(|b| b.to_vec()),
        None,
        "blocked behind the claimed cell"
    );
    let got = recv_blocking(&rx, |b| b.to_vec());
    assert_eq!(got.as_deref(), Some(&b"after"[..]));
}

#[test]
fn a_live_producer_mid_send_is_waited_for() {
    use std::os::unix::fs::FileExt;
    let rx = RecvQueue::create_with_suffix("midsend", &ShmConfig::DEFAULT).unwrap();
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(format!("/dev/shm/{}", rx.name()))
        .unwrap();
    // Cell 0 claimed by a live process (ourselves), not yet published.
    file.write_all_at(&1u64.to_le_bytes(), 64).unwrap();
    file.write_all_at(&std::process::id().to_le_bytes(), 256 + 12)
        .unwrap();
    rx.wait(Duration::from_millis(1));
    assert_eq!(rx.try_recv(|_| ()), None);
    let mut seq = [0u8; 8];
    file.read_exact_at(&mut seq, 256).unwrap();
    assert_eq!(
        u64::from_le_bytes(seq),
        0,
        "the cell was left to its producer"
    );
    // The producer publishes: length 3, "abc", then sequence 1.
    file.write_all_at(&3u32.to_le_bytes(), 256 + 8).unwrap();
    file.write_all_at(b"abc", 256 + 16).unwrap();
    file.write_all_at(&1u64.to_le_bytes(), 256).unwrap();
    assert_eq!(rx.try_recv(|b| b.to_vec()).as_deref(), Some(&b"abc"[..]));
}

#[test]
fn a_forked_child_records_its_own_pid_in_cells() {
    use std::os::unix::fs::FileExt;
    let rx = RecvQueue::create_with_suffix("whosent", &ShmConfig::DEFAULT).unwrap();
    let tx = SendQueue::open(rx.name()).unwrap();
    assert!(tx.try_send(&[b"parent"]).unwrap()); // caches the parent's pid
    let child = fork_child(move || {
        if tx.try_send(&[b"child"]).unwrap_or(false) {
            0
        } else {
            1
        }
    });
    assert_eq!(reap(child, LIMIT), Some(0));
    let file = File::open(format!("/dev/shm/{}", rx.name())).unwrap();
    let producer = |cell: u64| {
        let mut b = [0u8; 4];
        file.read_exact_at(&mut b, 256 + cell * (16384 + 64) + 12)
            .unwrap();
        u32::from_le_bytes(b)
    };
    assert_eq!(producer(0), std::process::id());
    assert_eq!(producer(1), child as u32);
}

#[test]
fn a_producer_dying_mid_send_on_the_first_lap_does_not_block_the_queue() {
    let rx = RecvQueue::create_with_suffix("abandon1", &ShmConfig::DEFAULT).unwrap();
    let tx = SendQueue::open(rx.name()).unwrap();
    for m in [&b"one"[..], &b"two"[..]] {
        assert!(tx.try_send(&[m]).unwrap());
        assert_eq!(recv_blocking(&rx, |b| b.to_vec()).as_deref(), Some(m));
    }
    let dead = fork_child(|| 0);
    assert_eq!(reap(dead, LIMIT), Some(0));
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(format!("/dev/shm/{}", rx.name()))
        .unwrap();
    let stride = (file.metadata().unwrap().len() - 256) / ShmConfig::DEFAULT.cells as u64;
    // Cell 2 claimed (enqueue position 3) by a process that died before publishing: its
    // sequence is still the zero of a fresh segment, never written on this first lap.
    file.write_all_at(&3u64.to_le_bytes(), 64).unwrap();
    file.write_all_at(&(dead as u32).to_le_bytes(), 256 + 2 * stride + 12)
        .unwrap();
    assert!(tx.try_send(&[b"after"]).unwrap());
    let got = recv_blocking(&rx, |b| b.to_vec());
    assert_eq!(got.as_deref(), Some(&b"after"[..]));
}
