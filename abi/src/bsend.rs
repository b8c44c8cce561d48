//! The buffers of buffered sends: the process's (MPI_Buffer_attach) and, from MPI 4.1, one per
//! communicator or session. A buffered send copies its data and counts it against the buffer
//! it uses (the communicator's if attached, else the process's); MPI_BUFFER_AUTOMATIC means no
//! limit. Flushing waits until the sends of a buffer have left.

use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::request::{Active, ReqEntry};

/// Whose buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    Process,
    /// A communicator's table index.
    Comm(usize),
    /// A session's table index.
    Session(usize),
}

/// MPI_BUFFER_AUTOMATIC.
pub const AUTOMATIC: usize = 2;

#[derive(Default)]
pub struct Buffers {
    /// (owner, address, size); size is ignored for MPI_BUFFER_AUTOMATIC.
    attached: Vec<(Owner, usize, usize)>,
    /// Sends in flight: their buffer and their data's length.
    in_flight: Vec<(Owner, Active, usize)>,
}

impl Buffers {
    pub fn attach(&mut self, owner: Owner, addr: usize, size: usize) -> MpiResult<()> {
        if self.attached.iter().any(|a| a.0 == owner) {
            return err(
                MPI_ERR_BUFFER,
                "a buffer is attached already: detach it first",
            );
        }
        self.attached.push((owner, addr, size));
        Ok(())
    }

    /// Waits for the buffer's sends, removes it and gives back (address, size); (0, 0) when
    /// none is attached, as MPICH does, so that a library can save and restore the caller's
    /// buffer whether there is one or not.
    pub fn detach(&mut self, owner: Owner) -> MpiResult<(usize, usize)> {
        let Some(i) = self.attached.iter().position(|a| a.0 == owner) else {
            return Ok((0, 0));
        };
        self.flush(owner)?;
        let (_, addr, size) = self.attached.remove(i);
        Ok((addr, if addr == AUTOMATIC { 0 } else { size }))
    }

    /// Waits until every buffered send through `owner`'s buffer has left.
    pub fn flush(&mut self, owner: Owner) -> MpiResult<()> {
        let (mine, rest) = std::mem::take(&mut self.in_flight)
            .into_iter()
            .partition::<Vec<_>, _>(|e| e.0 == owner);
        self.in_flight = rest;
        for (_, a, _) in mine {
            ReqEntry::new(a, 0).step(true)?;
        }
        Ok(())
    }

    /// Tests the sends through `owner`'s buffer and drops those that have left; whether none
    /// is left (`flush` for a caller that lets other threads in between its tests).
    pub fn settled(&mut self, owner: Owner) -> MpiResult<bool> {
        let mut failed = None;
        self.in_flight.retain_mut(|(o, a, _)| match a {
            _ if *o != owner => true,
            Active::P2p { req, .. } => match req.test() {
                Ok(None) => true,
                Ok(Some(_)) => false,
                Err(e) => {
                    failed.get_or_insert(e);
                    false
                }
            },
            _ => false,
        });
        match failed {
            Some(e) => Err(e.into()),
            None => Ok(!self.in_flight.iter().any(|e| e.0 == owner)),
        }
    }

    /// The buffer a buffered send on communicator `comm` (table index) uses, if `need` bytes
    /// (with MPI_BSEND_OVERHEAD) fit in it.
    pub fn room(&mut self, comm: usize, need: usize) -> MpiResult<Owner> {
        let Some(&(owner, addr, size)) = self
            .attached
            .iter()
            .find(|a| a.0 == Owner::Comm(comm))
            .or_else(|| self.attached.iter().find(|a| a.0 == Owner::Process))
        else {
            return err(
                MPI_ERR_BUFFER,
                "MPI_Bsend needs a buffer: call MPI_Buffer_attach (or MPI_Comm_attach_buffer) first",
            );
        };
        if addr == AUTOMATIC {
            return Ok(owner);
        }
        self.in_flight.retain_mut(|(_, a, _)| match a {
            Active::P2p { req, .. } => !matches!(req.test(), Ok(Some(_)) | Err(_)),
            _ => false,
        });
        let used: usize = self
            .in_flight
            .iter()
            .filter(|e| e.0 == owner)
            .map(|e| e.2 + MPI_BSEND_OVERHEAD)
            .sum();
        if used + need > size {
            return err(
                MPI_ERR_BUFFER,
                format!("the attached buffer of {size} bytes has {} free, the message needs {need} (with MPI_BSEND_OVERHEAD)", size.saturating_sub(used)),
            );
        }
        Ok(owner)
    }

    pub fn push(&mut self, owner: Owner, a: Active, len: usize) {
        self.in_flight.push((owner, a, len));
    }

    /// Every send in flight, for MPI_Finalize to complete.
    pub fn drain(&mut self) -> Vec<Active> {
        self.in_flight.drain(..).map(|e| e.1).collect()
    }
}
