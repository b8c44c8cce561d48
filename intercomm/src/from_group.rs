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
use crate::local_ids::{self, WireIds};
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
    let epoch = session_epoch(group);
    let mine = local_ids::allocate(process::context_taken)?;
    let ids = agree(&eng, me, group.members(), (tag, seq, epoch), digest, mine)?;
    let ctx = claim(ext, tag)?;
    let wire = WireIds::new(mine, ids)?;
    Communicator::from_groups(eng, ctx, wire, group.clone(), None, me)
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
    let epoch = session_epoch(local);
    let mine = local_ids::allocate(process::context_taken)?;
    let ids = agree(
        &eng,
        me,
        everyone.members(),
        (tag, seq, epoch),
        digest,
        mine,
    )?;
    let ctx = claim(ext, tag)?;
    // The peers of an intercommunicator are the remote group's members, by remote rank.
    let peers = remote
        .members()
        .iter()
        .map(|p| everyone.rank_of(*p).map(|i| ids[i]))
        .collect::<Option<Vec<u64>>>()
        .ok_or_else(|| CommError::InvalidArgument("remote member missing".into()))?;
    let wire = WireIds::new(mine, peers)?;
    Communicator::from_groups(eng, ctx, wire, local.clone(), Some(remote.clone()), me)
}

/// The init epoch of the session `g` came from (the latest init if it came from none).
fn session_epoch(g: &Group) -> u64 {
    g.session().unwrap_or_else(process::current_epoch)
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

/// The agreement message: the sender, its digest, its sequence number, the init epoch of
/// its session and its local context id for the communicator (see `local_ids`: first
/// contact). A member whose exchange fails sends the same message again under its
/// withdrawal tag, so that a member arriving later refuses the stale part instead of
/// making a communicator the withdrawn member does not have.
const MSG_LEN: usize = 8 + 16 + 8 + 8 + 8;

/// The tag a member's agreement message carries: its process id, so each expected member is
/// received by name and a message of anyone else waits for its own exchange.
fn sender_tag(g: Gpid) -> i32 {
    (context::derive(g.to_u64(), 7) >> 33) as i32
}

/// The tag of a member's withdrawal.
fn withdraw_tag(g: Gpid) -> i32 {
    (context::derive(g.to_u64(), 8) >> 33) as i32
}

/// What identifies one exchange: the tag, the sequence number and this member's epoch.
type Exchange<'a> = (&'a str, u64, u64);

/// Every member sends its digest to every other member and checks theirs, within the
/// process's group timeout. Names the first member that disagrees, withdrew or does not
/// answer; on failure this member withdraws its own part. Returns every member's local
/// context id (`local`: this process's), in the order of `members`.
fn agree(
    eng: &Rc<RefCell<Engine>>,
    me: Gpid,
    members: &[Gpid],
    ex: Exchange<'_>,
    digest: u128,
    local: u64,
) -> Result<Vec<u64>> {
    if members.len() == 1 {
        return Ok(vec![local]);
    }
    let (tag, seq, epoch) = ex;
    let ctx = ExtContextId::check_wire(tag, seq);
    let check = Communicator::new(eng.clone(), ctx, Group::new(members.to_vec()), None, me)?;
    let mut mine = Vec::with_capacity(MSG_LEN);
    mine.extend_from_slice(&me.to_u64().to_le_bytes());
    mine.extend_from_slice(&digest.to_le_bytes());
    mine.extend_from_slice(&seq.to_le_bytes());
    mine.extend_from_slice(&epoch.to_le_bytes());
    mine.extend_from_slice(&local.to_le_bytes());
    let others: Vec<(usize, Gpid)> = members
        .iter()
        .copied()
        .enumerate()
        .filter(|&(_, g)| g != me)
        .collect();
    let result = exchange(&check, &others, members.len(), &mine, ex, digest);
    match result {
        Ok(theirs) => {
            let mut ids = vec![local; members.len()];
            for (&(r, _), id) in others.iter().zip(theirs) {
                ids[r] = id;
            }
            Ok(ids)
        }
        Err(e) => {
            withdraw(&check, &others, &mine);
            Err(e)
        }
    }
}

fn exchange(
    check: &Communicator,
    others: &[(usize, Gpid)],
    n_members: usize,
    mine: &[u8],
    (tag, seq, epoch): Exchange<'_>,
    digest: u128,
) -> Result<Vec<u64>> {
    let me = Gpid::from_u64(u64::from_le_bytes(mine[..8].try_into().expect("8 bytes")));
    let timeout = process::group_timeout();
    let deadline = Instant::now() + timeout;
    let mut sends = Vec::with_capacity(others.len());
    for &(r, _) in others {
        sends.push(Some(check.isend(mine, r as i32, sender_tag(me))?));
    }
    // Each member's message is taken once it has arrived (probe, then a receive that
    // completes at once) and checked then, so a disagreement is reported without waiting
    // for the rest; a message of a process this one does not expect stays for its own
    // exchange.
    let mut heard = vec![false; others.len()];
    let mut ids = vec![0u64; others.len()];
    loop {
        for (i, &(_, g)) in others.iter().enumerate() {
            check_withdrawn(check, g, digest, tag)?;
            if heard[i] || check.iprobe(ANY_SOURCE, sender_tag(g))?.is_none() {
                continue;
            }
            let mut buf = [0u8; MSG_LEN];
            check.recv(&mut buf, ANY_SOURCE, sender_tag(g))?;
            heard[i] = true;
            ids[i] = compare(&buf, g, me, digest, tag, seq, epoch)?;
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
                    n_members,
                    timeout.as_secs_f64(),
                    missing.join(", ")
                ),
            });
        }
        if !crate::turns::wait_hook(false) {
            std::thread::yield_now();
        }
    }
    // A withdrawal that came with (or right after) a member's part counts too.
    for &(_, g) in others {
        check_withdrawn(check, g, digest, tag)?;
    }
    Ok(ids)
}

/// Refuses the exchange if `g` has withdrawn its part of it (the same digest); a withdrawal
/// of another exchange that shares this context (another group, same tag and number) is
/// dropped.
fn check_withdrawn(check: &Communicator, g: Gpid, digest: u128, tag: &str) -> Result<()> {
    while check.iprobe(ANY_SOURCE, withdraw_tag(g))?.is_some() {
        let mut buf = [0u8; MSG_LEN];
        check.recv(&mut buf, ANY_SOURCE, withdraw_tag(g))?;
        let w = Part::parse(&buf);
        if w.from == g && w.digest == digest {
            return Err(CommError::StalePeer {
                tag: tag.to_string(),
                peer: g.to_string(),
                epoch: w.epoch,
                seq: w.seq,
            });
        }
    }
    Ok(())
}

/// A member's part of an exchange, as sent (and as withdrawn).
struct Part {
    from: Gpid,
    digest: u128,
    seq: u64,
    epoch: u64,
    local: u64,
}

impl Part {
    fn parse(buf: &[u8; MSG_LEN]) -> Part {
        let word = |at: usize| u64::from_le_bytes(buf[at..at + 8].try_into().expect("8 bytes"));
        Part {
            from: Gpid::from_u64(word(0)),
            digest: u128::from_le_bytes(buf[8..24].try_into().expect("16 bytes")),
            seq: word(24),
            epoch: word(32),
            local: word(40),
        }
    }
}

/// How long a failing member tries to get its withdrawal out.
const WITHDRAW_BOUND: std::time::Duration = std::time::Duration::from_secs(2);

/// Tells every other member that this member's part of the exchange is withdrawn (bounded;
/// a member that can not be reached is left: it fails on its own timeout).
fn withdraw(check: &Communicator, others: &[(usize, Gpid)], mine: &[u8]) {
    let me = Gpid::from_u64(u64::from_le_bytes(mine[..8].try_into().expect("8 bytes")));
    let mut sends: Vec<_> = others
        .iter()
        .filter_map(|&(r, _)| check.isend(mine, r as i32, withdraw_tag(me)).ok())
        .collect();
    let deadline = Instant::now() + WITHDRAW_BOUND;
    while !sends.is_empty() && Instant::now() < deadline {
        sends.retain_mut(|s| matches!(s.test(), Ok(None)));
        std::thread::yield_now();
    }
}

/// Checks a member's agreement message against this process's view; returns the member's
/// local context id.
fn compare(
    buf: &[u8; MSG_LEN],
    expected: Gpid,
    me: Gpid,
    digest: u128,
    tag: &str,
    seq: u64,
    epoch: u64,
) -> Result<u64> {
    let Part {
        from,
        digest: theirs,
        seq: their_seq,
        epoch: their_epoch,
        local,
    } = Part::parse(buf);
    if from == expected && theirs == digest {
        return Ok(local);
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
        let _owner = ibdyn_owner::enter();
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
        let _owner = ibdyn_owner::enter();
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
        let _owner = ibdyn_owner::enter();
        match comm_from_group(&Group::empty(), "t") {
            Err(CommError::NotInitialized) => {}
            Err(e) => panic!("wrong error: {e}"),
            Ok(_) => panic!("a communicator without a runtime"),
        }
    }
}
