//! Eager sends to a process of another node that wait in this process: for the connection
//! the first one opens, or in the fabric's buffer of the connection. Such a send completes
//! once its packet has left, so that a process which then computes outside MPI (or blocks
//! outside it, as `MPI_Comm_join` does in `accept`) has not kept back what it sent.

use super::Protocol;
use crate::gpid::Gpid;
use crate::net_route::NetRoute;
use crate::reqs::ReqState;
use crate::route::Routes;
use crate::Status;
use std::time::Duration;

impl Protocol {
    /// Whether the packet just pushed to `to` waits in this process (it took the fabric
    /// route, which has not sent it yet). Costs a flag for packets to this node.
    #[inline]
    pub(crate) fn held_back(&mut self, r: &Routes<'_>, to: Gpid) -> bool {
        if !self.pushed_to_fabric {
            return false;
        }
        self.pushed_to_fabric = false;
        r.net.holds_back(to)
    }

    /// A request for an eager send held back on its way to `to`; done when the packet left.
    pub(crate) fn hold(&mut self, to: Gpid, status: Status) -> u64 {
        self.held += 1;
        self.reqs.insert(ReqState::SendHeld { to, status })
    }

    /// Completes the held sends whose packets have left.
    pub(super) fn release_held(&mut self, r: &Routes<'_>) -> bool {
        let mut left = Vec::new();
        for (id, st) in self.reqs.iter_mut() {
            if let ReqState::SendHeld { to, status } = st {
                if !r.net.holds_back(*to) {
                    left.push((id, *status));
                }
            }
        }
        for &(id, status) in &left {
            self.held -= 1;
            self.set(id, ReqState::Done(Ok(status)));
        }
        !left.is_empty()
    }

    /// A process of another node has not answered this one's connect request for `waited`.
    /// It may be computing outside MPI, so the wait goes on while the process manager says
    /// it runs; once it says the process ended, or cannot say, the peer is given up.
    pub(crate) fn connect_slow(&mut self, net: &mut NetRoute, g: Gpid, waited: Duration) {
        let ended = match self.pmi.job_status(g.job) {
            Ok(st) => st
                .exited
                .iter()
                .find(|e| e.rank == g.rank)
                .map(|e| format!("the process manager says it {}", e.how())),
            Err(e) => Some(format!(
                "the process manager cannot say whether it runs: {e}"
            )),
        };
        match ended {
            Some(why) => net.abandon(
                g,
                format!(
                    "it did not answer the connect request for {:.1} s, and {why}",
                    waited.as_secs_f64()
                ),
            ),
            None => tracing::debug!(
                "peer {g} has not answered the connect request for {waited:?}; it runs \
                 (computing outside MPI?), so the wait goes on"
            ),
        }
    }
}
