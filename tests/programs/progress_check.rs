//! Progress while this process does not communicate. Rank 1 connects to rank 0 (on another
//! node, over the fabric) while rank 0 is
//! - `fence`: inside a PMI fence, which rank 1 joins only once its connection is made; or
//! - `compute FLAG`: computing without any communication call until rank 1, its connection
//!   made, creates the file FLAG (needs `IBDYN_ASYNC_PROGRESS=1`).
//!
//! Without progress while blocked the two wait for each other until rank 1's bound; with it,
//! rank 0 answers the connection request from the fence or from its progress thread. Rank 0
//! then receives the message, proving the connection carried it.
//!
//! `room` (one node, 3 or more ranks): the other ranks send rank 0 more than its queue holds
//! while rank 0 does not receive for `HOLD`, then wait for rank 0's word that the hold is
//! over. Each reports how long it waited, the CPU time it used and its sleeps meanwhile:
//! waiting for room must not keep the cores busy. Rank 0 wakes the waiting senders when it
//! hands cells back, so they sleep long (where the kernel cannot wait on two futexes at once,
//! they look again, less and less often).
//!
//! `idle` (2 ranks on 2 nodes): rank 1 waits for a message that rank 0 sends only after `HOLD`,
//! and reports the sleeps of its wait: a process whose traffic is all on the fabric blocks in
//! the fabric's poll as long as the idle back-off allows, not 2 ms at a time. It also reports
//! how often it asked the process manager whether rank 0 lives: never, as its connection to
//! rank 0 would break if rank 0 ended.
//!
//! `bell` (3 ranks, 0 and 1 on one node, 2 on the other): ranks 0 and 1 first talk to rank 2,
//! so both wait in the fabric's poll from then on. Rank 1 then waits for a shared-memory
//! message that rank 0 sends after `BELL_HOLD`, and reports how long after the send it got
//! it: the message rings rank 1's bell, which ends the poll at once (without it, the wait
//! would see the message only at the end of its current block).
//!
//! `deep` (2 ranks on 2 nodes, no traffic between them before): rank 1 waits for a message
//! that rank 0 sends only after `DEEP_HOLD`, and reports how long after the send it got it and
//! the sleeps of its wait. After a quarter second the wait blocks deeper, in the fabric's poll
//! although it has no fabric traffic yet, so rank 0's connection request ends the block at once.
//!
//! `busy` (2 ranks on 2 nodes, no traffic between them before): rank 0 computes for `BUSY`,
//! longer than a connect request is retried (3.55 s), without any communication call; rank 1
//! sends it the first message meanwhile and waits for the answer. A peer that computes is not
//! a dead one: rank 1 waits on, and has the answer once rank 0 receives.
//!
//! `sendblock FLAG` / `isendblock FLAG` (2 ranks on 2 nodes, no traffic before): rank 0 sends
//! rank 1 the first message (MPI_Send; MPI_Isend and MPI_Wait) and then makes no
//! communication call until rank 1, having received it, creates the file FLAG, as a process
//! that blocks in `accept` after sending its port does (MPI_Comm_join). The send completes
//! only once the message has left rank 0, so rank 1 has it without rank 0's help.
//!
//! `freeblock FLAG` (2 ranks on 2 nodes, no traffic before): rank 1 makes no communication
//! call until the file FLAG exists; rank 0 starts a send to it (its first message), frees the
//! request (MPI_Request_free) and then creates FLAG. Freeing is local: it does not wait for
//! the connection rank 1 answers only later. Rank 1 then receives the message.
//!
//! `disconnect` (2 ranks): each connects to the other through a port, its own one-process side
//! of an intercommunicator. Rank 1 disconnects at once, rank 0 only after `HOLD`; rank 1 reports
//! the sleeps of its disconnect: rank 0's word ends it, so it may block deep from the start
//! (thousands of workers waiting so for their master woke 50 times a second each).

use ibdyn::traits::*;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Rank 1's bound on the connection, and rank 0's on the flag.
const BOUND: Duration = Duration::from_secs(20);

/// `room`: how long rank 0 leaves its queue full, the messages each other rank sends it.
const HOLD: Duration = Duration::from_secs(2);
const ROOM_MSGS: u32 = 300;
/// `bell`: how long rank 0 waits before it sends (a rank 1 block is then about as long).
const BELL_HOLD: Duration = Duration::from_millis(1200);
/// `deep`: how long rank 0 waits before its first message to rank 1.
const DEEP_HOLD: Duration = Duration::from_secs(4);
/// `busy`: how long rank 0 computes, beyond a connect request's retries (3.55 s).
const BUSY: Duration = Duration::from_secs(5);

enum Mode {
    Fence,
    Compute(PathBuf),
    Room,
    Idle,
    Bell,
    Deep,
    Disconnect,
    Busy,
    SendBlock { flag: PathBuf, immediate: bool },
    FreeBlock(PathBuf),
}

fn mode() -> Mode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [m] if m == "fence" => Mode::Fence,
        [m, flag] if m == "compute" => Mode::Compute(PathBuf::from(flag)),
        [m] if m == "room" => Mode::Room,
        [m] if m == "idle" => Mode::Idle,
        [m] if m == "bell" => Mode::Bell,
        [m] if m == "deep" => Mode::Deep,
        [m] if m == "disconnect" => Mode::Disconnect,
        [m] if m == "busy" => Mode::Busy,
        [m, flag] if m == "freeblock" => Mode::FreeBlock(PathBuf::from(flag)),
        [m, flag] if m == "sendblock" || m == "isendblock" => Mode::SendBlock {
            flag: PathBuf::from(flag),
            immediate: m == "isendblock",
        },
        _ => {
            eprintln!(
                "usage: progress_check fence | compute FLAG_FILE | room | idle | bell | deep \
                 | disconnect | busy | sendblock FLAG_FILE | isendblock FLAG_FILE \
                 | freeblock FLAG_FILE"
            );
            std::process::exit(2);
        }
    }
}

fn fail(what: &str) -> ! {
    eprintln!("progress_check: {what}");
    std::process::exit(1);
}

/// A computation that makes no communication call, until `flag` exists.
fn compute_until(flag: &Path) -> u64 {
    compute_while(|start| {
        if start.elapsed() > BOUND {
            fail("the flag of rank 1's connection did not appear while rank 0 computed");
        }
        !flag.exists()
    })
}

/// Computes without any communication call while `go_on(start)`.
fn compute_while(mut go_on: impl FnMut(Instant) -> bool) -> u64 {
    let start = Instant::now();
    let mut x = 1u64;
    while go_on(start) {
        for i in 0..100_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
        }
    }
    x
}

fn busy(world: &ibdyn::IntraCommunicator) {
    let mut buf = [0u8; 4];
    if world.rank() == 0 {
        std::hint::black_box(compute_while(|start| start.elapsed() < BUSY));
        world.recv(&mut buf, 1, 12).expect("busy: rank 0 receives");
        world.send(b"done", 1, 13).expect("busy: rank 0 answers");
    } else {
        world.send(b"work", 0, 12).expect("busy: rank 1 sends");
        world
            .recv(&mut buf, 0, 13)
            .unwrap_or_else(|e| fail(&format!("busy: rank 1 waits for the answer: {e}")));
        if buf != *b"done" {
            fail("busy: a wrong answer");
        }
        println!("progress_check: busy: rank 1 had the answer of the rank that computed");
    }
}

fn free_block(world: &ibdyn::IntraCommunicator, flag: &Path) {
    let mut buf = [0u8; 4];
    if world.rank() == 0 {
        drop(world.isend(b"free", 1, 15).expect("freeblock: isend"));
        std::fs::write(flag, b"freed").expect("freeblock: write the flag file");
    } else {
        std::hint::black_box(compute_while(|start| {
            if start.elapsed() > BOUND {
                fail("freeblock: rank 0 did not get past freeing its send request");
            }
            !flag.exists()
        }));
        world.recv(&mut buf, 0, 15).expect("freeblock: receive");
        if buf != *b"free" {
            fail("freeblock: a wrong message");
        }
        println!("progress_check: freeblock: rank 0 freed its send at once, and it arrived");
    }
}

fn send_block(world: &ibdyn::IntraCommunicator, flag: &Path, immediate: bool) {
    let mut buf = [0u8; 4];
    if world.rank() == 0 {
        if immediate {
            let r = world.isend(b"port", 1, 14).expect("sendblock: isend");
            r.wait().expect("sendblock: wait");
        } else {
            world.send(b"port", 1, 14).expect("sendblock: send");
        }
        // No communication call until rank 1 has the message (a blocking accept).
        std::hint::black_box(compute_while(|start| {
            if start.elapsed() > BOUND {
                fail("sendblock: rank 1 did not get the message rank 0 had sent");
            }
            !flag.exists()
        }));
        println!(
            "progress_check: sendblock: rank 0's message left before it stopped communicating"
        );
    } else {
        world.recv(&mut buf, 0, 14).expect("sendblock: receive");
        if buf != *b"port" {
            fail("sendblock: a wrong message");
        }
        std::fs::write(flag, b"got it").expect("sendblock: write the flag file");
    }
}

/// CPU time this process has used (user + system), and how many times it went to sleep
/// (voluntary context switches: one per blocking wait).
fn usage() -> (Duration, u64) {
    // SAFETY: getrusage fills the zeroed struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to a rusage for RUSAGE_SELF.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        fail("getrusage");
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    (tv(ru.ru_utime) + tv(ru.ru_stime), ru.ru_nvcsw as u64)
}

/// Runs `wait`, then prints how long it took, the CPU time and the sleeps it used.
fn report(what: &str, me: i32, wait: impl FnOnce()) {
    let (t0, (cpu0, sleeps0)) = (Instant::now(), usage());
    wait();
    let (waited, (cpu1, sleeps1)) = (t0.elapsed(), usage());
    println!(
        "progress_check: {what}: rank {me} waited {} ms using {} ms of CPU and {} sleeps",
        waited.as_millis(),
        (cpu1 - cpu0).as_millis(),
        sleeps1 - sleeps0
    );
}

fn room(world: &ibdyn::IntraCommunicator) {
    let me = world.rank();
    let msg = [me as u8; 1024];
    if me == 0 {
        // A word to each sender rather than a barrier: a barrier's last rank out could still
        // be taking the packets of the first one out, which then never wait for room.
        for to in 1..world.size() {
            world
                .send(&[], to, 7)
                .expect("room: rank 0 starts the hold");
        }
        std::thread::sleep(HOLD);
        for to in 1..world.size() {
            world.send(&[], to, 6).expect("room: rank 0 ends the hold");
        }
        let mut buf = [0u8; 1024];
        for from in 1..world.size() {
            for _ in 0..ROOM_MSGS {
                world
                    .recv(&mut buf, from, 5)
                    .expect("room: rank 0 receives");
                if buf[0] != from as u8 {
                    fail("room: rank 0 received a wrong message");
                }
            }
        }
        world.barrier().expect("room: rank 0's last barrier");
        println!("progress_check: room: rank 0 received every message");
    } else {
        world
            .recv(&mut [], 0, 7)
            .expect("room: the start of the hold");
        for _ in 0..ROOM_MSGS {
            world.send(&msg, 0, 5).expect("room: send");
        }
        report("room", me, || {
            world
                .recv(&mut [], 0, 6)
                .expect("room: the end of the hold");
        });
        world.barrier().expect("room: last barrier");
    }
}

fn idle(universe: &ibdyn::Universe, world: &ibdyn::IntraCommunicator) {
    world.barrier().expect("idle: barrier");
    let mut buf = [0u8; 4];
    if world.rank() == 0 {
        std::thread::sleep(HOLD);
        world.send(b"idle", 1, 6).expect("idle: send");
    } else {
        let queries = || universe.with_pmi(|p| p.job_status_queries());
        let before = queries();
        report("idle", 1, || {
            world.recv(&mut buf, 0, 6).expect("idle: receive");
        });
        if buf != *b"idle" {
            fail("idle: a wrong message");
        }
        println!(
            "progress_check: idle: rank 1 asked the process manager about its peers {} times",
            queries() - before
        );
    }
}

fn disconnect(universe: &ibdyn::Universe, world: &ibdyn::IntraCommunicator) {
    let me = universe.self_comm();
    let other = if world.rank() == 0 {
        let port = ibdyn::open_port(&me);
        world
            .send(port.name().as_bytes(), 1, 11)
            .expect("disconnect: send the port");
        let c = me
            .process_at_rank(0)
            .accept(&port)
            .expect("disconnect: accept");
        ibdyn::close_port(port);
        c
    } else {
        let (name, _) = world.recv_vec(0, 11).expect("disconnect: the port");
        let name = String::from_utf8(name).unwrap_or_else(|_| fail("disconnect: port name"));
        me.process_at_rank(0)
            .connect(&name)
            .expect("disconnect: connect")
    };
    if world.rank() == 0 {
        std::thread::sleep(HOLD);
        other.disconnect().expect("disconnect: rank 0");
    } else {
        report("disconnect", 1, || {
            other.disconnect().expect("disconnect: rank 1");
        });
    }
}

/// CLOCK_MONOTONIC in nanoseconds: one clock for every process of the machine.
fn monotonic_ns() -> u64 {
    // SAFETY: clock_gettime fills the zeroed timespec it is given.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to a timespec.
    if unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) } != 0 {
        fail("clock_gettime");
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn bell(world: &ibdyn::IntraCommunicator) {
    let mut buf = [0u8; 8];
    match world.rank() {
        2 => {
            for from in 0..2 {
                world
                    .recv(&mut buf, from, 8)
                    .expect("bell: rank 2 receives");
                world.send(&buf, from, 8).expect("bell: rank 2 answers");
            }
        }
        _ => {
            world.send(b"fabric!!", 2, 8).expect("bell: send to rank 2");
            world.recv(&mut buf, 2, 8).expect("bell: rank 2's answer");
        }
    }
    world.barrier().expect("bell: barrier");
    timed_receive(world, "bell", BELL_HOLD, 9);
}

/// Rank 0 sends rank 1 the time after `hold`; rank 1 reports its wait and how late it had it.
fn timed_receive(world: &ibdyn::IntraCommunicator, what: &str, hold: Duration, tag: i32) {
    match world.rank() {
        0 => {
            std::thread::sleep(hold);
            world
                .send(&monotonic_ns().to_le_bytes(), 1, tag)
                .unwrap_or_else(|e| fail(&format!("{what}: rank 0 sends: {e}")));
        }
        1 => {
            let mut buf = [0u8; 8];
            report(what, 1, || {
                world
                    .recv(&mut buf, 0, tag)
                    .unwrap_or_else(|e| fail(&format!("{what}: rank 1 receives: {e}")));
            });
            let late = monotonic_ns().saturating_sub(u64::from_le_bytes(buf));
            println!(
                "progress_check: {what}: rank 1 had the message {} us after it was sent",
                late / 1000
            );
        }
        _ => {}
    }
}

fn main() {
    let mode = mode();
    let universe = ibdyn::initialize().expect("init");
    let world = universe.world();
    if let Mode::Room
    | Mode::Idle
    | Mode::Bell
    | Mode::Deep
    | Mode::Disconnect
    | Mode::Busy
    | Mode::SendBlock { .. }
    | Mode::FreeBlock(_) = mode
    {
        match &mode {
            Mode::Room if world.size() >= 3 => room(&world),
            Mode::Idle if world.size() == 2 => idle(&universe, &world),
            Mode::Bell if world.size() == 3 => bell(&world),
            Mode::Deep if world.size() == 2 => timed_receive(&world, "deep", DEEP_HOLD, 10),
            Mode::Disconnect if world.size() == 2 => disconnect(&universe, &world),
            Mode::Busy if world.size() == 2 => busy(&world),
            Mode::SendBlock { flag, immediate } if world.size() == 2 => {
                send_block(&world, flag, *immediate)
            }
            Mode::FreeBlock(flag) if world.size() == 2 => free_block(&world, flag),
            _ => fail(
                "room runs on 3 or more ranks, idle, deep, disconnect, busy and sendblock on 2, \
                 bell on 3",
            ),
        }
        drop(world);
        universe.finalize().expect("finalize");
        return;
    }
    if world.size() != 2 {
        fail("runs on 2 ranks");
    }
    match world.rank() {
        0 => {
            let how = match &mode {
                Mode::Fence => {
                    universe
                        .with_pmi(|p| p.fence())
                        .expect("rank 0: fence (rank 1 joins it once connected)");
                    "a PMI fence"
                }
                Mode::Compute(flag) => {
                    std::hint::black_box(compute_until(flag));
                    "a computation"
                }
                _ => unreachable!("handled above"),
            };
            let mut buf = [0u8; 8];
            world.recv(&mut buf, 1, 7).expect("rank 0: receive");
            if buf != *b"progress" {
                fail("rank 0 received a wrong message");
            }
            println!("progress_check: rank 0 answered the connection from {how}");
        }
        _ => {
            world.send(b"progress", 0, 7).expect("rank 1: send");
            let start = Instant::now();
            while universe.connection_count() == 0 {
                if start.elapsed() > BOUND {
                    fail("rank 0 did not answer the connection while it did not communicate");
                }
                // Progresses this side only; rank 0 makes no communication call meanwhile.
                world.iprobe(0, 99).expect("rank 1: iprobe");
                std::thread::sleep(Duration::from_millis(1));
            }
            match &mode {
                Mode::Fence => universe.with_pmi(|p| p.fence()).expect("rank 1: fence"),
                Mode::Compute(flag) => {
                    std::fs::write(flag, b"connected").expect("rank 1: write the flag file")
                }
                _ => unreachable!("handled above"),
            }
        }
    }
    drop(world);
    universe.finalize().expect("finalize");
}
