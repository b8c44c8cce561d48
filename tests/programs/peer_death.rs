//! Rank 1 dies (SIGABRT) while rank 0 waits on a rendezvous send to it. Rank 0 must get an
//! error naming the dead peer, not hang; it prints the error and exits 0.

use ibdyn::traits::*;
fn main() {
    let universe = ibdyn::initialize().expect("init");
    let world = universe.world();
    let big = vec![7u8; 8 << 20];
    match world.rank() {
        0 => match world.send(&big, 1, 1) {
            Err(e) => println!("peer_death: send failed as expected: {e}"),
            Ok(()) => {
                eprintln!("peer_death: send to a dead peer succeeded");
                std::process::exit(1);
            }
        },
        1 => {
            // Make sure the rendezvous has started, then die without a word.
            world.probe(0, 1).expect("probe");
            std::process::abort();
        }
        _ => {}
    }
    std::mem::forget(universe);
    std::process::exit(0);
}
