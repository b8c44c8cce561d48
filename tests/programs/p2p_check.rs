//! Point-to-point conformance checks, run under `ibdyn run -n N` (N >= 2). Every rank runs
//! every check; rank 0 prints `p2p_check: all passed` at the end. Any failure exits non-zero
//! with a message naming the check.

use ibdyn::traits::*;
use ibdyn::{CommError, IntraCommunicator, ANY_SOURCE, ANY_TAG};

type R<T = ()> = Result<T, String>;
type Check = (&'static str, fn(&IntraCommunicator) -> R);

fn ctx<T>(what: &str, r: ibdyn::Result<T>) -> R<T> {
    r.map_err(|e| format!("{what}: {e}"))
}

fn pattern(len: usize, seed: usize) -> Vec<u8> {
    (0..len)
        .map(|i| ((i * 31 + seed * 7) % 251) as u8)
        .collect()
}

/// Every size from 0 B to 16 MiB around the eager/rendezvous threshold, around a ring.
fn sizes(world: &IntraCommunicator) -> R {
    let eager = ibdyn::DEFAULT_EAGER_LIMIT;
    let mut sizes = vec![
        0,
        1,
        2,
        7,
        8,
        63,
        64,
        1000,
        4096,
        eager - 1,
        eager,
        eager + 1,
        65536,
        1 << 20,
        (1 << 20) + 3,
    ];
    sizes.push(16 << 20);
    let (rank, size) = (world.rank(), world.size());
    let right = (rank + 1) % size;
    let left = (rank + size - 1) % size;
    for (i, &n) in sizes.iter().enumerate() {
        let out = pattern(n, rank as usize + i);
        let mut inb = vec![0u8; n];
        let st = ctx(
            "sendrecv",
            world.sendrecv(&out, right, i as i32, &mut inb, left, i as i32),
        )?;
        if st.count != n || st.source != left || inb != pattern(n, left as usize + i) {
            return Err(format!("size {n}: wrong data or status {st:?}"));
        }
    }
    Ok(())
}

/// Any-source and any-tag receives report the real source, tag and count.
fn wildcards(world: &IntraCommunicator) -> R {
    let (rank, size) = (world.rank(), world.size());
    if rank == 0 {
        let mut seen = vec![false; size as usize];
        for _ in 1..size {
            let (v, st) = ctx("receive_vec", world.any_process().receive_vec::<u32>())?;
            if v != vec![st.source as u32; 3] || st.tag != 100 + st.source || st.count != 12 {
                return Err(format!("wildcard receive got {v:?} with {st:?}"));
            }
            seen[st.source as usize] = true;
        }
        if !seen[1..].iter().all(|&s| s) {
            return Err("a sender was never matched".into());
        }
    } else {
        ctx(
            "send",
            world
                .process_at_rank(0)
                .send_with_tag(&vec![rank as u32; 3], 100 + rank),
        )?;
    }
    Ok(())
}

/// Messages between a pair on one communicator do not overtake each other, mixed sizes too.
fn ordering(world: &IntraCommunicator) -> R {
    let n = 1000;
    let big = ibdyn::DEFAULT_EAGER_LIMIT * 2;
    match world.rank() {
        0 => {
            for i in 0..n {
                let len = if i % 97 == 0 { big } else { 8 };
                let mut m = vec![0u8; len];
                m[..4].copy_from_slice(&(i as u32).to_le_bytes());
                ctx("send", world.send(&m, 1, 5))?;
            }
        }
        1 => {
            for i in 0..n {
                let (m, _) = ctx("recv_vec", world.recv_vec(0, ANY_TAG))?;
                let got = u32::from_le_bytes(m[..4].try_into().unwrap());
                if got != i as u32 {
                    return Err(format!("message {got} arrived in place of {i}"));
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// Traffic on a duplicate or split communicator never matches receives on another.
fn isolation(world: &IntraCommunicator) -> R {
    let dup = ctx("dup", world.dup())?;
    let halves = ctx(
        "split",
        world.split(Some((world.rank() % 2) as u32), -world.rank()),
    )?
    .ok_or("split gave None")?;
    // The split orders by key: ranks in reverse order.
    let expect_size = (world.size() + 1 - world.rank() % 2) / 2;
    if halves.size() != expect_size || halves.rank() != (expect_size - 1 - world.rank() / 2) {
        return Err(format!(
            "split: rank {} of {} unexpected",
            halves.rank(),
            halves.size()
        ));
    }
    if world.rank() == 0 {
        ctx("send on dup", dup.send(b"dup", 1, 7))?;
        ctx("send on world", world.send(b"world", 1, 7))?;
    } else if world.rank() == 1 {
        let (m, _) = ctx("recv on world", world.recv_vec(0, ANY_TAG))?;
        if m != b"world" {
            return Err(format!(
                "world receive matched {:?}",
                String::from_utf8_lossy(&m)
            ));
        }
        let (m, _) = ctx("recv on dup", dup.recv_vec(ANY_SOURCE, 7))?;
        if m != b"dup" {
            return Err("dup receive got the wrong message".into());
        }
    }
    // A ring on the split halves works.
    let (r, s) = (halves.rank(), halves.size());
    let mut got = [0u8; 4];
    ctx(
        "ring on split",
        halves.sendrecv(
            &r.to_le_bytes(),
            (r + 1) % s,
            0,
            &mut got,
            (r + s - 1) % s,
            0,
        ),
    )?;
    if i32::from_le_bytes(got) != (r + s - 1) % s {
        return Err("ring on split communicator got a wrong value".into());
    }
    halves.free();
    match halves.send(b"x", 0, 0) {
        Err(CommError::CommFreed) => {}
        other => return Err(format!("send on a freed communicator gave {other:?}")),
    }
    Ok(())
}

/// A too-small receive buffer is an error with both sizes; the next message is intact.
fn truncation(world: &IntraCommunicator) -> R {
    for (i, n) in [100usize, ibdyn::DEFAULT_EAGER_LIMIT * 4]
        .into_iter()
        .enumerate()
    {
        if world.rank() == 0 {
            ctx("send big", world.send(&pattern(n, 1), 1, 20 + i as i32))?;
            ctx("send next", world.send(&pattern(n, 2), 1, 20 + i as i32))?;
        } else if world.rank() == 1 {
            let mut small = vec![0u8; 10];
            match world.recv(&mut small, 0, 20 + i as i32) {
                Err(CommError::Truncated {
                    message_len,
                    buffer_len,
                    sender: 0,
                    tag,
                    received,
                }) if message_len == n
                    && buffer_len == 10
                    && tag == 20 + i as i32
                    // An eager message's start is in the buffer; a rendezvous writes nothing.
                    && (received == 10 && small == pattern(n, 1)[..10] || received == 0) => {}
                other => return Err(format!("truncated receive of {n} gave {other:?}")),
            }
            let (m, _) = ctx("recv after truncation", world.recv_vec(0, 20 + i as i32))?;
            if m != pattern(n, 2) {
                return Err("message after a truncation was damaged".into());
            }
        }
    }
    Ok(())
}

/// Bad ranks and tags are errors, not panics.
fn bad_arguments(world: &IntraCommunicator) -> R {
    let size = world.size();
    if !matches!(
        world.send(b"x", size, 0),
        Err(CommError::InvalidRank { .. })
    ) {
        return Err("send to rank == size was not an InvalidRank error".into());
    }
    if !matches!(world.send(b"x", -7, 0), Err(CommError::InvalidRank { .. })) {
        return Err("send to rank -7 was not an InvalidRank error".into());
    }
    if !matches!(world.send(b"x", 0, -5), Err(CommError::InvalidTag(-5))) {
        return Err("negative tag was not an InvalidTag error".into());
    }
    let mut b = [0u8; 1];
    if !matches!(
        world.recv(&mut b, size + 3, 0),
        Err(CommError::InvalidRank { .. })
    ) {
        return Err("receive from a bad rank was not an InvalidRank error".into());
    }
    Ok(())
}

/// Thousands of outstanding non-blocking operations, many unexpected messages.
fn many_outstanding(world: &IntraCommunicator) -> R {
    let n = 3000usize;
    match world.rank() {
        0 => {
            let bufs: Vec<[u8; 16]> = (0..n).map(|i| [(i % 256) as u8; 16]).collect();
            let reqs = bufs
                .iter()
                .enumerate()
                .map(|(i, b)| world.isend(b, 1, (i % 50) as i32))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.to_string())?;
            ctx("wait_all sends", ibdyn::wait_all(reqs))?;
        }
        1 => {
            // Let everything arrive unexpected first.
            ctx("probe", world.probe(0, 49))?;
            let mut bufs = vec![[0u8; 16]; n];
            let mut reqs = Vec::new();
            for (i, b) in bufs.iter_mut().enumerate() {
                reqs.push(ctx("irecv", world.irecv(b, 0, (i % 50) as i32))?);
            }
            let mut done = 0;
            while !reqs.is_empty() {
                ctx("wait_any", ibdyn::wait_any(&mut reqs))?;
                done += 1;
            }
            drop(reqs);
            if done != n
                || bufs
                    .iter()
                    .enumerate()
                    .any(|(i, b)| b[0] != (i % 256) as u8)
            {
                return Err("outstanding receives got wrong data".into());
            }
        }
        _ => {}
    }
    Ok(())
}

fn main() {
    let universe = match ibdyn::initialize() {
        Ok(u) => u,
        Err(e) => {
            eprintln!("p2p_check: init failed: {e}");
            std::process::exit(2);
        }
    };
    let world = universe.world();
    let checks: [Check; 7] = [
        ("sizes", sizes),
        ("wildcards", wildcards),
        ("ordering", ordering),
        ("isolation", isolation),
        ("truncation", truncation),
        ("bad_arguments", bad_arguments),
        ("many_outstanding", many_outstanding),
    ];
    let only: Vec<String> = std::env::args().skip(1).collect();
    for (name, f) in checks {
        if !only.is_empty() && !only.iter().any(|o| o == name) {
            continue;
        }
        if let Err(e) = f(&world) {
            eprintln!("p2p_check: rank {}: {name} FAILED: {e}", world.rank());
            std::process::exit(1);
        }
    }
    if world.rank() == 0 {
        println!("p2p_check: all passed on {} ranks", world.size());
    }
    if let Err(e) = universe.finalize() {
        eprintln!("p2p_check: finalize: {e}");
        std::process::exit(1);
    }
}
