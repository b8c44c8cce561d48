//! A token goes once around the ring of ranks, each adding its rank; then an allreduce checks
//! the sum. Ranks under one node daemon talk through shared memory, the others over the fabric.
//! `ibdyn run -n 4 --nodes 2 --tag-output target/release/examples/ring`

use ibdyn::traits::*;
use ibdyn::SystemOperation;

fn main() -> Result<(), ibdyn::CommError> {
    let universe = ibdyn::initialize()?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    let node = universe.with_pmi(|p| p.node_id());
    let next = world.process_at_rank((rank + 1) % size);
    let prev = world.process_at_rank((rank + size - 1) % size);
    let token = if rank == 0 {
        next.send(&0i64)?;
        prev.receive::<i64>()?.0
    } else {
        let (t, _) = prev.receive::<i64>()?;
        next.send(&(t + rank as i64))?;
        t
    };
    let mut sum = [0i64];
    world.all_reduce_into(&[rank as i64], &mut sum, SystemOperation::sum())?;
    println!(
        "rank {rank} of {size} on node {node}: token {token}, sum of ranks {} ({} fabric connection(s), provider {})",
        sum[0],
        universe.connection_count(),
        universe.provider().unwrap_or_else(|| "none".into())
    );
    if rank == 0 && token != (size as i64 * (size as i64 - 1)) / 2 {
        eprintln!("ring: the token came back wrong");
        std::process::exit(1);
    }
    universe.finalize()
}
