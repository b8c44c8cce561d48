//! Collectives straight between the processes of the two groups, for large blocks between
//! small groups: every process sends each remote one its block in one round, so each byte is
//! copied once, into its receiver, instead of into a leader, across to the other leader and
//! out again. Alltoall (`inter/alltoall.rs`), a large allgather and a large
//! reduce_scatter_block go this way.

use super::InterCollectives;
use crate::error::{CollError, Result};
use crate::op::Op;
use crate::p2p::PointToPoint;
use crate::patience;
use crate::scratch::Scratch;

/// An allgather whose larger block is at least this many bytes, between groups of at most
/// `DIRECT_PAIRS` pairs of processes, goes straight.
const ALLGATHER_DIRECT_MIN: usize = 256 * 1024;
/// A reduce_scatter_block whose buffer (the same length in both groups) is at least this many
/// bytes, between groups of at most `DIRECT_PAIRS` pairs, goes straight: the slices are folded
/// where they end up, so no process reduces, forwards and scatters the whole buffer in turn.
const REDUCE_SCATTER_DIRECT_MIN: usize = 64 * 1024;
/// ... as long as the buffer times the larger group is at most this many bytes: a process keeps
/// what every remote process sends it until it folds them, up to (q - 1) / p of the buffer.
const REDUCE_SCATTER_DIRECT_MAX: usize = 64 << 20;
const DIRECT_PAIRS: usize = 64;

impl<C: PointToPoint> InterCollectives<C> {
    /// The allgather straight between processes, when it goes so: Some(result). Both groups
    /// decide alike (the larger block and the pairs are the same seen from either side).
    pub(super) fn allgather_direct(
        &self,
        t: i32,
        send: &[u8],
        recv: &mut [u8],
    ) -> Option<Result<()>> {
        let rb = recv.len() / self.remote_size;
        let straight = send.len().max(rb) >= ALLGATHER_DIRECT_MIN
            && self.size * self.remote_size <= DIRECT_PAIRS;
        straight.then(|| self.exchange(t, |_| send, blocks(recv, rb, self.remote_size)))
    }

    /// The reduce_scatter_block straight between processes, when it goes so: Some(result).
    /// Remote rank j gets slice j of `send`; this process folds the slices it gets from every
    /// remote rank in rank order (`v0 ∘ (v1 ∘ ...)`, as the leaders' reduction does).
    pub(super) fn reduce_scatter_direct(
        &self,
        t: i32,
        send: &[u8],
        recv: &mut [u8],
        op: &Op,
    ) -> Option<Result<()>> {
        let q = self.remote_size;
        let straight = send.len() >= REDUCE_SCATTER_DIRECT_MIN
            && send.len().saturating_mul(self.size.max(q)) <= REDUCE_SCATTER_DIRECT_MAX
            && self.size * q <= DIRECT_PAIRS
            && send.len().is_multiple_of(q);
        if !straight {
            return None;
        }
        let (sb, rb) = (send.len() / q, recv.len());
        let mut others = Scratch::for_output((q - 1) * rb);
        let mut dests = blocks(&mut others, rb, q - 1);
        dests.push(&mut *recv);
        let slice = |to: usize| &send[to * sb..(to + 1) * sb];
        Some(self.exchange(t, slice, dests).map(|()| {
            for i in (0..q - 1).rev() {
                op.apply(&others[i * rb..(i + 1) * rb], recv);
            }
        }))
    }

    /// Each process sends `block(j)` to remote rank j and receives `dests[i]` (exactly its
    /// length) from remote rank i, all at once.
    pub(super) fn exchange<'s>(
        &self,
        t: i32,
        block: impl Fn(usize) -> &'s [u8],
        dests: Vec<&mut [u8]>,
    ) -> Result<()> {
        let q = self.remote_size;
        let mut recvs = Vec::with_capacity(q);
        for (i, dest) in dests.into_iter().enumerate() {
            let want = dest.len();
            recvs.push((i, want, PointToPoint::irecv(&self.bridge, dest, i, t)?));
        }
        let mut sends = Vec::with_capacity(q);
        for j in 0..q {
            // Stagger the destinations so every process does not start at remote rank 0.
            let to = (j + self.rank) % q;
            sends.push(PointToPoint::isend(&self.bridge, block(to), to, t)?);
        }
        let mut first_err = None;
        for (i, want, r) in recvs {
            match patience::wait(r) {
                Ok(got) if got == want => {}
                Ok(got) => {
                    first_err.get_or_insert(CollError::SizeMismatch {
                        peer: i,
                        expected: want,
                        got,
                    });
                }
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        for s in sends {
            if let Err(e) = patience::wait(s) {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }
}

/// `n` consecutive blocks of `len` bytes of `buf` (empty ones when `len` is 0).
pub(super) fn blocks(buf: &mut [u8], len: usize, n: usize) -> Vec<&mut [u8]> {
    if len == 0 {
        return (0..n).map(|_| <&mut [u8]>::default()).collect();
    }
    buf[..len * n].chunks_mut(len).collect()
}
