//! A handle on this process's runtime for the dynamic-process layer: the process manager,
//! the fabric's control datagrams, address cards, and making communicators from parts.

use crate::comm::Communicator;
use crate::engine::Engine;
use crate::error::{CommError, Result};
use crate::gpid::{Gpid, ProcCard};
use crate::group::Group;
use crate::net_route::no_fabric;
use ibdyn_pmi::PmiClient;
use ibdyn_verbs::AddressCard;
use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// The runtime behind a communicator (one per process).
#[derive(Clone)]
pub struct Runtime {
    eng: Rc<RefCell<Engine>>,
}

impl Communicator {
    /// The runtime this communicator belongs to.
    pub fn runtime(&self) -> Runtime {
        Runtime {
            eng: self.engine().clone(),
        }
    }
}

impl Runtime {
    /// This process's id.
    pub fn me(&self) -> Gpid {
        self.eng.borrow().me()
    }

    /// This process's address card.
    pub fn card(&self) -> ProcCard {
        self.eng.borrow().card().clone()
    }

    /// The address card of `g` (looked up in the process manager on first use).
    pub fn card_of(&self, g: Gpid) -> Result<ProcCard> {
        self.eng.borrow_mut().card_of(g)
    }

    /// Makes cards of processes of other jobs known (learnt from a peer, not from the
    /// process manager).
    pub fn learn_cards(&self, cards: impl IntoIterator<Item = ProcCard>) {
        let mut eng = self.eng.borrow_mut();
        let job = eng.me().job;
        eng.learn_cards(cards.into_iter().filter(|c| c.gpid.job != job));
    }

    /// Runs `f` with the process-management client.
    pub fn with_pmi<R>(&self, f: impl FnOnce(&mut PmiClient) -> R) -> R {
        f(self.eng.borrow_mut().pmi())
    }

    /// Sets what answers control datagrams as they arrive, instead of keeping them for a wait
    /// (`ControlResponder`).
    pub fn set_control_responder(&self, r: crate::ControlResponder) {
        self.eng.borrow_mut().set_control_responder(r)
    }

    /// Sends one reliable datagram over the fabric's UD control channel.
    pub fn control_send(&self, to: &AddressCard, data: &[u8]) -> Result<()> {
        self.eng.borrow_mut().control_send(to, data)
    }

    /// Progresses until a control datagram for which `want` returns true arrives (it is
    /// removed and returned with the sender's card), a datagram to `asked` (the peer this
    /// wait expects an answer from) is undeliverable, `check` fails, or `timeout` passes.
    /// `check` runs now and then with the process-management client, to notice a peer that can
    /// no longer answer. Undeliverable datagrams to anyone else are not this wait's business
    /// (e.g. a late acknowledgement lost from a process that has since exited) and are dropped.
    pub fn await_control(
        &self,
        timeout: Duration,
        what: &str,
        asked: Option<&AddressCard>,
        mut want: impl FnMut(&[u8]) -> bool,
        mut check: impl FnMut(&mut PmiClient) -> Result<()>,
    ) -> Result<(AddressCard, Vec<u8>)> {
        let deadline = Instant::now() + timeout;
        let mut found = None;
        let mut failed = None;
        let mut last_check = Instant::now();
        let mut eng = self.eng.borrow_mut();
        if !eng.has_fabric() {
            return Err(no_fabric());
        }
        eng.expect_control(true);
        let mut done = |e: &mut Engine| {
            if let Some(m) = e.take_control(&mut want) {
                found = Some(m);
                return true;
            }
            while let Some((to, why)) = e.take_control_failure() {
                if asked == Some(&to) {
                    failed = Some(CommError::PeerDead {
                        peer: format!("{to:?}"),
                        detail: why,
                    });
                    return true;
                }
                tracing::debug!("ignored while awaiting {what}: datagram to {to} undelivered");
            }
            let now = Instant::now();
            if now.duration_since(last_check) > Duration::from_millis(50) {
                last_check = now;
                if let Err(e) = check(e.pmi()) {
                    failed = Some(e);
                    return true;
                }
            }
            if now > deadline {
                failed = Some(CommError::Timeout {
                    what: what.to_string(),
                    secs: timeout.as_secs(),
                });
                return true;
            }
            false
        };
        let r = if crate::turns::taken() {
            // Other threads' calls go on while this one waits (a server thread in accept).
            drop(eng);
            let r = crate::turns::wait_taking_turns(|| {
                let mut e = self.eng.borrow_mut();
                if done(&mut e) {
                    return Ok(Some(()));
                }
                e.progress()?;
                Ok(done(&mut e).then_some(()))
            });
            eng = self.eng.borrow_mut();
            r
        } else {
            eng.wait_blocking_until(done)
        };
        eng.expect_control(false);
        r?;
        match (found, failed) {
            (Some(m), _) => Ok(m),
            (None, Some(e)) => Err(e),
            (None, None) => Err(CommError::Timeout {
                what: what.to_string(),
                secs: timeout.as_secs(),
            }),
        }
    }

    /// A communicator from its parts: an intracommunicator when `remote` is None, else an
    /// intercommunicator. Every member must build it with the same context id and groups.
    pub fn make_communicator(
        &self,
        ctx: u64,
        local: Group,
        remote: Option<Group>,
    ) -> Result<Communicator> {
        let me = self.me();
        Communicator::new(self.eng.clone(), ctx, local, remote, me)
    }
}
