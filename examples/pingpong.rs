//! Ping-pong between ranks 0 and 1: prints the one-way latency for a few sizes.
//! `ibdyn run -n 2 target/release/examples/pingpong`

use ibdyn::traits::*;
use std::time::Instant;

fn main() -> Result<(), ibdyn::CommError> {
    let universe = ibdyn::initialize()?;
    let world = universe.world();
    if world.size() < 2 {
        eprintln!("pingpong needs 2 ranks");
        std::process::exit(2);
    }
    let rank = world.rank();
    for size in [8usize, 1024, 65536, 1 << 20] {
        let iters = if size <= 1024 { 20000 } else { 500 };
        let sbuf = vec![1u8; size];
        let mut rbuf = vec![0u8; size];
        let mut t0 = Instant::now();
        for i in 0..iters + 100 {
            if i == 100 {
                t0 = Instant::now();
            }
            match rank {
                0 => {
                    world.send(&sbuf, 1, 0)?;
                    world.recv(&mut rbuf, 1, 0)?;
                }
                1 => {
                    world.recv(&mut rbuf, 0, 0)?;
                    world.send(&sbuf, 0, 0)?;
                }
                _ => {}
            }
        }
        if rank == 0 {
            let us = t0.elapsed().as_secs_f64() * 1e6 / (2.0 * iters as f64);
            println!(
                "{size:>8} B  {us:>9.3} us one-way  {:>8.1} MB/s",
                size as f64 / us
            );
        }
    }
    universe.finalize()
}
