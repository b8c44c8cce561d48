//! Property tests with random bytes (a bounded number of cases) of what arrives from the
//! network: UD control datagrams, the connection handshake inside them, address cards and
//! remote buffer descriptors. Each returns a value or an error (or counts a drop), never
//! panics, and the receive state stays within its bounds.

use super::testing::{receive_all, tick_wire};
use super::*;
use crate::card::SockAddr;
use crate::conn_wire;
use crate::fabric::RemoteBuf;
use std::net::{IpAddr, Ipv4Addr};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn bytes(&mut self, max: usize) -> Vec<u8> {
        let n = self.below(max + 1);
        (0..n).map(|_| self.next() as u8).collect()
    }
    /// A number that is often at an edge.
    fn edgy(&mut self, max: u64) -> u64 {
        match self.below(4) {
            0 => 0,
            1 => max,
            2 => self.next() % (max.saturating_add(1)).max(1),
            _ => self.below(4) as u64,
        }
    }
}

fn card(port: u16) -> AddressCard {
    AddressCard::Sock(SockAddr {
        ip: IpAddr::V4(Ipv4Addr::LOCALHOST),
        udp_port: port,
        tcp_port: port,
    })
}

const SECRET: u64 = 0x5ec7_e700_0000_0001;

fn channel(port: u16) -> UdChannel {
    let cfg = FabricConfig {
        job_secret: SECRET,
        ..FabricConfig::default()
    };
    UdChannel::new(&cfg, &card(port), 1024, 7).expect("a channel")
}

/// A datagram from one of a few senders: a valid header and a random or well-formed body,
/// mostly with a right authenticator (so that cases reach reassembly), sometimes damaged
/// or truncated after it was sealed.
fn datagram(rng: &mut Rng, senders: &[UdChannel]) -> Vec<u8> {
    if rng.below(5) == 0 {
        return rng.bytes(64);
    }
    let from = &senders[rng.below(senders.len())];
    let kind = match rng.below(5) {
        0 => KIND_ACK,
        1 => rng.next() as u8,
        _ => KIND_DATA,
    };
    let mut b = Vec::new();
    // Mostly to the receiver (any incarnation, or its own), now and then to another card or
    // an earlier incarnation of the receiver's.
    let (to, to_epoch) = match rng.below(8) {
        0 => (card(40200), 0),
        1 => (card(40100), 6),
        n => (card(40100), if n % 2 == 0 { 0 } else { 7 }),
    };
    from.header(kind, &to.to_bytes(), to_epoch, &mut b);
    if kind == KIND_DATA && rng.below(4) != 0 {
        let cnt = rng.edgy(MAX_FRAGS as u64 + 2) as u16;
        let idx = rng.edgy(u64::from(cnt)) as u16;
        let payload = rng.bytes(40);
        b.extend_from_slice(&rng.edgy(300).to_le_bytes());
        b.extend_from_slice(&idx.to_le_bytes());
        b.extend_from_slice(&cnt.to_le_bytes());
        let plen = if rng.below(8) == 0 {
            rng.next() as u16
        } else {
            payload.len() as u16
        };
        b.extend_from_slice(&plen.to_le_bytes());
        b.extend_from_slice(&payload);
    } else {
        b.extend(rng.bytes(24));
    }
    if rng.below(10) != 0 {
        from.auth.seal(&mut b);
    }
    if rng.below(6) == 0 {
        // Damage one byte of the header or body.
        let i = rng.below(b.len());
        b[i] = rng.next() as u8;
    }
    if rng.below(8) == 0 {
        b.truncate(rng.below(b.len() + 1));
    }
    b
}

#[test]
fn control_datagrams_of_any_bytes_are_delivered_or_dropped() {
    let senders: Vec<UdChannel> = (1..=3).map(|p| channel(40000 + p)).collect();
    let (mut delivered, mut malformed, mut misaddressed) = (0, 0, 0);
    for seed in 1..=200u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let mut rx = channel(40100);
        let mut events = Vec::new();
        for _ in 0..300 {
            let d = datagram(&mut rng, &senders);
            rx.on_datagram(&d, &mut |_, _| Ok(()), &mut events);
        }
        for st in rx.recv.values() {
            assert!(st.partial.len() <= MAX_PARTIAL, "seed {seed}");
            assert!(st.done.len() <= MAX_DONE, "seed {seed}");
            for p in st.partial.values() {
                assert!(p.frags.len() <= MAX_FRAGS, "seed {seed}");
            }
        }
        // A damaged header that still parses names another sender: one state per card.
        assert!(rx.recv.len() <= 300, "seed {seed}");
        delivered += rx.stats.messages_delivered;
        malformed += rx.stats.dropped_malformed;
        misaddressed += rx.stats.dropped_misaddressed;
    }
    // The cases reach reassembly as well as the checks.
    assert!(
        delivered > 0 && malformed > 0 && misaddressed > 0,
        "{delivered} delivered, {malformed} malformed, {misaddressed} misaddressed"
    );
}

#[test]
fn handshakes_cards_and_buffer_descriptors_of_any_bytes_parse_or_fail() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let good_card = card(5).to_bytes();
    for _ in 0..50_000 {
        let mut b = if rng.below(2) == 0 {
            rng.bytes(40)
        } else {
            let mut g = good_card.clone();
            g.extend(rng.bytes(4));
            g
        };
        if !b.is_empty() && rng.below(2) == 0 {
            let i = rng.below(b.len());
            b[i] = rng.next() as u8;
        }
        let _ = conn_wire::decode(&b);
        if let Ok(c) = AddressCard::from_bytes(&b) {
            assert_eq!(AddressCard::from_bytes(&c.to_bytes()).ok(), Some(c));
        }
        if let Ok((c, used)) = AddressCard::parse_prefix(&b) {
            assert!(used <= b.len());
            assert_eq!(AddressCard::from_bytes(&b[..used]).ok(), Some(c));
        }
        if let Ok(r) = RemoteBuf::from_bytes(&b) {
            assert_eq!(r.to_bytes().as_slice(), &b[..]);
        }
    }
}

/// Every datagram `tx` puts on the wire for one message to `rx`, and `rx`'s acknowledgements.
fn exchange(
    tx: &mut UdChannel,
    rx: &mut UdChannel,
    data: &[u8],
) -> (Vec<Vec<u8>>, Vec<ChannelEvent>) {
    let now = Instant::now();
    tx.send(&card(40100), data, now).expect("send");
    let (mut wire, mut events) = tick_wire(tx, now);
    let (received, acks) = receive_all(rx, &wire);
    events.extend(received);
    wire.extend(acks);
    (wire, events)
}

#[test]
fn the_job_secret_never_goes_on_the_wire() {
    let mut tx = channel(40001);
    let mut rx = channel(40100);
    // Several fragments, with a payload that is not the secret either.
    let (wire, events) = exchange(&mut tx, &mut rx, &vec![0x42; 3000]);
    assert!(wire.len() >= 4, "fragments and their acknowledgements");
    let delivered = events
        .iter()
        .filter(|e| matches!(e, ChannelEvent::Delivered { data, .. } if data.len() == 3000))
        .count();
    assert_eq!(delivered, 1);
    for d in &wire {
        for secret in [SECRET.to_le_bytes(), SECRET.to_be_bytes()] {
            assert!(
                !d.windows(8).any(|w| w == secret),
                "the job secret is in a datagram: {d:02x?}"
            );
        }
    }
}

#[test]
fn a_datagram_with_a_wrong_tag_is_dropped_and_counted() {
    let mut tx = channel(40001);
    let mut rx = channel(40100);
    let now = Instant::now();
    tx.send(&card(40100), b"hello", now).expect("send");
    let (mut wire, mut events) = tick_wire(&mut tx, now);
    let good = wire.pop().expect("one datagram");
    let mut acks = 0;
    // Each bit of the tag, and a bit of the header and of the payload, flipped.
    let n = good.len();
    for i in (n - auth::TAG_LEN..n).chain([6, n - auth::TAG_LEN - 1]) {
        for bit in [0x01u8, 0x80] {
            let mut bad = good.clone();
            bad[i] ^= bit;
            rx.on_datagram(
                &bad,
                &mut |_, _| {
                    acks += 1;
                    Ok(())
                },
                &mut events,
            );
        }
    }
    assert_eq!(rx.stats.dropped_foreign, 36);
    assert_eq!((rx.stats.messages_delivered, acks), (0, 0));
    // Another job's sender (another secret) is dropped the same way.
    let cfg = FabricConfig {
        job_secret: SECRET ^ 1,
        ..FabricConfig::default()
    };
    let mut other = UdChannel::new(&cfg, &card(40002), 1024, 7).expect("a channel");
    let (_, ev) = exchange(&mut other, &mut rx, b"hello");
    assert!(ev.is_empty());
    assert_eq!(rx.stats.dropped_foreign, 37);
    // The untouched datagram is delivered and acknowledged.
    let (_, sent) = receive_all(&mut rx, &[good]);
    assert_eq!((rx.stats.messages_delivered, acks + sent.len()), (1, 1));
}
