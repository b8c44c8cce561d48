//! Intercommunicator alltoall: through the group leaders for many small blocks, else each
//! process straight to every remote one; a large allgather goes straight the same way.

use super::InterCollectives;
use crate::config::CollOp;
use crate::error::{CollError, Result};
use crate::flat::bad;
use crate::p2p::PointToPoint;
use crate::patience;
use crate::scratch::Scratch;

/// Alltoall goes through the leaders while the whole matrix (either way) is at most this many
/// bytes and there are at least `ALLTOALL_VIA_LEADERS_PAIRS` pairs of processes; otherwise
/// each process exchanges directly with every remote one (one round, no forwarding).
const ALLTOALL_VIA_LEADERS: usize = 64 * 1024;
const ALLTOALL_VIA_LEADERS_PAIRS: usize = 64;
/// An allgather whose larger block is at least this many bytes, between groups of at most
/// `ALLGATHER_DIRECT_PAIRS` pairs, goes straight: each block is copied once, into its
/// receiver, instead of into the leader, across to the other leader and out again.
const ALLGATHER_DIRECT_MIN: usize = 256 * 1024;
const ALLGATHER_DIRECT_PAIRS: usize = 64;

impl<C: PointToPoint> InterCollectives<C> {
    /// Block j of `send` goes to remote rank j; block i of `recv` comes from remote rank i.
    pub fn alltoall(&self, send: &[u8], recv: &mut [u8]) -> Result<()> {
        let t = self.next_tag();
        let (p, q) = (self.size, self.remote_size);
        if !send.len().is_multiple_of(q) || !recv.len().is_multiple_of(q) {
            return Err(bad(
                CollOp::Alltoall,
                format!(
                    "send {} / receive {} bytes are not {q} equal blocks",
                    send.len(),
                    recv.len()
                ),
            ));
        }
        let (sb, rb) = (send.len() / q, recv.len() / q);
        if p * q * sb.max(rb) > ALLTOALL_VIA_LEADERS || p * q < ALLTOALL_VIA_LEADERS_PAIRS {
            return self.direct(t, |to| &send[to * sb..(to + 1) * sb], recv, rb);
        }
        // Gather the p x q matrix of blocks at the leader, swap matrices, and scatter the
        // transpose of the other group's: rank j gets block [i][j] of every remote rank i.
        let mut mat = self.on_leader(p * q * sb);
        self.local.gather(send, &mut mat, 0)?;
        let mut out = self.on_leader(p * q * rb);
        if self.leader() {
            let mut theirs = Scratch::for_output(q * p * rb);
            self.swap(t, &mat, &mut theirs)?;
            for j in 0..p {
                for i in 0..q {
                    let from = (i * p + j) * rb;
                    let to = (j * q + i) * rb;
                    out[to..to + rb].copy_from_slice(&theirs[from..from + rb]);
                }
            }
        }
        self.local.scatter(&out, recv, 0)
    }

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
            && self.size * self.remote_size <= ALLGATHER_DIRECT_PAIRS;
        straight.then(|| self.direct(t, |_| send, recv, rb))
    }

    /// Each process sends `block(j)` to remote rank j and receives block i of `recv`
    /// (`rb` bytes) from remote rank i, all at once.
    fn direct<'s>(
        &self,
        t: i32,
        block: impl Fn(usize) -> &'s [u8],
        recv: &mut [u8],
        rb: usize,
    ) -> Result<()> {
        let q = self.remote_size;
        let mut recvs = Vec::with_capacity(q);
        if rb == 0 {
            for i in 0..q {
                recvs.push((i, PointToPoint::irecv(&self.bridge, &mut [], i, t)?));
            }
        } else {
            for (i, chunk) in recv.chunks_mut(rb).enumerate() {
                recvs.push((i, PointToPoint::irecv(&self.bridge, chunk, i, t)?));
            }
        }
        let mut sends = Vec::with_capacity(q);
        for j in 0..q {
            // Stagger the destinations so every process does not start at remote rank 0.
            let to = (j + self.rank) % q;
            sends.push(PointToPoint::isend(&self.bridge, block(to), to, t)?);
        }
        let mut first_err = None;
        for (i, r) in recvs {
            match patience::wait(r) {
                Ok(got) if got == rb => {}
                Ok(got) => {
                    first_err.get_or_insert(CollError::SizeMismatch {
                        peer: i,
                        expected: rb,
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
