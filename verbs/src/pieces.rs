//! RDMA reads and writes longer than one provider transfer go as several pieces. The caller
//! sees one completion, reported when every piece has completed: after a failed piece, its
//! siblings may still be moving bytes in the caller's buffer until they complete too.
//!
//! One transfer is bounded on both providers: a `sock` frame carries at most 1 GiB, and an
//! InfiniBand work request's scatter/gather length is 32 bits (a port's `max_msg_sz` is
//! commonly 2 GiB).

use crate::error::VerbsError;
use crate::fabric::Event;
use std::collections::HashMap;

/// Bytes of one piece at most, unless configured lower (`FabricConfig::max_transfer`).
pub(crate) const PIECE: usize = 256 << 20;

/// Piece tokens have this bit set; callers' tokens must not.
const PIECE_BIT: u64 = 1 << 63;

pub(crate) struct Pieces {
    /// Bytes of one piece.
    max: usize,
    next: u64,
    /// Piece token → the caller's token.
    owner: HashMap<u64, u64>,
    /// The caller's token → its transfer.
    open: HashMap<u64, Transfer>,
}

struct Transfer {
    write: bool,
    left: usize,
    error: Option<VerbsError>,
}

/// One piece to submit: `len` bytes at `offset` into the transfer, completing as `token`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Piece {
    pub offset: usize,
    pub len: usize,
    pub token: u64,
}

impl Pieces {
    pub(crate) fn new(max: usize) -> Pieces {
        Pieces {
            max: max.clamp(1, PIECE),
            next: 0,
            owner: HashMap::new(),
            open: HashMap::new(),
        }
    }

    /// Bytes of one piece.
    pub(crate) fn max(&self) -> usize {
        self.max
    }

    /// Checks a caller's token: the top bit is reserved for pieces.
    pub(crate) fn check_token(token: u64) -> Result<(), VerbsError> {
        if token & PIECE_BIT != 0 {
            return Err(VerbsError::InvalidArgument(format!(
                "RDMA token {token:#x} has bit 63 set, which the fabric reserves for its own use"
            )));
        }
        Ok(())
    }

    /// Splits a transfer of `len` (more than `max`) bytes with the caller's `token` into pieces.
    pub(crate) fn split(&mut self, token: u64, len: usize, write: bool) -> Vec<Piece> {
        let max = self.max;
        let pieces: Vec<Piece> = (0..len)
            .step_by(max)
            .map(|offset| {
                self.next += 1;
                let piece = PIECE_BIT | self.next;
                self.owner.insert(piece, token);
                Piece {
                    offset,
                    len: max.min(len - offset),
                    token: piece,
                }
            })
            .collect();
        self.open.insert(
            token,
            Transfer {
                write,
                left: pieces.len(),
                error: None,
            },
        );
        pieces
    }

    /// Submitting `unsent` (the tail of a transfer's pieces) failed with `error`: they never
    /// complete. Returns the error back when no piece of the transfer was sent (the caller's
    /// call fails); otherwise the transfer will complete as failed.
    pub(crate) fn unsent(&mut self, unsent: &[Piece], error: VerbsError) -> Option<VerbsError> {
        let token = self.owner.get(&unsent.first()?.token).copied()?;
        for p in unsent {
            self.owner.remove(&p.token);
        }
        let t = self.open.get_mut(&token)?;
        t.left -= unsent.len();
        if t.left == 0 {
            self.open.remove(&token);
            return Some(error);
        }
        t.error.get_or_insert(error);
        None
    }

    /// Replaces the completions of pieces in `out[from..]` by one completion per transfer,
    /// once all its pieces have completed.
    pub(crate) fn gather(&mut self, out: &mut Vec<Event>, from: usize) {
        if self.owner.is_empty() {
            return;
        }
        let tail: Vec<Event> = out.drain(from..).collect();
        for ev in tail {
            let piece = match &ev {
                Event::ReadDone { token }
                | Event::WriteDone { token }
                | Event::ReadFailed { token, .. }
                | Event::WriteFailed { token, .. } => *token,
                _ => 0,
            };
            let Some(token) = self.owner.remove(&piece) else {
                out.push(ev);
                continue;
            };
            let error = match ev {
                Event::ReadFailed { error, .. } | Event::WriteFailed { error, .. } => Some(error),
                _ => None,
            };
            out.extend(self.piece_done(token, error));
        }
    }

    fn piece_done(&mut self, token: u64, error: Option<VerbsError>) -> Option<Event> {
        let t = self.open.get_mut(&token)?;
        t.left -= 1;
        if let Some(e) = error {
            t.error.get_or_insert(e);
        }
        if t.left > 0 {
            return None;
        }
        let t = self.open.remove(&token)?;
        Some(match (t.write, t.error) {
            (false, None) => Event::ReadDone { token },
            (false, Some(error)) => Event::ReadFailed { token, error },
            (true, None) => Event::WriteDone { token },
            (true, Some(error)) => Event::WriteFailed { token, error },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn done(token: u64) -> Event {
        Event::ReadDone { token }
    }

    fn failed(token: u64) -> Event {
        Event::ReadFailed {
            token,
            error: VerbsError::RemoteAccess(format!("piece {token:#x}")),
        }
    }

    #[test]
    fn a_transfer_splits_into_pieces_that_cover_it_exactly() {
        let mut p = Pieces::new(100);
        let pieces = p.split(7, 250, false);
        let spans: Vec<(usize, usize)> = pieces.iter().map(|x| (x.offset, x.len)).collect();
        assert_eq!(spans, [(0, 100), (100, 100), (200, 50)]);
        assert!(pieces.iter().all(|x| Pieces::check_token(x.token).is_err()));
        assert!(Pieces::check_token(7).is_ok());
    }

    #[test]
    fn one_completion_when_the_last_piece_completes_and_others_pass_through() {
        let mut p = Pieces::new(10);
        let a = p.split(1, 30, false);
        let b = p.split(2, 20, true);
        let mut out = vec![
            done(99),
            done(a[2].token),
            Event::WriteDone { token: b[0].token },
        ];
        p.gather(&mut out, 1);
        assert!(matches!(out[..], [Event::ReadDone { token: 99 }]));
        out.extend([done(a[0].token), Event::WriteDone { token: b[1].token }]);
        out.push(done(a[1].token));
        p.gather(&mut out, 1);
        let tokens: Vec<u64> = out
            .iter()
            .map(|e| match e {
                Event::ReadDone { token } | Event::WriteDone { token } => *token,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(tokens, [99, 2, 1]);
        assert!(matches!(out[1], Event::WriteDone { .. }));
        assert!(p.owner.is_empty() && p.open.is_empty());
    }

    #[test]
    fn a_failed_piece_fails_the_transfer_only_after_its_siblings_complete() {
        let mut p = Pieces::new(10);
        let a = p.split(5, 30, false);
        let mut out = vec![failed(a[1].token), done(a[0].token)];
        p.gather(&mut out, 0);
        assert!(out.is_empty(), "{out:?}");
        out.push(done(a[2].token));
        p.gather(&mut out, 0);
        match &out[..] {
            [Event::ReadFailed { token: 5, error }] => assert!(error.to_string().contains("piece")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn pieces_never_submitted_do_not_hold_the_completion() {
        let mut p = Pieces::new(10);
        let a = p.split(3, 40, false);
        let e = VerbsError::InvalidArgument("queue full".into());
        assert!(p.unsent(&a[2..], e).is_none());
        let mut out = vec![done(a[0].token), done(a[1].token)];
        p.gather(&mut out, 0);
        assert!(matches!(out[..], [Event::ReadFailed { token: 3, .. }]));
        // Nothing sent at all: the call itself fails.
        let b = p.split(4, 40, false);
        let e = VerbsError::InvalidArgument("no route".into());
        assert!(p.unsent(&b, e).is_some());
        assert!(p.owner.is_empty() && p.open.is_empty());
    }
}
