//! Progress while blocked in the process manager: rank 1 connects to rank 0 (on another node,
//! over the fabric) while rank 0 sits in a PMI fence, which rank 1 joins only once its
//! connection is made. Without progress inside the fence the two would wait for each other
//! until rank 1's bound; with it, rank 0 answers the connection request from the fence.
//! Rank 0 then receives the message, proving the connection carried it.

use ibdyn::traits::*;
use std::time::{Duration, Instant};

/// Rank 1's bound on the connection (rank 0 is blocked for all of it without the fix).
const BOUND: Duration = Duration::from_secs(20);

fn main() {
    let universe = ibdyn::initialize().expect("init");
    let world = universe.world();
    assert_eq!(world.size(), 2, "progress_check runs on 2 ranks");
    match world.rank() {
        0 => {
            universe
                .with_pmi(|p| p.fence())
                .expect("rank 0: fence (rank 1 joins it once connected)");
            let mut buf = [0u8; 8];
            world.recv(&mut buf, 1, 7).expect("rank 0: receive");
            assert_eq!(buf, *b"progress", "rank 0: the message");
            println!("progress_check: rank 0 answered the connection from a PMI fence");
        }
        _ => {
            world.send(b"progress", 0, 7).expect("rank 1: send");
            let start = Instant::now();
            while universe.connection_count() == 0 {
                if start.elapsed() > BOUND {
                    eprintln!(
                        "progress_check: rank 0 did not answer the connection within {BOUND:?} \
                         while in a PMI fence"
                    );
                    std::process::exit(1);
                }
                // Progresses this side only; rank 0 makes no communication call meanwhile.
                world.iprobe(0, 99).expect("rank 1: iprobe");
                std::thread::sleep(Duration::from_millis(1));
            }
            universe.with_pmi(|p| p.fence()).expect("rank 1: fence");
        }
    }
    drop(world);
    universe.finalize().expect("finalize");
}
