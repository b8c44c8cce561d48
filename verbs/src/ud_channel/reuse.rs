//! A process exits and a new one is given its UDP port (or, on InfiniBand, its queue pair
//! number): datagrams still addressed to the old process must not be taken by the new one.
//! Seen under `tests/connect_race.rs` with dropped datagrams: a parent's retransmission of a
//! handshake step meant for an exited child reached the next child, whose receive state then
//! counted the parent's real message of the same sequence number as a duplicate and dropped it,
//! and both sides' connect requests went unanswered.

use super::testing::{receive_all, tick_wire};
use super::*;
use crate::card::SockAddr;
use std::net::{IpAddr, Ipv4Addr};

fn card(udp_port: u16, tcp_port: u16) -> AddressCard {
    AddressCard::Sock(SockAddr {
        ip: IpAddr::V4(Ipv4Addr::LOCALHOST),
        udp_port,
        tcp_port,
    })
}

fn channel(card: AddressCard, epoch: u64) -> UdChannel {
    let cfg = FabricConfig {
        job_secret: 0x5ec7,
        ..FabricConfig::default()
    };
    UdChannel::new(&cfg, &card, 1024, epoch).expect("a channel")
}

/// Queues `data` from `tx` to `to` and returns the datagrams the next tick (at `now`) puts on
/// the wire.
fn send(tx: &mut UdChannel, to: AddressCard, data: &[u8], now: Instant) -> Vec<Vec<u8>> {
    tx.send(&to, data, now).expect("send");
    tick_wire(tx, now).0
}

/// How many messages `tx` gives up on at `now`.
fn failures_at(tx: &mut UdChannel, now: Instant) -> usize {
    let events = tick_wire(tx, now).1;
    events
        .iter()
        .filter(|e| matches!(e, ChannelEvent::Failed { .. }))
        .count()
}

/// Hands `wire` to `rx`; returns the messages delivered and how many acknowledgements it sent.
fn receive(rx: &mut UdChannel, wire: &[Vec<u8>]) -> (Vec<Vec<u8>>, usize) {
    let (events, acks) = receive_all(rx, wire);
    let got = events
        .into_iter()
        .filter_map(|e| match e {
            ChannelEvent::Delivered { data, .. } => Some(data),
            ChannelEvent::Failed { .. } => None,
        })
        .collect();
    (got, acks.len())
}

#[test]
fn a_retransmission_for_an_exited_process_is_not_taken_by_the_next_holder_of_its_port() {
    let now = Instant::now();
    let mut parent = channel(card(1000, 1000), 1);
    let old = card(2000, 2001);
    let mut old_child = channel(old, 2);
    // The old child speaks first, so the parent knows its incarnation.
    let hello = send(&mut old_child, card(1000, 1000), b"old hello", now);
    assert_eq!(receive(&mut parent, &hello).0, vec![b"old hello".to_vec()]);
    // The parent's message to it is never acknowledged: the old child exits.
    let for_old = send(&mut parent, old, b"for the old child", now);
    drop(old_child);

    // A new child gets the same UDP port and another TCP port: another card.
    let new = card(2000, 2002);
    let mut new_child = channel(new, 3);
    let hello = send(&mut new_child, card(1000, 1000), b"new hello", now);
    assert_eq!(receive(&mut parent, &hello).0, vec![b"new hello".to_vec()]);
    // Same sequence number as the message to the old child (each card has its own numbers).
    let for_new = send(&mut parent, new, b"for the new child", now);

    // The retransmission for the old child reaches the port first.
    let (got, acks) = receive(&mut new_child, &for_old);
    assert!(got.is_empty(), "taken by the wrong process: {got:?}");
    assert_eq!(acks, 0, "acknowledged for the process it was meant for");
    let (got, acks) = receive(&mut new_child, &for_new);
    assert_eq!(got, vec![b"for the new child".to_vec()]);
    assert_eq!(acks, 1);
    assert_eq!(new_child.stats.dropped_misaddressed, 1);
    assert_eq!(new_child.stats.duplicates, 0);
}

/// InfiniBand may give a new process the same queue pair number, so the card itself repeats:
/// the incarnation the sender heard tells the processes apart.
#[test]
fn a_new_process_with_the_very_same_card_drops_what_was_meant_for_the_old_one() {
    let now = Instant::now();
    let same = card(2000, 2001);
    let mut parent = channel(card(1000, 1000), 1);
    let mut old_child = channel(same, 2);
    let hello = send(&mut old_child, card(1000, 1000), b"old hello", now);
    receive(&mut parent, &hello);
    let for_old = send(&mut parent, same, b"for the old child", now);
    drop(old_child);

    let mut new_child = channel(same, 3);
    let (got, acks) = receive(&mut new_child, &for_old);
    assert!(
        got.is_empty() && acks == 0,
        "{got:?}, {acks} acknowledgement(s)"
    );
    // Once the new process has spoken, the parent addresses its incarnation.
    let hello = send(&mut new_child, card(1000, 1000), b"new hello", now);
    receive(&mut parent, &hello);
    let for_new = send(&mut parent, same, b"for the new child", now);
    assert_eq!(
        receive(&mut new_child, &for_new).0,
        vec![b"for the new child".to_vec()]
    );
}

/// A card whose messages failed is forgotten: a later process at that address that has not
/// spoken yet is reached (an incarnation is named only while the sender can trust it).
#[test]
fn an_address_whose_messages_failed_reaches_whoever_holds_it_next() {
    let mut now = Instant::now();
    let same = card(2000, 2001);
    let mut parent = channel(card(1000, 1000), 1);
    let mut old_child = channel(same, 2);
    let hello = send(&mut old_child, card(1000, 1000), b"old hello", now);
    receive(&mut parent, &hello);
    send(&mut parent, same, b"unanswered", now);
    drop(old_child);
    let mut failed = 0;
    for _ in 0..=parent.max_retries + 1 {
        now += Duration::from_secs(1);
        failed += failures_at(&mut parent, now);
    }
    assert_eq!(failed, 1, "the unanswered message is given up");

    let mut new_child = channel(same, 3);
    let first = send(&mut parent, same, b"first contact", now);
    assert_eq!(
        receive(&mut new_child, &first).0,
        vec![b"first contact".to_vec()]
    );
}
