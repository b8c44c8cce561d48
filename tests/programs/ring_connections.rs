//! Each rank exchanges a message with its two ring neighbours, then prints how many fabric
//! connections it holds: on-demand wire-up makes exactly those it needs.

use ibdyn::traits::*;
fn main() -> Result<(), ibdyn::CommError> {
    let u = ibdyn::initialize()?;
    let w = u.world();
    let (r, n) = (w.rank(), w.size());
    let mut got = [0u8; 4];
    w.sendrecv(
        &r.to_le_bytes(),
        (r + 1) % n,
        0,
        &mut got,
        (r + n - 1) % n,
        0,
    )?;
    w.sendrecv(
        &r.to_le_bytes(),
        (r + n - 1) % n,
        1,
        &mut got,
        (r + 1) % n,
        1,
    )?;
    // Meet through the process manager (no fabric traffic), so no later connection is counted.
    u.with_pmi(|p| p.barrier())?;
    println!("rank {r}: connections {}", u.connection_count());
    u.with_pmi(|p| p.barrier())?;
    u.finalize()
}
