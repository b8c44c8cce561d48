//! Process groups and the MPI group operations.

use crate::error::{CommError, Result};
use crate::gpid::Gpid;
use std::sync::Arc;

/// An ordered set of processes; a process's rank is its index. A group handed out by a
/// session remembers that session (its init epoch), as do the groups derived from it, so
/// that calls mixing sessions or using a finalized one can be refused; groups compare by
/// their members only.
#[derive(Clone, Debug)]
pub struct Group {
    members: Arc<Vec<Gpid>>,
    session: Option<u64>,
}

impl PartialEq for Group {
    fn eq(&self, other: &Group) -> bool {
        self.members == other.members
    }
}

impl Eq for Group {}

/// Result of comparing two groups (MPI_IDENT / MPI_SIMILAR / MPI_UNEQUAL).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum GroupRelation {
    Identical,
    Similar,
    Unequal,
}

impl Group {
    pub fn new(members: Vec<Gpid>) -> Group {
        Group {
            members: Arc::new(members),
            session: None,
        }
    }

    /// This group, marked as coming from the session of init epoch `epoch`.
    pub fn of_session(mut self, epoch: u64) -> Group {
        self.session = Some(epoch);
        self
    }

    /// The init epoch of the session this group (or the group it was derived from) came
    /// from; None for a group made directly or from a universe's communicator.
    pub fn session(&self) -> Option<u64> {
        self.session
    }

    /// A group derived from this one: it keeps this group's session.
    fn derived(&self, members: Vec<Gpid>) -> Group {
        Group {
            members: Arc::new(members),
            session: self.session,
        }
    }

    pub fn empty() -> Group {
        Group::new(Vec::new())
    }

    pub fn size(&self) -> usize {
        self.members.len()
    }

    pub fn members(&self) -> &[Gpid] {
        &self.members
    }

    /// The process at `rank`, or a clear error.
    pub fn get(&self, rank: i64) -> Result<Gpid> {
        usize::try_from(rank)
            .ok()
            .and_then(|r| self.members.get(r).copied())
            .ok_or_else(|| CommError::InvalidRank {
                rank,
                size: self.size(),
            })
    }

    pub fn rank_of(&self, p: Gpid) -> Option<usize> {
        self.members.iter().position(|&m| m == p)
    }

    /// Members of `self`, then those of `other` not in `self`.
    pub fn union(&self, other: &Group) -> Group {
        let mut v = self.members.to_vec();
        v.extend(other.members.iter().filter(|p| !self.members.contains(p)));
        self.derived(v)
    }

    /// Members of `self` that are also in `other`, in `self`'s order.
    pub fn intersection(&self, other: &Group) -> Group {
        self.derived(
            self.members
                .iter()
                .copied()
                .filter(|p| other.members.contains(p))
                .collect(),
        )
    }

    /// Members of `self` not in `other`, in `self`'s order.
    pub fn difference(&self, other: &Group) -> Group {
        self.derived(
            self.members
                .iter()
                .copied()
                .filter(|p| !other.members.contains(p))
                .collect(),
        )
    }

    /// The members at `ranks`, in that order; ranks must be valid and distinct.
    pub fn incl(&self, ranks: &[i64]) -> Result<Group> {
        let mut v = Vec::with_capacity(ranks.len());
        for &r in ranks {
            let p = self.get(r)?;
            if v.contains(&p) {
                return Err(CommError::InvalidArgument(format!(
                    "rank {r} appears twice in incl"
                )));
            }
            v.push(p);
        }
        Ok(self.derived(v))
    }

    /// All members but those at `ranks`.
    pub fn excl(&self, ranks: &[i64]) -> Result<Group> {
        let mut drop = Vec::with_capacity(ranks.len());
        for &r in ranks {
            drop.push(self.get(r)?);
        }
        Ok(self.derived(
            self.members
                .iter()
                .copied()
                .filter(|p| !drop.contains(p))
                .collect(),
        ))
    }

    /// For each rank of `self` in `ranks`, its rank in `other` (None = MPI_UNDEFINED).
    pub fn translate_ranks(&self, ranks: &[i64], other: &Group) -> Result<Vec<Option<usize>>> {
        ranks
            .iter()
            .map(|&r| Ok(other.rank_of(self.get(r)?)))
            .collect()
    }

    pub fn compare(&self, other: &Group) -> GroupRelation {
        if self.members == other.members {
            GroupRelation::Identical
        } else if self.size() == other.size()
            && self.members.iter().all(|p| other.members.contains(p))
        {
            GroupRelation::Similar
        } else {
            GroupRelation::Unequal
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(ranks: &[u32]) -> Group {
        Group::new(ranks.iter().map(|&rank| Gpid { job: 1, rank }).collect())
    }

    #[test]
    fn set_operations_keep_mpi_order() {
        let a = g(&[0, 1, 2, 3]);
        let b = g(&[5, 3, 1]);
        assert_eq!(a.union(&b), g(&[0, 1, 2, 3, 5]));
        assert_eq!(a.intersection(&b), g(&[1, 3]));
        assert_eq!(a.difference(&b), g(&[0, 2]));
        assert_eq!(a.incl(&[3, 0]).unwrap(), g(&[3, 0]));
        assert_eq!(a.excl(&[1]).unwrap(), g(&[0, 2, 3]));
        assert!(a.incl(&[4]).is_err());
        assert!(a.incl(&[1, 1]).is_err());
        assert!(a.excl(&[-1]).is_err());
        assert_eq!(
            a.translate_ranks(&[1, 2, 3], &b).unwrap(),
            vec![Some(2), None, Some(1)]
        );
        assert_eq!(a.compare(&a.clone()), GroupRelation::Identical);
        assert_eq!(a.compare(&g(&[3, 2, 1, 0])), GroupRelation::Similar);
        assert_eq!(a.compare(&b), GroupRelation::Unequal);
    }

    #[test]
    fn derived_groups_keep_their_session() {
        let a = g(&[0, 1, 2, 3]).of_session(4);
        assert_eq!(a.session(), Some(4));
        for d in [
            a.incl(&[1, 0]).unwrap(),
            a.excl(&[2]).unwrap(),
            a.union(&g(&[7])),
            a.intersection(&g(&[1])),
            a.difference(&g(&[1])),
        ] {
            assert_eq!(d.session(), Some(4));
        }
        assert_eq!(g(&[0]).session(), None);
        // Equality is about the members.
        assert_eq!(g(&[0, 1, 2, 3]), a);
    }
}
