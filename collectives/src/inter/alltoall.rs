//! Intercommunicator alltoall: through the group leaders for many small blocks, else each
//! process straight to every remote one (`inter/direct.rs`).

use super::direct::blocks;
use super::InterCollectives;
use crate::config::CollOp;
use crate::error::Result;
use crate::flat::bad;
use crate::p2p::PointToPoint;
use crate::scratch::Scratch;

/// Alltoall goes through the leaders while the whole matrix (either way) is at most this many
/// bytes and there are at least `ALLTOALL_VIA_LEADERS_PAIRS` pairs of processes; otherwise
/// each process exchanges directly with every remote one (one round, no forwarding).
const ALLTOALL_VIA_LEADERS: usize = 64 * 1024;
const ALLTOALL_VIA_LEADERS_PAIRS: usize = 64;

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
            let dests = blocks(recv, rb, q);
            return self.exchange(t, |to| &send[to * sb..(to + 1) * sb], dests);
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
}
