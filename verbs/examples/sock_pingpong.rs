//! Quick `sock` measurement through `Fabric` between two processes on loopback:
//! 8-byte one-way latency, 1 MiB send bandwidth, 1 MiB RDMA-read (emulated) bandwidth.
//! Run: `cargo run --release -p ibdyn-verbs --example sock_pingpong`

use ibdyn_verbs::{AddressCard, Event, Fabric, FabricConfig, ProviderKind, RemoteBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const MIB: usize = 1 << 20;

fn cfg(key: u64) -> FabricConfig {
    FabricConfig {
        provider: Some(ProviderKind::Sock),
        job_secret: 42,
        local_key: key,
        ..FabricConfig::default()
    }
}

/// Progress until one event matching `pick` arrives (bounded); returns it.
fn next(f: &mut Fabric, ev: &mut Vec<Event>, pick: impl Fn(&Event) -> bool) -> Event {
    let end = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(i) = ev.iter().position(&pick) {
            return ev.remove(i);
        }
        let before = ev.len();
        f.progress(ev).expect("progress");
        if ev.len() == before {
            // Nothing new: block on the sockets instead of spinning against the peer for the CPU.
            f.wait(Duration::from_millis(10));
        }
        assert!(Instant::now() < end, "timed out; events {ev:?}");
    }
}

fn is_msg(e: &Event) -> bool {
    matches!(e, Event::Message { .. })
}

fn child(parent: AddressCard) {
    let mut f = Fabric::open(cfg(2)).unwrap();
    let src = vec![5u8; MIB];
    let rb = f.expose(src.as_ptr(), src.len()).unwrap();
    f.send(1, &parent, &[&f.card().to_bytes(), &rb.to_bytes()])
        .unwrap();
    let mut ev = Vec::new();
    loop {
        let Event::Message { data, .. } = next(&mut f, &mut ev, is_msg) else {
            unreachable!()
        };
        match data.first() {
            Some(b'p') => f.send(1, &parent, &[&data]).unwrap(),
            Some(b'a') => f.send(1, &parent, &[b"a"]).unwrap(),
            Some(b'q') => break,
            _ => {}
        }
    }
    // Linger so the last reply leaves before the sockets close.
    let end = Instant::now() + Duration::from_millis(100);
    while Instant::now() < end {
        f.progress(&mut ev).unwrap();
        f.wait(Duration::from_millis(5));
    }
}

fn main() {
    if let Some(hex) = std::env::args().nth(1) {
        return child(AddressCard::from_hex(&hex).unwrap());
    }
    let mut f = Fabric::open(cfg(1)).unwrap();
    let mut kid = Command::new(std::env::current_exe().unwrap())
        .arg(f.card().to_hex())
        .spawn()
        .unwrap();
    let mut ev = Vec::new();
    let t0 = Instant::now();
    let Event::Message { data, .. } = next(&mut f, &mut ev, is_msg) else {
        unreachable!()
    };
    let wireup = t0.elapsed();
    let n = data.len() - RemoteBuf::WIRE_LEN;
    let card = AddressCard::from_bytes(&data[..n]).unwrap();
    let rb = RemoteBuf::from_bytes(&data[n..]).unwrap();

    let iters = 5000;
    let ping = *b"p0000000";
    for _ in 0..100 {
        f.send(2, &card, &[&ping]).unwrap();
        next(&mut f, &mut ev, is_msg);
    }
    let t = Instant::now();
    for _ in 0..iters {
        f.send(2, &card, &[&ping]).unwrap();
        next(&mut f, &mut ev, is_msg);
    }
    let lat = t.elapsed().as_secs_f64() * 1e6 / iters as f64 / 2.0;

    let big = vec![b'b'; MIB];
    let reps = 64;
    let t = Instant::now();
    for _ in 0..reps {
        f.send(2, &card, &[&big]).unwrap();
    }
    f.send(2, &card, &[b"a"]).unwrap();
    next(&mut f, &mut ev, is_msg);
    let send_bw = (reps * MIB) as f64 / t.elapsed().as_secs_f64() / 1e6;

    let mut dst = vec![0u8; MIB];
    let t = Instant::now();
    for token in 0..reps as u64 {
        // SAFETY: dst outlives the read, which completes before the next iteration.
        unsafe { f.read(2, &card, rb, dst.as_mut_ptr(), MIB, token).unwrap() };
        next(&mut f, &mut ev, |e| {
            matches!(e, Event::ReadDone { .. } | Event::ReadFailed { .. })
        });
    }
    let read_bw = (reps * MIB) as f64 / t.elapsed().as_secs_f64() / 1e6;
    assert!(dst.iter().all(|&x| x == 5));

    f.send(2, &card, &[b"q"]).unwrap();
    let end = Instant::now() + Duration::from_secs(10);
    while kid.try_wait().unwrap().is_none() {
        f.progress(&mut ev).unwrap();
        f.wait(Duration::from_millis(5));
        if Instant::now() > end {
            let _ = kid.kill();
        }
    }
    println!("# sock over loopback, two processes, through Fabric");
    println!(
        "{:<34}{:>12.1}",
        "wire-up incl. child start (ms)",
        wireup.as_secs_f64() * 1e3
    );
    println!("{:<34}{:>12.2}", "8 B one-way latency (us)", lat);
    println!("{:<34}{:>12.0}", "1 MiB send bandwidth (MB/s)", send_bw);
    println!("{:<34}{:>12.0}", "1 MiB read bandwidth (MB/s)", read_bw);
    println!("stats: {:?}", f.stats());
}
