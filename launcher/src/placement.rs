//! Where the ranks of a job go: block-wise (default) or round-robin over the node daemons.

use crate::error::{LaunchError, Result};
use ibdyn_pmi::ProcessMapping;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MapBy {
    /// Consecutive ranks fill one node after the other (ranks spread evenly). Open MPI's
    /// `core`, `hwthread`, `socket`, `package`, `numa` and `l3cache` also fill a node before the
    /// next, so they are taken as this.
    #[value(aliases = ["core", "hwthread", "socket", "package", "numa", "l3cache"])]
    Slot,
    /// Round-robin: rank r on node r mod K.
    Node,
}

/// Binding of a job's ranks within their node (`ibdyn run --bind-to`): each rank to one unit
/// of the CPUs its node daemon may use, in local-rank order, wrapping around past the last.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Bind {
    /// No binding: the ranks run on every CPU the daemon may use.
    #[default]
    None,
    /// One core each (all its hardware threads).
    Core,
    /// One hardware thread (logical CPU) each.
    Hwthread,
    /// One socket (package) each, all its CPUs.
    #[value(alias = "package")]
    Socket,
}

impl Bind {
    /// The unit's name in the `ibdyn_bind` info key.
    pub fn name(self) -> &'static str {
        match self {
            Bind::None => "none",
            Bind::Core => "core",
            Bind::Hwthread => "hwthread",
            Bind::Socket => "socket",
        }
    }

    pub fn from_name(name: &str) -> Option<Bind> {
        [Bind::None, Bind::Core, Bind::Hwthread, Bind::Socket]
            .into_iter()
            .find(|b| b.name() == name)
    }
}

/// What each rank is bound to: `width` consecutive units (`--cpus-per-rank`, for ranks that
/// run threads of their own). The `ibdyn_bind` info key: `core`, or `core:4` as Hydra's
/// `-bind-to core:4` writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Binding {
    pub unit: Bind,
    pub width: u32,
}

impl Default for Binding {
    fn default() -> Binding {
        Binding {
            unit: Bind::None,
            width: 1,
        }
    }
}

impl Binding {
    pub fn to_info(self) -> String {
        match self.width {
            1 => self.unit.name().to_string(),
            w => format!("{}:{w}", self.unit.name()),
        }
    }

    pub fn from_info(v: &str) -> Option<Binding> {
        let (unit, width) = match v.split_once(':') {
            Some((u, w)) => (u, w.parse().ok().filter(|&w| w >= 1)?),
            None => (v, 1),
        };
        Some(Binding {
            unit: Bind::from_name(unit)?,
            width,
        })
    }
}

#[derive(Clone, Debug)]
pub struct Placement {
    /// Node of every rank.
    pub node_of: Vec<u32>,
    pub mapping: ProcessMapping,
}

impl Placement {
    pub fn new(nprocs: u32, nnodes: u32, map_by: MapBy) -> Result<Placement> {
        if nprocs == 0 {
            return Err(LaunchError::Usage("-n must be at least 1".into()));
        }
        if nnodes == 0 {
            return Err(LaunchError::Usage("--nodes must be at least 1".into()));
        }
        let mapping = match map_by {
            MapBy::Slot => {
                let (q, r) = (nprocs / nnodes, nprocs % nnodes);
                let counts: Vec<u32> = (0..nnodes).map(|d| q + u32::from(d < r)).collect();
                ProcessMapping::from_counts(&counts)
            }
            MapBy::Node => ProcessMapping::round_robin(nnodes),
        };
        Ok(Placement {
            node_of: mapping.nodes(nprocs),
            mapping,
        })
    }

    /// Ranks on hosts with `slots[h]` slots each: block fills each host's slots in order,
    /// `node` deals one rank per host with a free slot in turn; ranks beyond all the slots
    /// start the same again (oversubscription).
    pub fn by_slots(nprocs: u32, slots: &[u32], map_by: MapBy) -> Result<Placement> {
        if nprocs == 0 {
            return Err(LaunchError::Usage("-n must be at least 1".into()));
        }
        if slots.is_empty() || slots.contains(&0) {
            return Err(LaunchError::Usage(
                "every host needs at least one slot".into(),
            ));
        }
        let mut node_of = Vec::with_capacity(nprocs as usize);
        while node_of.len() < nprocs as usize {
            let left = nprocs as usize - node_of.len();
            let round: Vec<u32> = match map_by {
                MapBy::Slot => (0..slots.len() as u32)
                    .flat_map(|h| std::iter::repeat_n(h, slots[h as usize] as usize))
                    .collect(),
                MapBy::Node => {
                    let most = slots.iter().copied().max().unwrap_or(1);
                    (0..most)
                        .flat_map(|i| {
                            (0..slots.len() as u32).filter(move |&h| slots[h as usize] > i)
                        })
                        .collect()
                }
            };
            node_of.extend(round.into_iter().take(left));
        }
        let mut counts: Vec<(u32, u32)> = Vec::new();
        for &n in &node_of {
            match counts.last_mut() {
                Some((m, c)) if *m == n => *c += 1,
                _ => counts.push((n, 1)),
            }
        }
        let mapping = ProcessMapping {
            blocks: counts.into_iter().map(|(n, c)| (n, 1, c)).collect(),
        };
        Ok(Placement { node_of, mapping })
    }

    pub fn ranks_on(&self, node: u32) -> Vec<u32> {
        (0..self.node_of.len() as u32)
            .filter(|&r| self.node_of[r as usize] == node)
            .collect()
    }
}

/// The daemons form a binary tree rooted at daemon 0 (fence and allgather go up and down it).
pub mod tree {
    pub fn parent(d: u32) -> Option<u32> {
        (d > 0).then(|| (d - 1) / 2)
    }

    pub fn children(d: u32, nnodes: u32) -> Vec<u32> {
        [2 * d + 1, 2 * d + 2]
            .into_iter()
            .filter(|&c| c < nnodes)
            .collect()
    }

    /// Daemons of the subtree rooted at `d`, `d` included.
    pub fn subtree(d: u32, nnodes: u32) -> Vec<u32> {
        let mut out = vec![d];
        let mut i = 0;
        while i < out.len() {
            out.extend(children(out[i], nnodes));
            i += 1;
        }
        out
    }

    /// The child of `me` whose subtree holds `target`, if any.
    pub fn next_hop_down(me: u32, target: u32) -> Option<u32> {
        let mut t = target;
        loop {
            let p = parent(t)?;
            if p == me {
                return Some(t);
            }
            t = p;
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_binding_goes_as_its_unit_and_width() {
        for (text, unit, width) in [
            ("core", Bind::Core, 1),
            ("hwthread:2", Bind::Hwthread, 2),
            ("socket", Bind::Socket, 1),
        ] {
            let b = Binding::from_info(text).unwrap();
            assert_eq!((b.unit, b.width), (unit, width));
            assert_eq!(b.to_info(), text);
        }
        for bad in ["core:0", "core:x", "tile", ""] {
            assert_eq!(Binding::from_info(bad), None, "{bad}");
        }
    }

    use super::*;

    #[test]
    fn block_and_round_robin_placement() {
        let p = Placement::new(7, 3, MapBy::Slot).unwrap();
        assert_eq!(p.node_of, vec![0, 0, 0, 1, 1, 2, 2]);
        assert_eq!(p.ranks_on(1), vec![3, 4]);
        let p = Placement::new(5, 2, MapBy::Node).unwrap();
        assert_eq!(p.node_of, vec![0, 1, 0, 1, 0]);
        let p = Placement::new(2, 4, MapBy::Slot).unwrap();
        assert_eq!(p.node_of, vec![0, 1]);
        assert!(p.ranks_on(3).is_empty());
        assert!(Placement::new(0, 1, MapBy::Slot).is_err());
        assert!(Placement::new(1, 0, MapBy::Slot).is_err());
    }

    #[test]
    fn placement_by_slots_fills_blocks_or_deals_and_wraps() {
        let p = Placement::by_slots(6, &[1, 4, 1], MapBy::Slot).unwrap();
        assert_eq!(p.node_of, vec![0, 1, 1, 1, 1, 2]);
        assert_eq!(p.mapping.nodes(6), p.node_of);
        let p = Placement::by_slots(8, &[1, 4, 1], MapBy::Slot).unwrap();
        assert_eq!(p.node_of, vec![0, 1, 1, 1, 1, 2, 0, 1]);
        let p = Placement::by_slots(6, &[1, 4, 1], MapBy::Node).unwrap();
        assert_eq!(p.node_of, vec![0, 1, 2, 1, 1, 1]);
        let p = Placement::by_slots(3, &[2, 2], MapBy::Node).unwrap();
        assert_eq!(p.node_of, vec![0, 1, 0]);
        assert!(Placement::by_slots(0, &[1], MapBy::Slot).is_err());
        assert!(Placement::by_slots(1, &[], MapBy::Slot).is_err());
        assert!(Placement::by_slots(1, &[0], MapBy::Slot).is_err());
    }

    #[test]
    fn tree_shape_and_routing() {
        assert_eq!(tree::children(0, 4), vec![1, 2]);
        assert_eq!(tree::children(1, 4), vec![3]);
        assert_eq!(tree::parent(3), Some(1));
        assert_eq!(tree::parent(0), None);
        let mut s = tree::subtree(1, 7);
        s.sort();
        assert_eq!(s, vec![1, 3, 4]);
        assert_eq!(tree::next_hop_down(0, 4), Some(1));
        assert_eq!(tree::next_hop_down(1, 4), Some(4));
        assert_eq!(tree::next_hop_down(2, 4), None);
    }
}
