//! Eager sends to a process of another node that wait in this process: for the connection
//! the first one opens, or in the fabric's buffer of the connection. Such a send completes
//! once its packet has left, so that a process which then computes outside MPI (or blocks
//! outside it, as `MPI_Comm_join` does in `accept`) has not kept back what it sent.

use super::Protocol;
use crate::gpid::Gpid;
use crate::reqs::ReqState;
use crate::route::Routes;
use crate::Status;

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
}
