//! The process topology a communicator carries: a Cartesian grid (`crate::cart`), a graph
//! (MPI_Graph_create: every process's neighbors) or a distributed graph (this process's
//! in- and out-neighbors). Neighbor collectives need only the neighbor lists.

use crate::cart::Cart;
use crate::consts::*;
use std::os::raw::c_int;

/// A graph of MPI_Graph_create: `index[i]` is the end of rank i's neighbors in `edges`.
#[derive(Clone, Debug, PartialEq)]
pub struct Graph {
    pub index: Vec<c_int>,
    pub edges: Vec<c_int>,
}

impl Graph {
    pub fn neighbors(&self, rank: c_int) -> &[c_int] {
        let r = rank as usize;
        let start = if r == 0 {
            0
        } else {
            self.index[r - 1] as usize
        };
        &self.edges[start..self.index[r] as usize]
    }
}

/// This process's part of a distributed graph; weights when the graph is weighted.
#[derive(Clone, Debug, PartialEq)]
pub struct DistGraph {
    pub sources: Vec<c_int>,
    pub source_weights: Option<Vec<c_int>>,
    pub destinations: Vec<c_int>,
    pub destination_weights: Option<Vec<c_int>>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Topology {
    Cart(Cart),
    Graph(Graph),
    DistGraph(DistGraph),
}

/// One neighbor of a neighbor collective: its rank (MPI_PROC_NULL: no transfer) and the tag
/// that tells apart several edges between the same two processes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Edge {
    pub rank: c_int,
    pub slot: c_int,
}

impl Topology {
    /// MPI_Topo_test's answer.
    pub fn kind(&self) -> c_int {
        match self {
            Topology::Cart(_) => MPI_CART,
            Topology::Graph(_) => MPI_GRAPH,
            Topology::DistGraph(_) => MPI_DIST_GRAPH,
        }
    }

    /// The in- and out-neighbors of `rank`, in the standard's order. On a grid, dimension d
    /// gives the -1 then the +1 neighbor, and a message travelling in the + direction has
    /// slot 2d, in the - direction 2d + 1, so the two edges of a periodic dimension of extent
    /// 1 or 2 (the same process twice) cannot be mixed up. Graph edges share slot 0: several
    /// edges between two processes match in list order.
    pub fn neighbors(&self, rank: c_int) -> (Vec<Edge>, Vec<Edge>) {
        let plain = |v: &[c_int]| {
            v.iter()
                .map(|&r| Edge { rank: r, slot: 0 })
                .collect::<Vec<_>>()
        };
        match self {
            Topology::Cart(g) => {
                let (mut ins, mut outs) = (Vec::new(), Vec::new());
                for d in 0..g.dims().len() {
                    let (lo, hi) = g.shift(rank, d, 1);
                    let r = |x: Option<c_int>| x.unwrap_or(MPI_PROC_NULL);
                    let plus = 2 * d as c_int;
                    // From the -1 neighbor comes what it sent in the + direction.
                    ins.push(Edge {
                        rank: r(lo),
                        slot: plus,
                    });
                    ins.push(Edge {
                        rank: r(hi),
                        slot: plus + 1,
                    });
                    outs.push(Edge {
                        rank: r(lo),
                        slot: plus + 1,
                    });
                    outs.push(Edge {
                        rank: r(hi),
                        slot: plus,
                    });
                }
                (ins, outs)
            }
            Topology::Graph(g) => (plain(g.neighbors(rank)), plain(g.neighbors(rank))),
            Topology::DistGraph(d) => (plain(&d.sources), plain(&d.destinations)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_edges_pair_up_even_when_a_neighbor_appears_twice() {
        // A ring of 2: both neighbors of rank 0 are rank 1.
        let t = Topology::Cart(Cart::new(vec![2], vec![true]).unwrap());
        let (ins0, outs0) = t.neighbors(0);
        let (ins1, outs1) = t.neighbors(1);
        assert!(ins0.iter().chain(&outs0).all(|e| e.rank == 1));
        // What rank 1 sends toward +1 arrives in rank 0's -1 slot, and the other way round.
        assert_eq!(outs1[1].slot, ins0[0].slot);
        assert_eq!(outs1[0].slot, ins0[1].slot);
        assert_ne!(ins0[0].slot, ins0[1].slot);
        assert_eq!(ins1.len(), 2);
    }

    #[test]
    fn open_grid_edges_are_proc_null_and_graphs_list_their_neighbors() {
        let t = Topology::Cart(Cart::new(vec![3], vec![false]).unwrap());
        let (ins, _) = t.neighbors(0);
        assert_eq!(ins[0].rank, MPI_PROC_NULL);
        assert_eq!(ins[1].rank, 1);
        let g = Topology::Graph(Graph {
            index: vec![2, 3, 4],
            edges: vec![1, 2, 0, 0],
        });
        let (ins, outs) = g.neighbors(0);
        assert_eq!(ins.iter().map(|e| e.rank).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(ins, outs);
        assert_eq!(g.kind(), MPI_GRAPH);
    }
}
