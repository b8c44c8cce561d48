//! Graph and distributed-graph topologies: MPI_Graph_create (+ _get, _neighbors(_count),
//! _map, Graphdims_get) and MPI_Dist_graph_create(_adjacent) (+ _neighbors(_count)). Like
//! Cartesian ones (`cart.rs`), the communicator is a split of the old one in rank order with
//! the topology kept beside it (`crate::topology`); neighbor collectives use its lists.

use super::{out, read_array as ints};
use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
use crate::state::{with_state, State};
use crate::topology::{DistGraph, Graph, Topology};
use crate::{call, export};
use ibdyn::traits::*;
use ibdyn::IntraCommunicator;
use std::os::raw::c_int;

const MPI_UNWEIGHTED: usize = 10;
const MPI_WEIGHTS_EMPTY: usize = 11;

/// Weights: None for MPI_UNWEIGHTED, an empty list for MPI_WEIGHTS_EMPTY.
///
/// # Safety
/// As `ints`.
unsafe fn weights(p: *const c_int, n: usize) -> MpiResult<Option<Vec<c_int>>> {
    match p as usize {
        MPI_UNWEIGHTED => Ok(None),
        MPI_WEIGHTS_EMPTY => Ok(Some(vec![0; n])),
        // SAFETY: passed on.
        _ => unsafe { ints(p, n, "weights") }.map(Some),
    }
}

fn len(n: c_int, what: &str) -> MpiResult<usize> {
    usize::try_from(n).or_else(|_| err(MPI_ERR_ARG, format!("{what} {n} is negative")))
}

fn check_ranks(v: &[c_int], size: c_int, what: &str) -> MpiResult<()> {
    match v.iter().find(|&&r| !(0..size).contains(&r)) {
        Some(r) => err(
            MPI_ERR_RANK,
            format!("{what} holds {r}, not a rank of a communicator of {size}"),
        ),
        None => Ok(()),
    }
}

/// Splits `comm` to the first ranks, as many as `n` says after its checks of the
/// intracommunicator (the rest get MPI_COMM_NULL), and attaches `topo`. The members exchange
/// with the state released (`state::staged`).
pub(super) fn attach(
    comm: Handle,
    name: &str,
    n: impl FnOnce(&IntraCommunicator) -> MpiResult<c_int>,
    topo: Topology,
) -> MpiResult<Handle> {
    let h = super::comm::split_staged(comm, |c| {
        let intra = c.intra(name)?;
        let n = n(intra)?;
        Ok(((intra.rank() < n).then_some(0), intra.rank()))
    })?;
    if h != MPI_COMM_NULL {
        with_state(|s| {
            s.comm_mut(h)?.topo = Some(topo);
            Ok(())
        })?;
    }
    Ok(h)
}

fn topology(s: &State, comm: Handle) -> MpiResult<Topology> {
    s.comm(comm)?.topo.clone().ok_or_else(|| {
        MpiError::new(
            MPI_ERR_TOPOLOGY,
            format!("communicator {comm:#x} has no process topology"),
        )
    })
}

fn graph_of(s: &State, comm: Handle) -> MpiResult<Graph> {
    match topology(s, comm)? {
        Topology::Graph(g) => Ok(g),
        _ => err(
            MPI_ERR_TOPOLOGY,
            format!("communicator {comm:#x} has no graph topology (MPI_Graph_create)"),
        ),
    }
}

/// Checks a graph of `nnodes` given as MPI_Graph_create takes it.
fn graph(nnodes: c_int, index: Vec<c_int>, edges: Vec<c_int>) -> MpiResult<Graph> {
    if index.windows(2).any(|w| w[1] < w[0]) || index.first().is_some_and(|&i| i < 0) {
        return err(MPI_ERR_ARG, "index must be non-decreasing and non-negative");
    }
    if index.last().map_or(0, |&i| i as usize) != edges.len() {
        return err(
            MPI_ERR_ARG,
            "index's last entry must be the number of edges",
        );
    }
    check_ranks(&edges, nnodes, "edges")?;
    Ok(Graph { index, edges })
}

#[allow(clippy::too_many_arguments)]
unsafe fn graph_create(
    comm_old: Handle,
    nnodes: c_int,
    index: *const c_int,
    edges: *const c_int,
    _reorder: c_int,
    comm_graph: *mut Handle,
) -> c_int {
    call("MPI_Graph_create", comm_old, || {
        let n = len(nnodes, "nnodes")?;
        // SAFETY: the caller's arrays: nnodes entries, then index[nnodes - 1] edges.
        let index = unsafe { ints(index, n, "index") }?;
        let ne = index.last().map_or(0, |&i| i.max(0) as usize);
        // SAFETY: as above.
        let g = graph(nnodes, index, unsafe { ints(edges, ne, "edges") }?)?;
        let fits = |c: &IntraCommunicator| {
            let size = c.size();
            if nnodes > size {
                return err(
                    MPI_ERR_ARG,
                    format!("nnodes {nnodes} exceeds the communicator's {size} processes"),
                );
            }
            Ok(nnodes)
        };
        let h = attach(comm_old, "MPI_Graph_create", fits, Topology::Graph(g))?;
        // SAFETY: the caller's output argument.
        unsafe { out(comm_graph, h, "comm_graph") }
    })
}

unsafe fn graphdims_get(comm: Handle, nnodes: *mut c_int, nedges: *mut c_int) -> c_int {
    call("MPI_Graphdims_get", comm, || {
        let g = with_state(|s| graph_of(s, comm))?;
        // SAFETY: the caller's output arguments.
        unsafe {
            out(nnodes, g.index.len() as c_int, "nnodes")?;
            out(nedges, g.edges.len() as c_int, "nedges")
        }
    })
}

/// Copies `v` into the caller's array of `max` entries (as many as fit).
///
/// # Safety
/// `p` is valid for `max` writes.
unsafe fn put(p: *mut c_int, max: c_int, v: &[c_int]) -> MpiResult<()> {
    let n = v.len().min(max.max(0) as usize);
    if n > 0 {
        if p.is_null() {
            return err(MPI_ERR_ARG, "an output array is NULL");
        }
        // SAFETY: the caller's contract; n <= max.
        unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), p, n) };
    }
    Ok(())
}

unsafe fn graph_get(
    comm: Handle,
    maxindex: c_int,
    maxedges: c_int,
    index: *mut c_int,
    edges: *mut c_int,
) -> c_int {
    call("MPI_Graph_get", comm, || {
        let g = with_state(|s| graph_of(s, comm))?;
        // SAFETY: the caller's arrays.
        unsafe {
            put(index, maxindex, &g.index)?;
            put(edges, maxedges, &g.edges)
        }
    })
}

unsafe fn graph_neighbors_count(comm: Handle, rank: c_int, nneighbors: *mut c_int) -> c_int {
    call("MPI_Graph_neighbors_count", comm, || {
        let g = with_state(|s| graph_of(s, comm))?;
        check_ranks(&[rank], g.index.len() as c_int, "rank")?;
        // SAFETY: the caller's output argument.
        unsafe { out(nneighbors, g.neighbors(rank).len() as c_int, "nneighbors") }
    })
}

unsafe fn graph_neighbors(
    comm: Handle,
    rank: c_int,
    maxneighbors: c_int,
    neighbors: *mut c_int,
) -> c_int {
    call("MPI_Graph_neighbors", comm, || {
        let g = with_state(|s| graph_of(s, comm))?;
        check_ranks(&[rank], g.index.len() as c_int, "rank")?;
        // SAFETY: the caller's array.
        unsafe { put(neighbors, maxneighbors, g.neighbors(rank)) }
    })
}

unsafe fn graph_map(
    comm: Handle,
    nnodes: c_int,
    _index: *const c_int,
    _edges: *const c_int,
    newrank: *mut c_int,
) -> c_int {
    call("MPI_Graph_map", comm, || {
        let me = with_state(|s| Ok(s.comm(comm)?.comm.intra("MPI_Graph_map")?.rank()))?;
        let r = if me < nnodes { me } else { MPI_UNDEFINED };
        // SAFETY: the caller's output argument.
        unsafe { out(newrank, r, "newrank") }
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn dist_graph_create_adjacent(
    comm_old: Handle,
    indegree: c_int,
    sources: *const c_int,
    sourceweights: *const c_int,
    outdegree: c_int,
    destinations: *const c_int,
    destweights: *const c_int,
    info: Handle,
    _reorder: c_int,
    comm_dist_graph: *mut Handle,
) -> c_int {
    call("MPI_Dist_graph_create_adjacent", comm_old, || {
        super::info::entries(info)?;
        let (ni, no) = (len(indegree, "indegree")?, len(outdegree, "outdegree")?);
        // SAFETY: the caller's arrays of indegree and outdegree entries.
        let d = unsafe {
            DistGraph {
                sources: ints(sources, ni, "sources")?,
                source_weights: weights(sourceweights, ni)?,
                destinations: ints(destinations, no, "destinations")?,
                destination_weights: weights(destweights, no)?,
            }
        };
        let (sources, destinations) = (d.sources.clone(), d.destinations.clone());
        let fits = |c: &IntraCommunicator| {
            let size = c.size();
            check_ranks(&sources, size, "sources")?;
            check_ranks(&destinations, size, "destinations")?;
            Ok(size)
        };
        let name = "MPI_Dist_graph_create_adjacent";
        let h = attach(comm_old, name, fits, Topology::DistGraph(d))?;
        // SAFETY: the caller's output argument.
        unsafe { out(comm_dist_graph, h, "comm_dist_graph") }
    })
}

/// MPI_Dist_graph_create: every process names some edges; each learns its own in- and
/// out-edges from everyone's (two allgathers: the counts, then the edges padded to the
/// longest list), in the order (naming rank, position), so several edges between two
/// processes line up on both ends.
#[allow(clippy::too_many_arguments)]
unsafe fn dist_graph_create(
    comm_old: Handle,
    n: c_int,
    sources: *const c_int,
    degrees: *const c_int,
    destinations: *const c_int,
    weights_in: *const c_int,
    info: Handle,
    _reorder: c_int,
    comm_dist_graph: *mut Handle,
) -> c_int {
    call("MPI_Dist_graph_create", comm_old, || {
        super::info::entries(info)?;
        let n = len(n, "n")?;
        // SAFETY: the caller's arrays: n sources and degrees, sum(degrees) destinations.
        let (src, deg) = unsafe { (ints(sources, n, "sources")?, ints(degrees, n, "degrees")?) };
        if deg.iter().any(|&d| d < 0) {
            return err(MPI_ERR_ARG, "degrees must not be negative");
        }
        let ne: usize = deg.iter().map(|&d| d as usize).sum();
        // SAFETY: as above.
        let (dst, w) = unsafe {
            (
                ints(destinations, ne, "destinations")?,
                weights(weights_in, ne)?,
            )
        };
        let weighted = w.is_some();
        let mut mine = Vec::with_capacity(3 * ne);
        let mut k = 0;
        for (i, &s) in src.iter().enumerate() {
            for _ in 0..deg[i] {
                mine.extend([s, dst[k], w.as_ref().map_or(1, |w| w[k])]);
                k += 1;
            }
        }
        let name = "MPI_Dist_graph_create";
        let intra = with_state(|s| Ok(s.comm(comm_old)?.comm.intra(name)?.clone()))?;
        let d = crate::threads::yielding(|| {
            let size = intra.size();
            check_ranks(&src, size, "sources")?;
            check_ranks(&dst, size, "destinations")?;
            let mut counts = vec![0 as c_int; size as usize];
            intra.all_gather_into(&[ne as c_int][..], &mut counts[..])?;
            let longest = counts.iter().copied().max().unwrap_or(0) as usize;
            mine.resize(3 * longest, -1);
            let mut all = vec![0 as c_int; 3 * longest * size as usize];
            intra.all_gather_into(&mine[..], &mut all[..])?;
            let me = intra.rank();
            let mut d = DistGraph {
                sources: Vec::new(),
                source_weights: weighted.then(Vec::new),
                destinations: Vec::new(),
                destination_weights: weighted.then(Vec::new),
            };
            for (p, edges) in all.chunks(3 * longest.max(1)).enumerate() {
                for e in edges
                    .chunks(3)
                    .take(counts.get(p).copied().unwrap_or(0) as usize)
                {
                    let (a, b, wt) = (e[0], e[1], e[2]);
                    if b == me {
                        d.sources.push(a);
                        if let Some(v) = d.source_weights.as_mut() {
                            v.push(wt);
                        }
                    }
                    if a == me {
                        d.destinations.push(b);
                        if let Some(v) = d.destination_weights.as_mut() {
                            v.push(wt);
                        }
                    }
                }
            }
            Ok::<_, crate::error::MpiError>(d)
        })?;
        let h = attach(comm_old, name, |c| Ok(c.size()), Topology::DistGraph(d))?;
        // SAFETY: the caller's output argument.
        unsafe { out(comm_dist_graph, h, "comm_dist_graph") }
    })
}

fn dist_of(s: &State, comm: Handle) -> MpiResult<DistGraph> {
    match topology(s, comm)? {
        Topology::DistGraph(d) => Ok(d),
        _ => err(
            MPI_ERR_TOPOLOGY,
            format!("communicator {comm:#x} has no distributed graph topology"),
        ),
    }
}

unsafe fn dist_graph_neighbors_count(
    comm: Handle,
    indegree: *mut c_int,
    outdegree: *mut c_int,
    weighted: *mut c_int,
) -> c_int {
    call("MPI_Dist_graph_neighbors_count", comm, || {
        let d = with_state(|s| dist_of(s, comm))?;
        // SAFETY: the caller's output arguments.
        unsafe {
            out(indegree, d.sources.len() as c_int, "indegree")?;
            out(outdegree, d.destinations.len() as c_int, "outdegree")?;
            out(
                weighted,
                c_int::from(d.source_weights.is_some()),
                "weighted",
            )
        }
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn dist_graph_neighbors(
    comm: Handle,
    maxindegree: c_int,
    sources: *mut c_int,
    sourceweights: *mut c_int,
    maxoutdegree: c_int,
    destinations: *mut c_int,
    destweights: *mut c_int,
) -> c_int {
    call("MPI_Dist_graph_neighbors", comm, || {
        let d = with_state(|s| dist_of(s, comm))?;
        let given = |p: *mut c_int| !p.is_null() && p as usize != MPI_UNWEIGHTED;
        // SAFETY: the caller's arrays of maxindegree and maxoutdegree entries.
        unsafe {
            put(sources, maxindegree, &d.sources)?;
            put(destinations, maxoutdegree, &d.destinations)?;
            if let (Some(w), true) = (&d.source_weights, given(sourceweights)) {
                put(sourceweights, maxindegree, w)?;
            }
            if let (Some(w), true) = (&d.destination_weights, given(destweights)) {
                put(destweights, maxoutdegree, w)?;
            }
        }
        Ok(())
    })
}

export!(MPI_Graph_create, PMPI_Graph_create, graph_create,
    (comm_old: Handle, nnodes: c_int, index: *const c_int, edges: *const c_int, reorder: c_int,
     comm_graph: *mut Handle) -> c_int);
export!(MPI_Graphdims_get, PMPI_Graphdims_get, graphdims_get,
    (comm: Handle, nnodes: *mut c_int, nedges: *mut c_int) -> c_int);
export!(MPI_Graph_get, PMPI_Graph_get, graph_get,
    (comm: Handle, maxindex: c_int, maxedges: c_int, index: *mut c_int, edges: *mut c_int) -> c_int);
export!(MPI_Graph_neighbors_count, PMPI_Graph_neighbors_count, graph_neighbors_count,
    (comm: Handle, rank: c_int, nneighbors: *mut c_int) -> c_int);
export!(MPI_Graph_neighbors, PMPI_Graph_neighbors, graph_neighbors,
    (comm: Handle, rank: c_int, maxneighbors: c_int, neighbors: *mut c_int) -> c_int);
export!(MPI_Graph_map, PMPI_Graph_map, graph_map,
    (comm: Handle, nnodes: c_int, index: *const c_int, edges: *const c_int, newrank: *mut c_int) -> c_int);
export!(MPI_Dist_graph_create_adjacent, PMPI_Dist_graph_create_adjacent, dist_graph_create_adjacent,
    (comm_old: Handle, indegree: c_int, sources: *const c_int, sourceweights: *const c_int,
     outdegree: c_int, destinations: *const c_int, destweights: *const c_int, info: Handle,
     reorder: c_int, comm_dist_graph: *mut Handle) -> c_int);
export!(MPI_Dist_graph_create, PMPI_Dist_graph_create, dist_graph_create,
    (comm_old: Handle, n: c_int, sources: *const c_int, degrees: *const c_int,
     destinations: *const c_int, weights: *const c_int, info: Handle, reorder: c_int,
     comm_dist_graph: *mut Handle) -> c_int);
export!(MPI_Dist_graph_neighbors_count, PMPI_Dist_graph_neighbors_count, dist_graph_neighbors_count,
    (comm: Handle, indegree: *mut c_int, outdegree: *mut c_int, weighted: *mut c_int) -> c_int);
export!(MPI_Dist_graph_neighbors, PMPI_Dist_graph_neighbors, dist_graph_neighbors,
    (comm: Handle, maxindegree: c_int, sources: *mut c_int, sourceweights: *mut c_int,
     maxoutdegree: c_int, destinations: *mut c_int, destweights: *mut c_int) -> c_int);
