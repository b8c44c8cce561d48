//! MPI_Cancel. A posted receive that nothing has matched is withdrawn where it is. An eager
//! send has completed when it starts, so of sends only a rendezvous can be withdrawn: the sender asks the receiver, which takes the request to send
//! out of its unexpected queue if no receive has matched it yet and answers either way. A
//! receive that matched first has already sent its FIN (or CTS) on the same route, so the
//! sender sees that before a "no" and the send completes as usual.

use super::recv::Unexpected;
use super::Protocol;
use crate::error::{CommError, Result};
use crate::gpid::Gpid;
use crate::packet::Kind;
use crate::reqs::ReqState;
use crate::route::Routes;

impl Protocol {
    /// MPI_Cancel of request `id`. A receive that no message has matched is withdrawn at
    /// once; the receiver of a rendezvous send is asked to withdraw it. Such a request then
    /// completes with `CommError::Cancelled`; any other (matched, data moving, complete) goes
    /// on as usual. A receiver that cannot be reached fails the send itself (its wait says
    /// why), not the cancel.
    pub fn cancel_op(&mut self, r: &mut Routes<'_>, id: u64) {
        let to = match self.reqs.get_mut(id) {
            Some(ReqState::RecvPosted(_)) => {
                self.matcher.unpost(id);
                self.set(id, ReqState::Done(Err(CommError::Cancelled)));
                return;
            }
            Some(ReqState::SendRndv(s)) if !s.cancelling => {
                s.cancelling = true;
                s.to
            }
            _ => return,
        };
        if let Err(e) = self.send_ctl(r, to, Kind::CancelSend, id, &[]) {
            tracing::debug!("could not ask {to} to withdraw send {id:#x}: {e}");
        }
    }

    /// A sender asks to withdraw its send `sender_req`.
    pub(super) fn handle_cancel_send(
        &mut self,
        r: &mut Routes<'_>,
        from: Gpid,
        sender_req: u64,
    ) -> Result<()> {
        let withdrawn = self
            .matcher
            .withdraw(|_, u| {
                matches!(u, Unexpected::Rts { from: f, sender_req: s, .. }
                    if *f == from && *s == sender_req)
            })
            .is_some();
        self.send_ctl(
            r,
            from,
            Kind::CancelReply,
            sender_req,
            &[u8::from(withdrawn)],
        )
    }

    /// The receiver's answer about send `id`.
    pub(super) fn handle_cancel_reply(
        &mut self,
        r: &mut Routes<'_>,
        id: u64,
        body: &[u8],
    ) -> Result<()> {
        let withdrawn = match body.first() {
            Some(&b) if b <= 1 => b == 1,
            _ => {
                return Err(CommError::Malformed(format!(
                    "cancel reply with body {body:?} (one byte, 0 or 1, expected)"
                )))
            }
        };
        match self.reqs.get_mut(id) {
            Some(ReqState::SendRndv(s)) if s.cancelling => {
                if withdrawn {
                    self.finish_send(r, id, Err(CommError::Cancelled));
                } else {
                    // Matched: the receiver's FIN (or CTS) comes once its pull has ended.
                    s.cancelling = false;
                }
                Ok(())
            }
            // The receive that matched has finished the send already.
            _ if !withdrawn => Ok(()),
            _ => Err(CommError::Malformed(format!(
                "cancel reply for send {id:#x}, which asked for no cancel"
            ))),
        }
    }
}
