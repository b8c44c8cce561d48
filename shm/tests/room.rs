//! A producer that finds the ring full sleeps until the receiver hands cells back (or a
//! packet arrives for its own queue), instead of looking again on a timer.

mod common;

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use common::{fork_child, Children};
use ibdyn_shm::{RecvQueue, SendQueue, ShmConfig};

const LIMIT: Duration = Duration::from_secs(60);
/// The producer's sleep: far longer than any test may take, so only a wake ends it early.
const SLEEP: Duration = Duration::from_secs(600);
/// Byte offset of the count of producers waiting for room in a segment's header.
const ROOM_WAITERS: u64 = 200;

fn room_waiters(name: &str) -> u32 {
    let file = File::open(format!("/dev/shm/{name}")).expect("segment exists");
    let mut word = [0u8; 4];
    file.read_exact_at(&mut word, ROOM_WAITERS)
        .expect("header readable");
    u32::from_le_bytes(word)
}

fn set_room_waiters(name: &str, n: u32) {
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(format!("/dev/shm/{name}"))
        .expect("segment exists");
    file.write_all_at(&n.to_le_bytes(), ROOM_WAITERS)
        .expect("header writable");
}

/// Polls until a producer counts itself waiting for room in segment `name`.
fn until_a_producer_waits(name: &str) {
    let start = Instant::now();
    while room_waiters(name) == 0 {
        assert!(start.elapsed() < LIMIT, "no producer waited for room");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Fills `tx` until it refuses a packet.
fn fill(tx: &SendQueue) -> usize {
    let mut n = 0;
    while tx.try_send(&[b"fill"]).expect("fits") {
        n += 1;
    }
    n
}

/// In a forked child: fills the parent's queue `name`, then sleeps in `wait_for_room` with
/// its own queue `own` until `woken` says the sleep ended for the expected reason. Exit 0 if
/// so, well before `SLEEP`; 7 if this kernel cannot wait so (the test then says SKIPPED).
fn producer(name: &str, own: &str, woken: impl Fn(&RecvQueue, &SendQueue) -> bool) -> i32 {
    let Ok(me) = RecvQueue::create_with_suffix(own, &ShmConfig::DEFAULT) else {
        return 2;
    };
    let Ok(tx) = SendQueue::open(name) else {
        return 3;
    };
    if fill(&tx) == 0 {
        return 4;
    }
    let start = Instant::now();
    loop {
        if !me.wait_for_room(&tx, SLEEP) {
            return 7;
        }
        if woken(&me, &tx) {
            return if start.elapsed() < LIMIT { 0 } else { 5 };
        }
        if start.elapsed() > LIMIT {
            return 6;
        }
    }
}

/// Sends one packet through a scratch queue of this process, so that the library has learnt
/// its pid (a `Once`) before a test forks: a fork while another test's thread is inside
/// that `Once` would leave the child waiting on it forever.
fn learn_pid() {
    static SCRATCH: AtomicU32 = AtomicU32::new(0);
    let suffix = format!("roompid{}", SCRATCH.fetch_add(1, Ordering::Relaxed));
    let q = RecvQueue::create_with_suffix(&suffix, &ShmConfig::DEFAULT).unwrap();
    assert!(SendQueue::open(q.name())
        .unwrap()
        .try_send(&[b"pid"])
        .unwrap());
}

fn check(code: Option<i32>) {
    match code {
        Some(0) => {}
        Some(7) => eprintln!("SKIPPED: this kernel has no futex_waitv (Linux 5.16+)"),
        other => panic!("producer ended with {other:?}"),
    }
}

#[test]
fn a_producer_waiting_for_room_wakes_when_the_receiver_hands_cells_back() {
    let rx = RecvQueue::create_with_suffix("room", &ShmConfig::DEFAULT).unwrap();
    let name = rx.name().to_string();
    learn_pid();
    let mut child = Children(vec![fork_child(|| {
        producer(&name, "roomtx", |_, tx| {
            tx.try_send(&[b"last"]).unwrap_or(false)
        })
    })]);
    until_a_producer_waits(&name);
    // The producer sleeps counted: handing one cell back must wake it.
    assert_eq!(rx.try_recv(|b| b.to_vec()).as_deref(), Some(&b"fill"[..]));
    rx.release_consumed();
    check(child.reap_all(LIMIT)[0]);
    let mut got = Vec::new();
    while let Some(p) = rx.try_recv(|b| b.to_vec()) {
        got.push(p);
    }
    assert_eq!(got.last().map(Vec::as_slice), Some(&b"last"[..]));
    assert_eq!(
        room_waiters(&name),
        0,
        "the producer no longer counts as waiting"
    );
}

/// The receive path reads the count of waiting producers without a fence, so it can miss one
/// that counts itself at that moment: forced here by hiding the count while cells are handed
/// back. The receiver looks again, ordered, before it sleeps, and wakes the producer then.
#[test]
fn a_producer_missed_when_cells_were_handed_back_is_woken_before_the_receiver_sleeps() {
    let rx = RecvQueue::create_with_suffix("roommiss", &ShmConfig::DEFAULT).unwrap();
    let name = rx.name().to_string();
    learn_pid();
    let mut child = Children(vec![fork_child(|| {
        producer(&name, "misstx", |_, tx| {
            tx.try_send(&[b"last"]).unwrap_or(false)
        })
    })]);
    until_a_producer_waits(&name);
    set_room_waiters(&name, 0);
    assert!(rx.try_recv(|_| ()).is_some());
    rx.release_consumed();
    set_room_waiters(&name, 1);
    // A short sleep of the receiver: before it, the look that finds the producer.
    rx.wait(Duration::from_millis(1));
    check(child.reap_all(LIMIT)[0]);
    let mut last = None;
    while let Some(p) = rx.try_recv(|b| b.to_vec()) {
        last = Some(p);
    }
    assert_eq!(last.as_deref(), Some(&b"last"[..]));
    assert_eq!(room_waiters(&name), 0);
}

#[test]
fn a_producer_waiting_for_room_wakes_for_a_packet_of_its_own() {
    let rx = RecvQueue::create_with_suffix("roomown", &ShmConfig::DEFAULT).unwrap();
    let name = rx.name().to_string();
    learn_pid();
    let mut child = Children(vec![fork_child(|| {
        producer(&name, "ownrx", |me, _| {
            me.try_recv(|b| b == b"yours").unwrap_or(false)
        })
    })]);
    until_a_producer_waits(&name);
    // The receiver never hands a cell back: only the packet to the producer's queue wakes it.
    let to_child = SendQueue::open(&format!("ibdyn-{}-ownrx", child.0[0])).expect("child's queue");
    assert!(to_child.try_send(&[b"yours"]).unwrap());
    check(child.reap_all(LIMIT)[0]);
    assert_eq!(
        room_waiters(&name),
        0,
        "the producer no longer counts as waiting"
    );
}

#[test]
fn a_ring_with_room_is_not_waited_on() {
    let rx = RecvQueue::create_with_suffix("roomfree", &ShmConfig::DEFAULT).unwrap();
    let me = RecvQueue::create_with_suffix("roomfreetx", &ShmConfig::DEFAULT).unwrap();
    let tx = SendQueue::open(rx.name()).unwrap();
    let start = Instant::now();
    assert!(me.wait_for_room(&tx, SLEEP));
    assert!(start.elapsed() < LIMIT);
    // Full, then one cell handed back before the wait: it returns at once too.
    fill(&tx);
    assert!(rx.try_recv(|_| ()).is_some());
    rx.release_consumed();
    let start = Instant::now();
    assert!(me.wait_for_room(&tx, SLEEP));
    assert!(start.elapsed() < LIMIT);
    assert!(tx.try_send(&[b"fits"]).unwrap());
    assert_eq!(room_waiters(rx.name()), 0);
}
