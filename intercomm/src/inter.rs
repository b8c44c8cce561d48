//! Intercommunicators: creation from two leaders over a peer communicator, merge into an
//! intracommunicator, disconnect.

use crate::comm::Communicator;
use crate::context;
use crate::error::{CommError, Result};
use crate::gpid::{decode_cards, encode_cards, Gpid, ProcCard};
use crate::group::Group;
use crate::packet::Reader;

/// Tags of the leader exchanges, on the collective context.
const TAG_CREATE: i32 = 0x7f00_0001;
const TAG_MERGE: i32 = 0x7ff0_0011;
const TAG_DISCONNECT: i32 = 0x7ff0_0013;

/// A group with the address cards of its members, after the context id its side proposes.
pub(crate) fn encode_group(comm: &Communicator, ctx_proposal: u64) -> Result<Vec<u8>> {
    let cards = comm
        .group()
        .members()
        .iter()
        .map(|&g| comm.card_of(g))
        .collect::<Result<Vec<_>>>()?;
    Ok([&ctx_proposal.to_le_bytes()[..], &encode_cards(&cards)].concat())
}

/// Decodes `encode_group`: the context proposal and the members' cards.
pub(crate) fn decode_group(b: &[u8]) -> Result<(u64, Vec<ProcCard>)> {
    let ctx = Reader::new(b).u64()?;
    Ok((ctx, decode_cards(&b[8..])?.0))
}

impl Communicator {
    /// MPI_Intercomm_create: `self` is the local intracommunicator; the two leaders talk over
    /// `peer` (in which `remote_leader` is the other leader's rank), using `tag`.
    pub fn intercomm_create(
        &self,
        local_leader: i32,
        peer: &Communicator,
        remote_leader: i32,
        tag: i32,
    ) -> Result<Communicator> {
        if self.is_inter() {
            return Err(CommError::InvalidArgument(
                "intercomm_create needs an intracommunicator".into(),
            ));
        }
        self.gpid_of(local_leader)?;
        let proposal = self.next_ctx();
        let mut remote_blob = Vec::new();
        if self.rank() == local_leader {
            let mine = encode_group(self, proposal)?;
            let pv = peer.collective_view();
            let (send, recv) = (
                pv.isend(&mine, remote_leader, TAG_CREATE | ((tag & 0xffff) << 8))?,
                pv.recv_vec(remote_leader, TAG_CREATE | ((tag & 0xffff) << 8)),
            );
            remote_blob = recv?.0;
            send.wait()?;
        }
        let remote_blob = self
            .collective_view()
            .bcast_bytes(remote_blob, local_leader)?;
        let (remote_proposal, cards) = decode_group(&remote_blob)?;
        let remote = Group::new(cards.iter().map(|c| c.gpid).collect());
        self.learn_cards(cards);
        // Both sides must use one id: the proposal of the group holding the lowest process id.
        let lowest = |g: &Group| g.members().iter().min().copied();
        let ctx = if lowest(self.group()) < lowest(&remote) {
            proposal
        } else {
            remote_proposal
        };
        Communicator::new(
            self.engine().clone(),
            ctx,
            self.group().clone(),
            Some(remote),
            self.me(),
        )
    }

    /// MPI_Intercomm_merge: an intracommunicator of both groups, the `high = false` group
    /// first; with equal `high`, the group holding the lowest process id first.
    pub fn merge(&self, high: bool) -> Result<Communicator> {
        let remote = self
            .remote_group()
            .ok_or_else(|| CommError::InvalidArgument("merge needs an intercommunicator".into()))?
            .clone();
        let ctx = self.next_ctx();
        let local = self.local_comm();
        let mut theirs = vec![0u8];
        if self.rank() == 0 {
            self.collective_view().sendrecv(
                &[high as u8],
                0,
                TAG_MERGE,
                &mut theirs,
                0,
                TAG_MERGE,
            )?;
        }
        let theirs = local.collective_view().bcast_bytes(theirs, 0)?;
        let remote_high = theirs.first().copied().unwrap_or(0) != 0;
        let lowest = |g: &Group| g.members().iter().min().copied();
        let local_first = if high != remote_high {
            !high
        } else {
            lowest(self.group()) < lowest(&remote)
        };
        let members = if local_first {
            self.group().union(&remote)
        } else {
            remote.union(self.group())
        };
        Communicator::new(self.engine().clone(), ctx, members, None, self.me())
    }

    /// The intracommunicator of this intercommunicator's local group.
    pub fn local_comm(&self) -> Communicator {
        let ctx = context::derive(self.base_ctx(), u64::MAX);
        Communicator::new(
            self.engine().clone(),
            ctx,
            self.group().clone(),
            None,
            self.me(),
        )
        .expect("this process is in its own local group")
    }

    /// MPI_Comm_disconnect: waits until both sides reach it (so no message is in flight on
    /// this communicator), then frees it.
    pub fn disconnect(&self) -> Result<()> {
        let cv = self.collective_view();
        // The other side may be busy for milliseconds (a parent still starting the rest of a
        // spawn): wait without spinning.
        let was = self.engine().borrow_mut().set_patient(true);
        let r = self.disconnect_handshake(&cv);
        self.engine().borrow_mut().set_patient(was);
        r?;
        self.free();
        Ok(())
    }

    fn disconnect_handshake(&self, cv: &Communicator) -> Result<()> {
        if !self.is_inter() {
            return cv.barrier_internal();
        }
        let local = self.local_comm().collective_view();
        local.barrier_internal()?;
        // Local rank 0 meets the other side and tells its group how that went: a dead other
        // side fails every local rank's disconnect, where a barrier after a failed meeting
        // left the others waiting for rank 0 for ever.
        let met = if self.rank() == 0 {
            let mut b = [0u8; 1];
            cv.sendrecv(&[1], 0, TAG_DISCONNECT, &mut b, 0, TAG_DISCONNECT)
                .err()
                .map_or_else(Vec::new, |e| e.to_string().into_bytes())
        } else {
            Vec::new()
        };
        let met = local.bcast_bytes(met, 0)?;
        if met.is_empty() {
            return Ok(());
        }
        Err(CommError::PeerDead {
            peer: "the other side of the intercommunicator".into(),
            detail: format!(
                "its rank 0 did not take part in the disconnect: {}",
                String::from_utf8_lossy(&met)
            ),
        })
    }

    /// Makes the cards of processes of other jobs known to the engine.
    pub(crate) fn learn_cards(&self, cards: Vec<ProcCard>) {
        let mut eng = self.engine().borrow_mut();
        let job = eng.me().job;
        eng.learn_cards(cards.into_iter().filter(|c| c.gpid.job != job));
    }

    pub(crate) fn card_of(&self, g: Gpid) -> Result<ProcCard> {
        self.engine().borrow_mut().card_of(g)
    }
}
