//! The transport interface under the point-to-point protocol, as short as MPICH ch4's table:
//! a route sends packets, exposes a buffer for a rendezvous, pulls a rendezvous's data,
//! delivers what arrived and waits for more. Two routes implement it: shared memory within a
//! node (`ShmRoute`) and the fabric across nodes (`NetRoute`). Each peer has one route,
//! chosen when it is first contacted; `Routes` is the one place that picks the route by peer.

use crate::error::Result;
use crate::gpid::Gpid;
use crate::net_route::NetRoute;
use crate::packet::RtsBody;
use crate::shm_route::{ShmLink, ShmRoute};
use ibdyn_verbs::{AddressCard, RemoteBuf, VerbsError};
use std::time::Duration;

pub(crate) trait Route {
    /// What the route keeps per peer.
    type Link;

    /// Sends one packet (the concatenation of `parts`) to `to`, in order behind every packet
    /// sent to it before.
    fn send(&mut self, link: &mut Self::Link, to: Gpid, parts: &[&[u8]]) -> Result<()>;

    /// The sender's half of a rendezvous: makes `buf` readable by the receiver. `None`: the
    /// receiver reads it where it is (the address in the request-to-send is the buffer's).
    fn expose(&mut self, buf: &[u8]) -> Result<Option<RemoteBuf>>;

    /// Ends an exposure made by `expose`.
    fn release(&mut self, _exposed: &RemoteBuf) {}

    /// The receiver's half: starts moving the sender's data into `pull.dst`.
    ///
    /// # Safety
    /// `pull.dst` must be valid for writes of `pull.len` bytes until the pull has ended: at
    /// once for `Pulled::Done` and `Pulled::Stream`, at the sink's `read_done`/`read_failed`
    /// of `pull.token` for `Pulled::Started`.
    unsafe fn pull(&mut self, link: &Self::Link, pull: &Pull) -> Result<Pulled>;

    /// Hands what arrived to `sink`, in arrival order. Returns whether anything arrived.
    fn progress(&mut self, sink: &mut impl Sink<Self>) -> Result<bool>
    where
        Self: Sized;

    /// Blocks until something may have arrived, at most `t` (spurious returns possible).
    fn wait(&mut self, t: Duration);
}

/// What a route delivers to; it gets the route back so it can reply at once.
pub(crate) trait Sink<R> {
    /// A packet, valid only during the call.
    fn packet(&mut self, route: &mut R, p: &[u8]);
    /// The pull of `token` has put every byte in place.
    fn read_done(&mut self, route: &mut R, token: u64);
    fn read_failed(&mut self, route: &mut R, token: u64, error: VerbsError);
    /// The route found `peer` unreachable.
    fn peer_failed(&mut self, route: &mut R, peer: Gpid, why: &str);
    /// The route has waited `waited` for `peer` to answer its connect request and goes on
    /// waiting unless told to give up (`NetRoute::abandon`).
    fn connect_slow(&mut self, _route: &mut R, _peer: Gpid, _waited: Duration) {}
}

/// A rendezvous message to pull, as its request-to-send describes it.
pub(crate) struct Pull {
    pub from: Gpid,
    pub rts: RtsBody,
    pub dst: *mut u8,
    pub len: usize,
    /// Names the pull in the sink's completion calls.
    pub token: u64,
}

/// How a pull went.
pub(crate) enum Pulled {
    /// The data is in place.
    Done,
    /// The data is moving; the sink hears when it is in place.
    Started,
    /// The route cannot read the sender's memory: the sender must push it in fragments.
    Stream,
}

/// A peer's route and what the route keeps for it.
pub(crate) enum Link {
    Shm(ShmLink),
    Net(AddressCard),
}

/// Both routes, lent together to the protocol while it handles one event.
pub(crate) struct Routes<'a> {
    pub shm: &'a ShmRoute,
    pub net: &'a mut NetRoute,
}

impl Routes<'_> {
    #[inline]
    pub fn send(&mut self, link: &mut Link, to: Gpid, parts: &[&[u8]]) -> Result<()> {
        match link {
            Link::Shm(l) => Route::send(&mut self.shm, l, to, parts),
            Link::Net(c) => self.net.send(c, to, parts),
        }
    }

    pub fn expose(&mut self, link: &Link, buf: &[u8]) -> Result<Option<RemoteBuf>> {
        match link {
            Link::Shm(_) => Route::expose(&mut self.shm, buf),
            Link::Net(_) => self.net.expose(buf),
        }
    }

    /// Ends an exposure; only the fabric makes them (shared memory reads buffers in place).
    pub fn release(&mut self, exposed: &RemoteBuf) {
        self.net.release(exposed)
    }

    /// # Safety
    /// As `Route::pull`.
    pub unsafe fn pull(&mut self, link: &Link, pull: &Pull) -> Result<Pulled> {
        // SAFETY: the caller's guarantee is passed on unchanged.
        unsafe {
            match link {
                Link::Shm(l) => Route::pull(&mut self.shm, l, pull),
                Link::Net(c) => self.net.pull(c, pull),
            }
        }
    }
}
