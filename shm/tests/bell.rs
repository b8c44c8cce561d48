//! The bell of a receiver that sleeps in a poll of its own: armed, the first packet rings it
//! once; disarmed, packets ring nothing and earlier rings are gone; with a packet waiting,
//! arming says so instead of letting the caller sleep.

use ibdyn_shm::{BellArm, RecvQueue, SendQueue, ShmConfig};
use std::os::fd::BorrowedFd;
use std::os::unix::net::UnixDatagram;

/// Rings waiting on the bell, read from a duplicate of its fd (the count, then they are gone).
fn take_rings(bell: BorrowedFd<'_>) -> usize {
    let sock = UnixDatagram::from(bell.try_clone_to_owned().expect("dup the bell"));
    let mut n = 0;
    let mut b = [0u8; 8];
    while sock.recv(&mut b).is_ok() {
        n += 1;
    }
    n
}

fn armed(rx: &RecvQueue) -> BorrowedFd<'_> {
    match rx.arm_bell() {
        BellArm::Armed(fd) => fd,
        BellArm::Pending => panic!("nothing was sent, yet a packet is pending"),
        BellArm::Unavailable => panic!("no bell: binding an abstract socket failed"),
    }
}

#[test]
fn the_first_packet_to_an_armed_receiver_rings_its_bell_once() {
    let rx = RecvQueue::create_with_suffix("bell-once", &ShmConfig::DEFAULT).unwrap();
    let tx = SendQueue::open(rx.name()).unwrap();
    let bell = armed(&rx);
    assert_eq!(take_rings(bell), 0);
    assert!(tx.try_send(&[b"one"]).unwrap());
    assert!(tx.try_send(&[b"two"]).unwrap());
    assert_eq!(take_rings(bell), 1, "one ring per sleep");
    rx.disarm_bell();
    assert_eq!(rx.try_recv(|p| p.to_vec()).as_deref(), Some(&b"one"[..]));
    assert_eq!(rx.try_recv(|p| p.to_vec()).as_deref(), Some(&b"two"[..]));
}

#[test]
fn a_disarmed_receiver_is_not_rung_and_its_old_rings_are_read() {
    let rx = RecvQueue::create_with_suffix("bell-off", &ShmConfig::DEFAULT).unwrap();
    let tx = SendQueue::open(rx.name()).unwrap();
    let _ = armed(&rx);
    assert!(tx.try_send(&[b"wake"]).unwrap());
    rx.disarm_bell();
    assert!(rx.try_recv(|_| ()).is_some());
    assert!(tx.try_send(&[b"awake"]).unwrap());
    assert!(rx.try_recv(|_| ()).is_some());
    let bell = armed(&rx);
    assert_eq!(
        take_rings(bell),
        0,
        "the ring was drained, and awake means no ring"
    );
    rx.disarm_bell();
}

#[test]
fn arming_with_a_packet_waiting_says_so() {
    let rx = RecvQueue::create_with_suffix("bell-pending", &ShmConfig::DEFAULT).unwrap();
    let tx = SendQueue::open(rx.name()).unwrap();
    assert!(tx.try_send(&[b"early"]).unwrap());
    assert!(matches!(rx.arm_bell(), BellArm::Pending));
    assert!(rx.try_recv(|_| ()).is_some());
    let bell = armed(&rx);
    assert!(tx.try_send(&[b"late"]).unwrap());
    assert_eq!(take_rings(bell), 1);
    rx.disarm_bell();
}
