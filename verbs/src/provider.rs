//! The provider interface: what `ib` and `sock` each implement, and all the layer above uses.
//! Operations a provider lacks fall to the default bodies ("not supported").

use crate::card::AddressCard;
use crate::config::ProviderKind;
use crate::error::{Result, VerbsError};
use crate::RemoteBuf;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::time::Duration;

/// Sleeps `timeout`, or until `bell` is readable.
pub(crate) fn sleep_or_bell(timeout: Duration, bell: Option<BorrowedFd<'_>>) {
    let Some(bell) = bell.filter(|_| !timeout.is_zero()) else {
        std::thread::sleep(timeout);
        return;
    };
    let mut pfd = libc::pollfd {
        fd: bell.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    unsafe { libc::poll(&mut pfd, 1, poll_ms(timeout)) };
}

/// `timeout` as poll(2)'s milliseconds: a part of a millisecond waits a whole one rather than
/// not at all.
pub(crate) fn poll_ms(timeout: Duration) -> i32 {
    let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
    if ms == 0 && !timeout.is_zero() {
        1
    } else {
        ms
    }
}

/// The connection-time identity of one RC endpoint (queue pair number and initial PSN on `ib`,
/// connection id on `sock`), exchanged in connect requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RcEndpoint {
    pub qpn: u32,
    pub psn: u32,
}

/// Completions and arrivals on RC endpoints.
#[derive(Debug)]
pub enum RcEvent {
    Recv {
        qp: u32,
        data: Vec<u8>,
    },
    ReadDone {
        token: u64,
    },
    ReadFailed {
        token: u64,
        error: VerbsError,
    },
    WriteDone {
        token: u64,
    },
    WriteFailed {
        token: u64,
        error: VerbsError,
    },
    /// The endpoint is broken (peer gone, transport error); it is not usable any more.
    Broken {
        qp: u32,
        error: VerbsError,
    },
}

pub trait Provider: Send {
    fn kind(&self) -> ProviderKind;
    fn card(&self) -> AddressCard;
    /// Largest datagram `ud_send` carries.
    fn ud_mtu(&self) -> usize;
    /// Unreliable: may drop, duplicate or reorder.
    fn ud_send(&mut self, to: &AddressCard, datagram: &[u8]) -> Result<()>;
    fn ud_poll(&mut self, out: &mut Vec<Vec<u8>>) -> Result<()>;

    /// Create an unconnected RC endpoint.
    fn rc_create(&mut self) -> Result<RcEndpoint>;
    /// Connect a local endpoint to a remote one (INIT, RTR, RTS on `ib`).
    fn rc_connect(&mut self, qp: u32, remote_card: &AddressCard, remote: RcEndpoint) -> Result<()>;
    fn rc_destroy(&mut self, qp: u32);
    /// Initial packet sequence number of a local endpoint (advertised to the peer).
    fn rc_psn(&self, _qp: u32) -> u32 {
        0
    }
    /// Reliable, ordered; queues when the transport is busy or not yet up.
    fn rc_send(&mut self, qp: u32, parts: &[&[u8]]) -> Result<()>;
    /// `rc_send` of a buffer the provider may keep (saves a copy of large messages).
    fn rc_send_owned(&mut self, qp: u32, data: Vec<u8>) -> Result<()> {
        self.rc_send(qp, &[&data])
    }
    fn rc_poll(&mut self, out: &mut Vec<RcEvent>) -> Result<()>;
    /// True when no RC send is still inside this process (queued, or posted and not completed).
    fn rc_flushed(&self) -> bool {
        true
    }
    /// Whether everything sent on endpoint `qp` has left this process: handed to the device
    /// or the kernel, perhaps not yet acknowledged by the peer (which `rc_flushed` waits for).
    fn rc_sent(&self, _qp: u32) -> bool {
        self.rc_flushed()
    }

    /// Make `[ptr, ptr+len)` readable by remote RDMA reads. The memory must stay valid until
    /// `release`.
    fn expose(&mut self, _ptr: *const u8, _len: usize) -> Result<RemoteBuf> {
        Err(VerbsError::Unsupported("expose"))
    }
    fn release(&mut self, _buf: &RemoteBuf) {}
    /// RDMA read of `remote` into `local[..len]`; completes with `ReadDone`/`ReadFailed`.
    ///
    /// # Safety
    /// `local` must be valid for `len` bytes of writes until the read completes.
    unsafe fn rc_read(
        &mut self,
        _qp: u32,
        _remote: RemoteBuf,
        _local: *mut u8,
        _len: usize,
        _token: u64,
    ) -> Result<()> {
        Err(VerbsError::Unsupported("rdma read"))
    }
    /// RDMA write of `local[..len]` into `remote`; completes with `WriteDone`/`WriteFailed`.
    ///
    /// # Safety
    /// `local` must be valid for `len` bytes of reads until the write completes.
    unsafe fn rc_write(
        &mut self,
        _qp: u32,
        _remote: RemoteBuf,
        _local: *const u8,
        _len: usize,
        _token: u64,
    ) -> Result<()> {
        Err(VerbsError::Unsupported("rdma write"))
    }

    /// Block until traffic may have arrived, `bell` (a caller's fd, e.g. the shared-memory
    /// queue's) is readable, or `timeout` passed.
    fn wait(&mut self, timeout: Duration, bell: Option<BorrowedFd<'_>>) {
        sleep_or_bell(timeout.min(Duration::from_millis(1)), bell);
    }
    /// Provider-level counters (e.g. injected drops), merged into [`crate::FabricStats`].
    fn injected_drops(&self) -> u64 {
        0
    }
    /// Whether an established connection breaks (`RcEvent::Broken`) as soon as the peer's
    /// process ends, with no traffic on it: true where the kernel closes the peer's sockets.
    /// An RC queue pair learns it only when it next sends.
    fn reports_peer_exit(&self) -> bool {
        false
    }
}
