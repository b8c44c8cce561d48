//! Progress while blocked: a process inside a blocking process-manager call, or computing
//! with `IBDYN_ASYNC_PROGRESS=1`, still answers fabric connection requests, so a peer's connect
//! never waits for its next communication call. The peer's bound (20 s) is what the job would
//! hit without it.

mod common;
use std::process::Output;

fn run(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let prog = common::example_bin("progress_check");
    let mut c = common::ibdyn_bounded();
    c.args(["run", "-n", "2", "--nodes", "2", "--map-by", "node"])
        .arg(&prog)
        .args(args)
        .env("IBDYN_PROVIDER", "sock");
    for (k, v) in envs {
        c.env(k, v);
    }
    c.output().expect("start ibdyn run")
}

/// `run` of `mode FLAG_FILE`, the flag in a scratch directory of its own, removed after.
fn run_with_flag(mode: &str, envs: &[(&str, &str)]) -> Output {
    let dir = std::env::temp_dir().join(format!("ibdyn-{mode}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let flag = dir.join("flag");
    let out = run(&[mode, flag.to_str().expect("a UTF-8 path")], envs);
    let _ = std::fs::remove_dir_all(&dir);
    out
}

/// The job's standard output, once it is known to have succeeded.
fn succeeded(out: &Output) -> String {
    let stdout = common::text(&out.stdout);
    assert!(
        out.status.success(),
        "job failed: {}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        common::text(&out.stderr)
    );
    stdout
}

fn assert_answered(out: &Output, from: &str) {
    let stdout = succeeded(out);
    let stderr = common::text(&out.stderr);
    let want = format!("progress_check: rank 0 answered the connection from {from}");
    assert!(
        stdout.contains(&want),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
}

#[test]
fn a_connection_is_answered_from_inside_a_pmi_fence() {
    assert_answered(&run(&["fence"], &[]), "a PMI fence");
}

#[test]
fn a_connection_is_answered_during_a_computation_by_the_progress_thread() {
    let out = run_with_flag("compute", &[("IBDYN_ASYNC_PROGRESS", "1")]);
    assert_answered(&out, "a computation");
}

/// A rank that computes outside MPI for longer than a connect request is retried (3.55 s)
/// is not taken for dead: the rank that sent it its first message waits on for its answer.
#[test]
fn a_rank_that_computes_past_the_connect_retries_is_waited_for() {
    let stdout = succeeded(&run(&["busy"], &[]));
    assert!(
        stdout.contains("progress_check: busy: rank 1 had the answer of the rank that computed"),
        "stdout:\n{stdout}"
    );
}

/// A first message to another node has left its sender when MPI_Send (or MPI_Isend and
/// MPI_Wait) returns: the receiver has it while the sender makes no further MPI call, as
/// MPI_Comm_join's sender of the port does. Without it rank 0 fails at its bound (20 s).
#[test]
fn a_completed_first_send_to_another_node_needs_no_later_call_of_its_sender() {
    for mode in ["sendblock", "isendblock"] {
        let stdout = succeeded(&run_with_flag(mode, &[]));
        assert!(
            stdout.contains("progress_check: sendblock: rank 0's message left"),
            "{mode}: stdout:\n{stdout}"
        );
    }
}

/// Freeing the request of a first send to another node (MPI_Request_free) is local: it does
/// not wait for the connection, which the receiver, outside MPI until then, answers later.
/// Without it both wait for each other until rank 1's bound (20 s).
#[test]
fn freeing_a_first_send_to_another_node_does_not_wait_for_its_connection() {
    let stdout = succeeded(&run_with_flag("freeblock", &[]));
    assert!(
        stdout.contains("progress_check: freeblock: rank 0 freed its send at once"),
        "stdout:\n{stdout}"
    );
}

/// The waits a `progress_check` job reported: (line, ms waited, ms of CPU, sleeps).
fn waits(out: &Output) -> Vec<(String, u64, u64, u64)> {
    succeeded(out)
        .lines()
        .filter(|l| l.contains(" waited "))
        .map(|line| {
            let num = |after: &str| -> u64 {
                let rest = line.split(after).nth(1).expect("a number follows");
                rest.split_whitespace().next().unwrap().parse().unwrap()
            };
            (
                line.to_string(),
                num(" waited "),
                num(" using "),
                num(" and "),
            )
        })
        .collect()
}

/// Each wait lasted through the peer's 2 s hold, and went to sleep at most once per 5 ms on
/// average (a wait that looked again every 50 us, or every 2 ms, sleeps hundreds of times).
fn assert_slept_long(waits: &[(String, u64, u64, u64)]) {
    for (line, waited, _, sleeps) in waits {
        assert!(*waited >= 1000, "the wait did not last the hold: {line}");
        assert!(sleeps * 5 < *waited, "the wait woke too often: {line}");
    }
}

/// Whether this kernel has `futex_waitv` (Linux 5.16), which a wait for room needs to sleep on
/// the full queue and on its own at once.
fn kernel_waits_on_two_futexes() -> bool {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut v = release
        .split(|c: char| !c.is_ascii_digit())
        .map(|n| n.parse::<u32>().unwrap_or(0));
    let (major, minor) = (v.next().unwrap_or(0), v.next().unwrap_or(0));
    (major, minor) >= (5, 16)
}

/// Four ranks send rank 0 more than its queue holds while rank 0 does not receive for 2 s.
/// Their packets wait for room: each wait must leave the cores alone. With a retry every 50 us
/// each used about 15% of a core (300 ms of 2 s); 500 such senders, children disconnecting
/// from their master, starved the master for seconds. Rank 0 wakes them when it hands cells
/// back, so they sleep fewer than once per 40 ms (10 sleeps in 2 s here); looking again every
/// 25.6 ms at most, as they did before, made about 100, and 2000 children doing so took
/// 2.3-2.8 s to disconnect from their master (0.34-0.41 s signalled).
#[test]
fn senders_waiting_for_room_in_a_full_queue_leave_the_cores_alone() {
    let prog = common::example_bin("progress_check");
    let out = common::ibdyn_bounded()
        .args(["run", "-n", "5"])
        .arg(&prog)
        .arg("room")
        .output()
        .expect("start ibdyn run");
    assert!(common::text(&out.stdout).contains("rank 0 received every message"));
    let waits = waits(&out);
    assert_eq!(waits.len(), 4, "{waits:?}");
    assert_slept_long(&waits);
    let signalled = kernel_waits_on_two_futexes();
    if !signalled {
        eprintln!("SKIPPED (in part): this kernel has no futex_waitv (Linux 5.16+), so room is not signalled");
    }
    for (line, waited, cpu, sleeps) in &waits {
        assert!(cpu * 100 < waited * 3, "more than 3% of a core: {line}");
        if signalled {
            assert!(
                sleeps * 40 < *waited,
                "the wait for room was not signalled: {line}"
            );
        }
    }
}

/// A process whose traffic is all on the fabric (here rank 1, alone on its node) waits in the
/// fabric's poll, which its sockets and its shared-memory bell end: it need not wake every
/// 2 ms to look at its queue. 500 spawned children on another node than their master did
/// (959 sleeps in this wait), and took the cores from it.
#[test]
fn a_process_talking_only_over_the_fabric_sleeps_through_an_idle_wait() {
    let out = run(&["idle"], &[]);
    let waits = waits(&out);
    assert_eq!(waits.len(), 1, "{waits:?}");
    assert_slept_long(&waits);
    // Its blocks deepen after a quarter second: 34 sleeps in the 2 s here. Deepening after a
    // second made 67, and hundreds of workers a master had just spawned waking so took a
    // fifth of its spawning time.
    let (line, waited, _, sleeps) = &waits[0];
    assert!(sleeps * 40 < *waited, "the wait deepened late: {line}");
    // Nor does it ask the process manager every second whether the peer it waits for lives:
    // the connection would break. 1000 spawned workers on another node than their master
    // doing so took 100-170 s to disconnect from it (3.3 s without).
    let stdout = common::text(&out.stdout);
    assert!(
        stdout.contains("asked the process manager about its peers 0 times"),
        "{stdout}"
    );
}

/// How long after its send rank 1 had the timed message, in microseconds.
fn delay_us(out: &Output) -> u64 {
    let stdout = common::text(&out.stdout);
    stdout
        .lines()
        .find_map(|l| l.split(" had the message ").nth(1))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no delay reported:\n{stdout}"))
}

/// A shared-memory message ends a wait in the fabric's poll at once, through the receiver's
/// bell. The wait is forced deep: blocks of up to 60 s once it has waited a quarter second, and
/// the message sent 1.2 s in, while the wait is in such a block. It arrives within 300 ms (it
/// takes well under 1 ms; seen only at the block's end it would take a minute), and the wait
/// slept rarely (a process that looked at its queue every 2 ms instead of having a bell slept
/// 600 times).
#[test]
fn a_shared_memory_message_rings_a_process_asleep_in_the_fabric_poll() {
    let prog = common::example_bin("progress_check");
    let out = common::ibdyn_bounded()
        .args(["run", "-n", "3", "--nodes", "2", "--map-by", "slot"])
        .arg(&prog)
        .arg("bell")
        .env("IBDYN_PROVIDER", "sock")
        .env("IBDYN_IDLE_BLOCK_MS", "60000")
        .output()
        .expect("start ibdyn run");
    let waits = waits(&out);
    assert_eq!(waits.len(), 1, "{waits:?}");
    assert_slept_long(&waits);
    let late = delay_us(&out);
    assert!(
        late < 300_000,
        "the message waited {late} us for the block's end"
    );
}

/// A wait idle for a quarter second blocks deeper (here up to 60 s), and does so in the fabric's
/// poll even when the process has no fabric traffic yet: a first connection request from another
/// node must end the block, not wait for its end. Rank 1 waits 4 s for rank 0's first message;
/// it slept rarely (at the 20 ms bound it would sleep about 200 times) and had the message
/// within 5 s of the send (it takes milliseconds; asleep on the shared-memory doorbell instead,
/// the request would wait a minute).
#[test]
fn a_first_connection_request_ends_a_deep_idle_block() {
    let out = run(&["deep"], &[("IBDYN_IDLE_BLOCK_MS", "60000")]);
    let waits = waits(&out);
    assert_eq!(waits.len(), 1, "{waits:?}");
    let (line, waited, _, sleeps) = &waits[0];
    assert!(*waited >= 2000, "the wait did not last the hold: {line}");
    assert!(
        sleeps * 40 < *waited,
        "the wait did not block deeper: {line}"
    );
    let late = delay_us(&out);
    assert!(
        late < 5_000_000,
        "the request waited {late} us for the block's end"
    );
}

/// A disconnect waits for the other side, whose word rings the waiting process, so its blocks
/// may be deep from the start. Rank 1 waits 2 s in its disconnect for rank 0's: it must sleep
/// fewer than once per 40 ms. Held at 20 ms for the wait's first second, as every wait was then, it
/// slept 60 times (18 now), and 2000 workers waiting so for their master to reach them took the
/// cores from it (its disconnects took 1.1-1.5 s instead of 0.4-0.6 s).
#[test]
fn a_disconnect_waiting_for_the_other_side_sleeps_long() {
    let prog = common::example_bin("progress_check");
    for nodes in ["1", "2"] {
        let out = common::ibdyn_bounded()
            .args(["run", "-n", "2", "--nodes", nodes, "--map-by", "node"])
            .arg(&prog)
            .arg("disconnect")
            .output()
            .expect("start ibdyn run");
        let waits = waits(&out);
        assert_eq!(waits.len(), 1, "{waits:?}");
        let (line, waited, _, sleeps) = &waits[0];
        assert!(*waited >= 1000, "the wait did not last the hold: {line}");
        assert!(
            sleeps * 40 < *waited,
            "the disconnect woke too often on {nodes} node(s): {line}"
        );
    }
}
