//! Control channel and connection manager against the in-process fake provider.

use crate::fake::{card, FakeProvider, Net};
use crate::{Event, Fabric, FabricConfig, VerbsError};
use std::time::{Duration, Instant};

fn cfg(key: u64) -> FabricConfig {
    FabricConfig {
        job_secret: 0xfeed,
        local_key: key,
        retry_timeout: Duration::from_millis(2),
        max_retries: 12,
        ..FabricConfig::default()
    }
}

fn fabric(net: &Net, key: u64, port: u16, mtu: usize) -> Fabric {
    Fabric::with_provider(cfg(key), Box::new(FakeProvider::new(net, port, mtu))).unwrap()
}

/// Drive both fabrics until `done` says so (bounded).
fn drive(
    fs: &mut [&mut Fabric],
    evs: &mut [Vec<Event>],
    mut done: impl FnMut(&[Vec<Event>]) -> bool,
) {
    let end = Instant::now() + Duration::from_secs(20);
    while !done(evs) {
        assert!(Instant::now() < end, "timed out driving fabrics");
        for (f, e) in fs.iter_mut().zip(evs.iter_mut()) {
            f.progress(e).unwrap();
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

fn messages(ev: &[Event]) -> Vec<(u64, Vec<u8>)> {
    ev.iter()
        .filter_map(|e| match e {
            Event::Message { peer, data } => Some((*peer, data.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn on_demand_connect_delivers_queued_messages_in_order() {
    let net = Net::default();
    let mut a = fabric(&net, 1, 100, 2048);
    let mut b = fabric(&net, 2, 200, 2048);
    for i in 0..10u8 {
        a.send(2, &card(200), &[&[i], b"x"]).unwrap();
    }
    assert_eq!(a.connection_count(), 0);
    let mut evs = vec![Vec::new(), Vec::new()];
    drive(&mut [&mut a, &mut b], &mut evs, |e| {
        messages(&e[1]).len() == 10
    });
    let got: Vec<u8> = messages(&evs[1])
        .iter()
        .map(|(p, d)| {
            assert_eq!(*p, 1);
            d[0]
        })
        .collect();
    assert_eq!(got, (0..10).collect::<Vec<_>>());
    assert_eq!((a.connection_count(), b.connection_count()), (1, 1));
    // Reply over the same connection, no new request.
    b.send(1, &card(100), &[b"back"]).unwrap();
    drive(&mut [&mut a, &mut b], &mut evs, |e| {
        messages(&e[0]).len() == 1
    });
    assert_eq!(b.stats().conn.connect_requests_sent, 0);
}

#[test]
fn simultaneous_connect_ends_with_one_connection() {
    let net = Net::default();
    let mut a = fabric(&net, 5, 100, 2048);
    let mut b = fabric(&net, 9, 200, 2048);
    a.send(9, &card(200), &[b"from a"]).unwrap();
    b.send(5, &card(100), &[b"from b"]).unwrap();
    let mut evs = vec![Vec::new(), Vec::new()];
    drive(&mut [&mut a, &mut b], &mut evs, |e| {
        messages(&e[0]).len() == 1 && messages(&e[1]).len() == 1
    });
    assert_eq!(messages(&evs[0]), vec![(9, b"from b".to_vec())]);
    assert_eq!(messages(&evs[1]), vec![(5, b"from a".to_vec())]);
    assert_eq!((a.connection_count(), b.connection_count()), (1, 1));
    // The larger key yielded: it answered the smaller key's request.
    assert_eq!(b.stats().conn.simultaneous_connects, 1);
    assert_eq!(a.stats().conn.simultaneous_connects, 0);
    // Both directions keep working on the one connection.
    for i in 0..5u8 {
        a.send(9, &card(200), &[&[i]]).unwrap();
        b.send(5, &card(100), &[&[i]]).unwrap();
    }
    drive(&mut [&mut a, &mut b], &mut evs, |e| {
        messages(&e[0]).len() == 6 && messages(&e[1]).len() == 6
    });
}

#[test]
fn unanswered_connect_fails_after_bounded_retries() {
    let net = Net::default();
    let mut a = fabric(&net, 1, 100, 2048);
    a.send(7, &card(999), &[b"hello?"]).unwrap();
    let mut evs = vec![Vec::new()];
    drive(&mut [&mut a], &mut evs, |e| {
        e[0].iter().any(|e| matches!(e, Event::PeerFailed { .. }))
    });
    let Some(Event::PeerFailed { peer, error }) = evs[0]
        .iter()
        .find(|e| matches!(e, Event::PeerFailed { .. }))
    else {
        unreachable!()
    };
    assert_eq!(*peer, 7);
    assert!(
        error
            .to_string()
            .contains("did not answer the connect request"),
        "{error}"
    );
    assert!(matches!(
        a.send(7, &card(999), &[b"again"]),
        Err(VerbsError::PeerFailed { peer: 7, .. })
    ));
    assert_eq!(a.stats().channel.retransmits, 12);
    assert_eq!(a.connection_count(), 0);
}

#[test]
fn drops_still_deliver_everything_exactly_once() {
    let net = Net::default();
    net.lock().unwrap().drop_every = 5; // 20% of datagrams
    let mut a = fabric(&net, 1, 100, 256);
    let mut b = fabric(&net, 2, 200, 256);
    let big: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
    for i in 0..50u32 {
        let mut m = i.to_le_bytes().to_vec();
        if i % 10 == 0 {
            m.extend_from_slice(&big); // packetised into many fragments
        }
        a.control_send(&card(200), &m).unwrap();
    }
    a.send(2, &card(200), &[b"over rc"]).unwrap();
    let mut evs = vec![Vec::new(), Vec::new()];
    let controls = |e: &[Event]| {
        e.iter()
            .filter(|e| matches!(e, Event::Control { .. }))
            .count()
    };
    drive(&mut [&mut a, &mut b], &mut evs, |e| {
        controls(&e[1]) >= 50 && messages(&e[1]).len() == 1
    });
    // Let retransmissions and late duplicates settle, then check exactly once.
    let end = Instant::now() + Duration::from_millis(300);
    while Instant::now() < end {
        a.progress(&mut evs[0]).unwrap();
        b.progress(&mut evs[1]).unwrap();
    }
    let mut seen: Vec<u32> = evs[1]
        .iter()
        .filter_map(|e| match e {
            Event::Control { from, data } => {
                assert_eq!(*from, card(100));
                let i = u32::from_le_bytes(data[..4].try_into().unwrap());
                assert_eq!(&data[4..], if i % 10 == 0 { &big[..] } else { &[][..] });
                Some(i)
            }
            _ => None,
        })
        .collect();
    seen.sort();
    assert_eq!(seen, (0..50).collect::<Vec<_>>());
    assert_eq!(messages(&evs[1]).len(), 1);
    assert!(net.lock().unwrap().dropped > 10);
    assert!(a.stats().channel.retransmits > 0);
    assert_eq!(a.connection_count(), 1);
}

#[test]
fn garbage_foreign_and_truncated_datagrams_are_counted() {
    let net = Net::default();
    let mut a = fabric(&net, 1, 100, 2048);
    let mut b = fabric(&net, 2, 200, 2048);
    let mut foreign = Fabric::with_provider(
        FabricConfig {
            job_secret: 0xbad,
            ..cfg(3)
        },
        Box::new(FakeProvider::new(&net, 300, 2048)),
    )
    .unwrap();
    foreign.control_send(&card(200), b"not for you").unwrap();
    // Capture a real datagram from a, then feed b mangled copies of it.
    let mut capture = FakeProvider::new(&net, 555, 2048);
    a.control_send(&card(555), b"template").unwrap();
    let mut raw = Vec::new();
    {
        use crate::provider::Provider;
        capture.ud_poll(&mut raw).unwrap();
    }
    let good = raw.pop().unwrap();
    let mut inject = FakeProvider::new(&net, 556, 2048);
    use crate::provider::Provider;
    let mut bad: Vec<Vec<u8>> = (0..good.len()).map(|n| good[..n].to_vec()).collect();
    bad.push(vec![0xff; 100]);
    bad.push(b"IBDC".to_vec());
    let mut flipped = good.clone();
    flipped[5] = 99; // unknown kind
    bad.push(flipped);
    for d in &bad {
        inject.ud_send(&card(200), d).unwrap();
    }
    let mut ev = Vec::new();
    b.progress(&mut ev).unwrap();
    assert!(ev.is_empty(), "{ev:?}");
    let s = b.stats().channel;
    assert_eq!(
        s.dropped_foreign + s.dropped_malformed,
        bad.len() as u64 + 1
    );
    assert!(s.dropped_foreign >= 3); // foreign secret, garbage, short magic prefixes
                                     // The real datagram still goes through afterwards.
    inject.ud_send(&card(200), &good).unwrap();
    b.progress(&mut ev).unwrap();
    assert!(matches!(&ev[..], [Event::Control { data, .. }] if data == b"template"));
}
