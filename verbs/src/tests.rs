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

fn patient(net: &Net, key: u64, port: u16) -> Fabric {
    let cfg = FabricConfig {
        patient_connects: true,
        max_retries: 3,
        ..cfg(key)
    };
    Fabric::with_provider(cfg, Box::new(FakeProvider::new(net, port, 2048))).unwrap()
}

fn slow_reports(ev: &[Event], of: u64) -> usize {
    ev.iter()
        .filter(|e| matches!(e, Event::ConnectSlow { peer, .. } if *peer == of))
        .count()
}

#[test]
fn a_patient_connect_waits_for_a_busy_peer_and_delivers_once_it_progresses() {
    let net = Net::default();
    let mut a = patient(&net, 1, 100);
    let mut b = patient(&net, 2, 200);
    a.send(2, &card(200), &[b"first contact"]).unwrap();
    assert!(a.holds_back(2));
    // The peer is busy (never progresses) for two retry budgets.
    let mut evs = vec![Vec::new(), Vec::new()];
    drive(&mut [&mut a], &mut evs[..1], |e| {
        slow_reports(&e[0], 2) >= 2
    });
    assert!(!evs[0].iter().any(|e| matches!(e, Event::PeerFailed { .. })));
    assert!(a.holds_back(2), "still waiting for the connection");
    // Once it progresses, the message arrives, once.
    drive(&mut [&mut a, &mut b], &mut evs, |e| {
        messages(&e[1]).len() == 1
    });
    for _ in 0..20 {
        a.progress(&mut evs[0]).unwrap();
        b.progress(&mut evs[1]).unwrap();
    }
    assert_eq!(messages(&evs[1]), vec![(1, b"first contact".to_vec())]);
    assert!(!a.holds_back(2));
    assert_eq!((a.connection_count(), b.connection_count()), (1, 1));
    // Now the side that answered is busy: the other's messages go over the connection.
    a.send(2, &card(200), &[b"later"]).unwrap();
    assert!(!a.holds_back(2));
    drive(&mut [&mut a, &mut b], &mut evs, |e| {
        messages(&e[1]).len() == 2
    });
}

#[test]
fn a_patient_connect_ends_when_its_owner_abandons_the_peer() {
    let net = Net::default();
    let mut a = patient(&net, 1, 100);
    a.send(7, &card(999), &[b"hello?"]).unwrap();
    let mut evs = vec![Vec::new()];
    drive(&mut [&mut a], &mut evs, |e| slow_reports(&e[0], 7) == 1);
    a.abandon(7, "the process manager says it exited".into());
    assert!(!a.holds_back(7));
    drive(&mut [&mut a], &mut evs, |e| {
        e[0].iter().any(|e| matches!(e, Event::PeerFailed { .. }))
    });
    assert!(matches!(
        a.send(7, &card(999), &[b"again"]),
        Err(VerbsError::PeerFailed { peer: 7, ref reason }) if reason.contains("exited")
    ));
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
    // Capture a real datagram from a to b (off b's queue), then feed b mangled copies of it.
    let mut capture = FakeProvider::new(&net, 200, 2048);
    a.control_send(&card(200), b"template").unwrap();
    let mut raw = Vec::new();
    {
        use crate::provider::Provider;
        capture.ud_poll(&mut raw).unwrap();
    }
    let good = raw.pop().unwrap();
    foreign.control_send(&card(200), b"not for you").unwrap();
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
                                     // The same datagram meant for another process at another address is dropped too.
    let mut elsewhere = fabric(&net, 4, 555, 2048);
    inject.ud_send(&card(555), &good).unwrap();
    elsewhere.progress(&mut ev).unwrap();
    assert!(ev.is_empty(), "{ev:?}");
    assert_eq!(elsewhere.stats().channel.dropped_misaddressed, 1);
    // The real datagram still goes through afterwards.
    inject.ud_send(&card(200), &good).unwrap();
    b.progress(&mut ev).unwrap();
    assert!(matches!(&ev[..], [Event::Control { data, .. }] if data == b"template"));
}

/// A message of `from` numbered `i`, so order, loss and duplication can be checked.
fn numbered(from: u64, i: u32) -> Vec<u8> {
    let mut m = from.to_le_bytes().to_vec();
    m.extend_from_slice(&i.to_le_bytes());
    m
}

fn peer_failures(ev: &[Event]) -> Vec<String> {
    ev.iter()
        .filter_map(|e| match e {
            Event::PeerFailed { error, .. } => Some(error.to_string()),
            _ => None,
        })
        .collect()
}

/// xorshift: the schedule of a forced race, reproducible from its seed.
fn next(rng: &mut u64) -> u64 {
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    *rng
}

/// Both sides queue messages to each other before either has progressed, so each sends a
/// connect request before it can see the other's: the race, forced. Then progress runs in an
/// order drawn from the seed, with datagrams reordered (and, for some seeds, dropped), more
/// messages are sent while the handshake is in flight, and each side must receive the other's
/// messages exactly once and in order over one connection, under InfiniBand's RC rules.
#[test]
fn forced_simultaneous_connect_under_ib_rules_in_many_schedules() {
    const N: u32 = 24;
    for seed in 1..=400u64 {
        let net = Net::default();
        {
            let mut w = net.lock().unwrap();
            w.strict_rc = true;
            w.shuffle = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
            w.drop_every = if seed % 3 == 0 { 5 } else { 0 };
        }
        let (ka, kb) = if seed % 2 == 0 { (5, 9) } else { (9, 5) };
        let mut a = fabric(&net, ka, 100, 2048);
        let mut b = fabric(&net, kb, 200, 2048);
        let mut sent = 0;
        while sent < N / 2 {
            a.send(kb, &card(200), &[&numbered(ka, sent)]).unwrap();
            b.send(ka, &card(100), &[&numbered(kb, sent)]).unwrap();
            sent += 1;
        }
        let mut evs = [Vec::new(), Vec::new()];
        let mut rng = seed;
        let end = Instant::now() + Duration::from_secs(20);
        while messages(&evs[0]).len() < N as usize || messages(&evs[1]).len() < N as usize {
            assert!(Instant::now() < end, "seed {seed}: stuck; {evs:?}");
            match next(&mut rng) % 4 {
                0 => a.progress(&mut evs[0]).unwrap(),
                1 => b.progress(&mut evs[1]).unwrap(),
                2 if sent < N => {
                    a.send(kb, &card(200), &[&numbered(ka, sent)]).unwrap();
                    b.send(ka, &card(100), &[&numbered(kb, sent)]).unwrap();
                    sent += 1;
                }
                _ => std::thread::sleep(Duration::from_micros(50)),
            }
            for (i, e) in evs.iter().enumerate() {
                let failed = peer_failures(e);
                assert!(failed.is_empty(), "seed {seed}: side {i}: {failed:?}");
            }
        }
        let want = |from: u64| {
            (0..N)
                .map(|i| (from, numbered(from, i)))
                .collect::<Vec<_>>()
        };
        assert_eq!(messages(&evs[0]), want(kb), "seed {seed}");
        assert_eq!(messages(&evs[1]), want(ka), "seed {seed}");
        assert_eq!((a.connection_count(), b.connection_count()), (1, 1));
        // The larger key answered the smaller key's request; the smaller key ignored the other.
        let (larger, smaller) = if ka > kb { (&a, &b) } else { (&b, &a) };
        assert_eq!(larger.stats().conn.simultaneous_connects, 1, "seed {seed}");
        assert_eq!(smaller.stats().conn.simultaneous_connects, 0, "seed {seed}");
        assert_eq!(larger.stats().conn.connect_replies_sent, 1, "seed {seed}");
        assert_eq!(smaller.stats().conn.connect_replies_sent, 0, "seed {seed}");
        assert!(a.flushed() && b.flushed());
    }
}

/// The passive side must not send before the active side's endpoint is connected: under
/// InfiniBand's rules such a send is lost and breaks the connection.
#[test]
fn passive_side_queues_until_the_active_side_is_ready() {
    let net = Net::default();
    net.lock().unwrap().strict_rc = true;
    let mut a = fabric(&net, 1, 100, 2048);
    let mut b = fabric(&net, 2, 200, 2048);
    let mut evs = [Vec::new(), Vec::new()];
    a.send(2, &card(200), &[b"request"]).unwrap();
    a.progress(&mut evs[0]).unwrap(); // the request goes out
    b.progress(&mut evs[1]).unwrap(); // b answers: its endpoint is connected, a's not yet
    b.send(1, &card(100), &[b"early answer"]).unwrap();
    assert!(!b.flushed(), "b must hold its message until a is ready");
    drive(&mut [&mut a, &mut b], &mut evs, |e| {
        messages(&e[0]).len() == 1 && messages(&e[1]).len() == 1
    });
    assert_eq!(messages(&evs[0]), vec![(2, b"early answer".to_vec())]);
    assert!(peer_failures(&evs[0]).is_empty() && peer_failures(&evs[1]).is_empty());
    assert!(a.flushed() && b.flushed());
}

/// What a process hands the fabric is still inside it until `flushed`: a process that leaves
/// once it holds loses nothing, also when it leaves right after a simultaneous connect.
#[test]
fn leaving_once_flushed_loses_nothing() {
    for first_leaves in [1u64, 2] {
        let net = Net::default();
        net.lock().unwrap().strict_rc = true;
        let mut a = fabric(&net, 1, 100, 2048);
        let mut b = fabric(&net, 2, 200, 2048);
        for i in 0..5 {
            a.send(2, &card(200), &[&numbered(1, i)]).unwrap();
            b.send(1, &card(100), &[&numbered(2, i)]).unwrap();
        }
        assert!(!a.flushed() && !b.flushed());
        let (mut leaver, mut stayer, leaver_key) = if first_leaves == 1 {
            (a, b, 1)
        } else {
            (b, a, 2)
        };
        let mut evs = [Vec::new(), Vec::new()];
        // The leaver needs the stayer's answers, so both progress until the leaver holds nothing.
        let end = Instant::now() + Duration::from_secs(20);
        while !leaver.flushed() {
            assert!(Instant::now() < end);
            leaver.progress(&mut evs[0]).unwrap();
            stayer.progress(&mut evs[1]).unwrap();
        }
        drop(leaver);
        drive(&mut [&mut stayer], &mut evs[1..], |e| {
            messages(&e[0]).len() == 5
        });
        let got: Vec<_> = messages(&evs[1]);
        let want: Vec<_> = (0..5)
            .map(|i| (leaver_key, numbered(leaver_key, i)))
            .collect();
        assert_eq!(got, want);
    }
}

#[test]
fn a_break_of_an_endpoint_that_is_no_peers_current_one_is_not_a_peer_failure() {
    let net = Net::default();
    let mut a = fabric(&net, 1, 100, 2048);
    let mut b = fabric(&net, 2, 200, 2048);
    a.send(2, &card(200), &[b"x"]).unwrap();
    let mut evs = [Vec::new(), Vec::new()];
    drive(&mut [&mut a, &mut b], &mut evs, |e| {
        messages(&e[1]).len() == 1
    });
    let mut out = Vec::new();
    a.inject_broken_for_test(4242, &mut out);
    assert!(out.is_empty(), "{out:?}");
    assert_eq!(a.stats().conn.stale_endpoint_breaks, 1);
    assert!(a.is_connected(2));
    a.send(2, &card(200), &[b"y"]).unwrap();
    drive(&mut [&mut a, &mut b], &mut evs, |e| {
        messages(&e[1]).len() == 2
    });
}
