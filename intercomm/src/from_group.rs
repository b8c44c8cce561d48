//! Communicators made from groups with no parent communicator (MPI_Comm_create_from_group,
//! MPI_Intercomm_create_from_groups). Every member derives the 128-bit extended id alone
//! (see `context::extended`), then the members check, on a context of their own and within
//! a bound, that they all mean the same group, tag and sequence number.

use crate::comm::Communicator;
use crate::context::{self, ExtContextId};
use crate::engine::Engine;
use crate::error::{CommError, Result};
use crate::gpid::Gpid;
use crate::group::Group;
use crate::matching::ANY_SOURCE;
use crate::process;
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Instant;

/// Marks the boundary of the two sides in the sequence key of an intercommunicator.
const SIDE_BREAK: Gpid = Gpid {
    job: u32::MAX,
    rank: u32::MAX,
};

/// MPI_Comm_create_from_group: a communicator over `group`, of which this process must be a
/// member; every member calls it with the same group (same order) and tag.
pub fn comm_from_group(group: &Group, tag: &str) -> Result<Communicator> {
    let eng = process::engine().ok_or(CommError::NotInitialized)?;
    let me = eng.borrow().me();
    check_members(group, "the group", me)?;
    let sorted = sorted_ids(group);
    let key: Vec<Gpid> = sorted.iter().map(|&g| Gpid::from_u64(g)).collect();
    let seq = process::next_group_seq(key, tag);
    let ext = context::extended(&[&sorted], tag, seq);
    let digest = digest(&[group], &[], tag, seq);
    agree(&eng, me, group.members(), tag, seq, digest)?;
    let ctx = claim(ext, tag)?;
    Communicator::new(eng, ctx, group.clone(), None, me)
}

/// MPI_Intercomm_create_from_groups: an intercommunicator between `local` (this process's
/// side, led by its rank `local_leader`) and `remote` (led by its rank `remote_leader`).
/// Every process of both groups calls it with the same tag; the groups must be disjoint.
pub fn intercomm_from_groups(
    local: &Group,
    local_leader: i32,
    remote: &Group,
    remote_leader: i32,
    tag: &str,
) -> Result<Communicator> {
    let eng = process::engine().ok_or(CommError::NotInitialized)?;
    let me = eng.borrow().me();
    check_members(local, "the local group", me)?;
    local.get(local_leader as i64)?;
    remote.get(remote_leader as i64)?;
    if let Some(p) = remote
        .members()
        .iter()
        .find(|p| local.rank_of(**p).is_some())
    {
        return Err(CommError::InvalidArgument(format!(
            "{p} is in both groups of intercomm_from_groups: the groups must be disjoint"
        )));
    }
    // Both sides must derive the same id: the side holding the lowest process id first.
    let local_first = local.members().iter().min() < remote.members().iter().min();
    let (a, b, la, lb) = if local_first {
        (local, remote, local_leader, remote_leader)
    } else {
        (remote, local, remote_leader, local_leader)
    };
    let (sa, sb) = (sorted_ids(a), sorted_ids(b));
    let key: Vec<Gpid> = sa
        .iter()
        .map(|&g| Gpid::from_u64(g))
        .chain([SIDE_BREAK])
        .chain(sb.iter().map(|&g| Gpid::from_u64(g)))
        .collect();
    let seq = process::next_group_seq(key, tag);
    let ext = context::extended(&[&sa, &sb], tag, seq);
    let digest = digest(&[a, b], &[la, lb], tag, seq);
    let everyone = local.union(remote);
    agree(&eng, me, everyone.members(), tag, seq, digest)?;
    let ctx = claim(ext, tag)?;
    Communicator::new(eng, ctx, local.clone(), Some(remote.clone()), me)
}

fn check_members(group: &Group, what: &str, me: Gpid) -> Result<()> {
    if group.size() == 0 {
        return Err(CommError::InvalidArgument(format!("{what} is empty")));
    }
    if group.rank_of(me).is_none() {
        return Err(CommError::InvalidArgument(format!(
            "this process ({me}) is not in {what}: only members create its communicator"
        )));
    }
    Ok(())
}

fn sorted_ids(g: &Group) -> Vec<u64> {
    let mut v: Vec<u64> = g.members().iter().map(|m| m.to_u64()).collect();
    v.sort_unstable();
    v
}

/// What the members must agree on: the groups in order, the leaders, the tag and sequence.
fn digest(groups: &[&Group], leaders: &[i32], tag: &str, seq: u64) -> u128 {
    let ordered: Vec<Vec<u64>> = groups
        .iter()
        .map(|g| g.members().iter().map(|m| m.to_u64()).collect())
        .collect();
    let mut sides: Vec<&[u64]> = ordered.iter().map(|v| &v[..]).collect();
    let leaders: Vec<u64> = leaders.iter().map(|&l| l as u64).collect();
    sides.push(&leaders);
    context::extended(&sides, &format!("digest:{tag}"), seq).0
}

/// The wire id of `ext`, or an error if a live communicator of this process uses it.
fn claim(ext: ExtContextId, tag: &str) -> Result<u64> {
    let wire = ext.wire();
    if process::context_taken(wire) || process::context_taken(context::collective(wire)) {
        return Err(CommError::ContextCollision {
            wire,
            what: format!("group communicator {tag:?}"),
        });
    }
    Ok(wire)
}

/// The agreement message: the sender, its digest, its sequence number and epoch.
const MSG_LEN: usize = 8 + 16 + 8 + 8;

/// The tag a member's agreement message carries: its process id, so each expected member is
/// received by name and a message of anyone else waits for its own exchange.
fn sender_tag(g: Gpid) -> i32 {
    (context::derive(g.to_u64(), 7) >> 33) as i32
}

/// Every member sends its digest to every other member and checks theirs, within the
/// process's group timeout. Names the first member that disagrees or does not answer.
fn agree(
    eng: &Rc<RefCell<Engine>>,
    me: Gpid,
    members: &[Gpid],
    tag: &str,
    seq: u64,
    digest: u128,
) -> Result<()> {
    if members.len() == 1 {
        return Ok(());
    }
    let timeout = process::group_timeout();
    let deadline = Instant::now() + timeout;
    let ctx = ExtContextId::check_wire(tag, seq);
    let check = Communicator::new(eng.clone(), ctx, Group::new(members.to_vec()), None, me)?;
    let epoch = process::current_epoch();
    let mut mine = Vec::with_capacity(MSG_LEN);
    mine.extend_from_slice(&me.to_u64().to_le_bytes());
    mine.extend_from_slice(&digest.to_le_bytes());
    mine.extend_from_slice(&seq.to_le_bytes());
    mine.extend_from_slice(&epoch.to_le_bytes());
    let others: Vec<(usize, Gpid)> = members
        .iter()
        .copied()
        .enumerate()
        .filter(|&(_, g)| g != me)
        .collect();
    let mut sends = Vec::with_capacity(others.len());
    for &(r, _) in &others {
        sends.push(Some(check.isend(&mine, r as i32, sender_tag(me))?));
    }
    // Each member's message is taken once it has arrived (probe, then a receive that
    // completes at once) and checked then, so a disagreement is reported without waiting
    // for the rest; a message of a process this one does not expect stays for its own
    // exchange.
    let mut heard = vec![false; others.len()];
    loop {
        for (i, &(_, g)) in others.iter().enumerate() {
            if heard[i] || check.iprobe(ANY_SOURCE, sender_tag(g))?.is_none() {
                continue;
            }
            let mut buf = [0u8; MSG_LEN];
            check.recv(&mut buf, ANY_SOURCE, sender_tag(g))?;
            heard[i] = true;
            compare(&buf, g, me, digest, tag, seq, epoch)?;
        }
        let mut pending = heard.iter().any(|h| !h);
        for s in sends.iter_mut() {
            if let Some(req) = s {
                if req.test()?.is_some() {
                    *s = None;
                } else {
                    pending = true;
                }
            }
        }
        if !pending {
            break;
        }
        if Instant::now() > deadline {
            let missing: Vec<String> = others
                .iter()
                .zip(&heard)
                .filter(|(_, h)| !**h)
                .map(|((_, g), _)| g.to_string())
                .collect();
            return Err(CommError::GroupMismatch {
                tag: tag.to_string(),
                detail: format!(
                    "{} of {} member(s) did not take part within {} s: {} (each must create \
                     this communicator with the same group, tag and number of earlier \
                     communicators of that group and tag: this process is at #{seq})",
                    missing.len(),
                    members.len(),
                    timeout.as_secs_f64(),
                    missing.join(", ")
                ),
            });
        }
        std::thread::yield_now();
    }
    Ok(())
}

/// Checks a member's agreement message against this process's view.
fn compare(
    buf: &[u8; MSG_LEN],
    expected: Gpid,
    me: Gpid,
    digest: u128,
    tag: &str,
    seq: u64,
    epoch: u64,
) -> Result<()> {
    let word = |at: usize| u64::from_le_bytes(buf[at..at + 8].try_into().expect("8 bytes"));
    let from = Gpid::from_u64(word(0));
    let theirs = u128::from_le_bytes(buf[8..24].try_into().expect("16 bytes"));
    let (their_seq, their_epoch) = (word(24), word(32));
    if from == expected && theirs == digest {
        return Ok(());
    }
    Err(CommError::GroupMismatch {
        tag: tag.to_string(),
        detail: format!(
            "member {from} (session epoch {their_epoch}, #{their_seq}) sees a different \
             group (members, order or leaders) than this process {me} (epoch {epoch}, \
             #{seq}): every member must pass the same group"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_context_in_use_is_refused() {
        let ext = context::extended(&[&[1, 2, 3]], "t", 0);
        assert!(claim(ext, "t").is_ok());
        process::context_in_use(ext.wire());
        let e = claim(ext, "t").unwrap_err();
        assert!(matches!(e, CommError::ContextCollision { wire, .. } if wire == ext.wire()));
        assert!(e.to_string().contains("another tag"), "{e}");
        // Its collective twin counts too.
        process::context_released(ext.wire());
        process::context_in_use(context::collective(ext.wire()));
        assert!(claim(ext, "t").is_err());
        process::context_released(context::collective(ext.wire()));
        assert!(claim(ext, "t").is_ok());
    }

    #[test]
    fn sequence_numbers_count_per_members_and_tag() {
        let g = |r: &[u32]| {
            r.iter()
                .map(|&rank| Gpid { job: 9, rank })
                .collect::<Vec<_>>()
        };
        assert_eq!(process::next_group_seq(g(&[0, 1]), "a"), 0);
        assert_eq!(process::next_group_seq(g(&[0, 1]), "a"), 1);
        assert_eq!(process::next_group_seq(g(&[0, 1]), "b"), 0);
        assert_eq!(process::next_group_seq(g(&[0, 2]), "a"), 0);
    }

    #[test]
    fn digests_see_order_and_leaders() {
        let g = |r: &[u32]| Group::new(r.iter().map(|&rank| Gpid { job: 9, rank }).collect());
        let (a, b) = (g(&[0, 1]), g(&[1, 0]));
        assert_ne!(digest(&[&a], &[], "t", 0), digest(&[&b], &[], "t", 0));
        let (lo, hi) = (g(&[0, 1]), g(&[2, 3]));
        assert_ne!(
            digest(&[&lo, &hi], &[0, 0], "t", 0),
            digest(&[&lo, &hi], &[0, 1], "t", 0)
        );
    }

    #[test]
    fn creation_without_a_runtime_is_an_error() {
        match comm_from_group(&Group::empty(), "t") {
            Err(CommError::NotInitialized) => {}
            Err(e) => panic!("wrong error: {e}"),
            Ok(_) => panic!("a communicator without a runtime"),
        }
    }
}
