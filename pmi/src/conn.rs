//! A line-oriented connection to a PMI server with bounded waits.

use crate::error::{PmiError, Result};
use crate::wire::{Command, MAX_LINE};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::time::Instant;

pub(crate) struct LineConn {
    stream: UnixStream,
    buf: Vec<u8>,
}

impl LineConn {
    pub(crate) fn new(stream: UnixStream) -> LineConn {
        LineConn {
            stream,
            buf: Vec::new(),
        }
    }

    pub(crate) fn send(&mut self, text: &str, what: &str) -> Result<()> {
        self.stream
            .write_all(text.as_bytes())
            .map_err(|e| PmiError::io(what, e))
    }

    fn take_line(&mut self) -> Result<Option<Command>> {
        let Some(pos) = self.buf.iter().position(|&b| b == b'\n') else {
            return Ok(None);
        };
        let raw: Vec<u8> = self.buf.drain(..=pos).collect();
        let text = String::from_utf8_lossy(&raw);
        Command::parse(&text).map(Some)
    }

    /// Waits until `fd` is readable or the deadline passes; `None` waits not at all.
    fn readable(&self, deadline: Option<Instant>) -> Result<bool> {
        let ms = match deadline {
            None => 0,
            // Rounded up: a wait of less than a millisecond (the idle hook's slice, once the
            // hook has run) must block, not poll with 0 and turn the caller's wait into a spin.
            Some(d) => d
                .saturating_duration_since(Instant::now())
                .as_micros()
                .div_ceil(1000)
                .min(i32::MAX as u128) as i32,
        };
        let mut pfd = libc::pollfd {
            fd: self.stream.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        loop {
            // SAFETY: one valid pollfd, count 1.
            let n = unsafe { libc::poll(&mut pfd, 1, ms) };
            if n >= 0 {
                return Ok(n > 0);
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(PmiError::io("poll", e));
            }
        }
    }

    fn fill(&mut self, what: &str) -> Result<()> {
        // Read straight into the line buffer's spare room, a page to 64 KiB of it (zeroing
        // all of a long reply's spare room on every read would cost more than the read): a
        // zeroed 64 KiB array on the stack cost a spawned process 16 page faults, the stack
        // growing, on its first PMI reply.
        let old = self.buf.len();
        self.buf.reserve(4096);
        let room = (self.buf.capacity() - old).min(64 << 10);
        self.buf.resize(old + room, 0);
        let n = loop {
            match self.stream.read(&mut self.buf[old..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.buf.truncate(old);
                    return Err(PmiError::io(what, e));
                }
            }
        };
        self.buf.truncate(old + n);
        if n == 0 {
            return Err(PmiError::Closed(what.to_string()));
        }
        if self.buf.len() > MAX_LINE {
            return Err(PmiError::Malformed {
                line: "...".into(),
                why: format!("reply longer than {MAX_LINE}"),
            });
        }
        Ok(())
    }

    /// Next line, waiting at most until `deadline`.
    pub(crate) fn recv(
        &mut self,
        deadline: Instant,
        what: &str,
        started: Instant,
    ) -> Result<Command> {
        let mut slice = crate::idle::SLICE;
        loop {
            if let Some(c) = self.take_line()? {
                return Ok(c);
            }
            // With a hook installed (the runtime's fabric), block only a slice at a time and
            // run it in between, so the process keeps answering its peers while it waits.
            let until = if crate::idle::run() {
                deadline.min(Instant::now() + slice)
            } else {
                deadline
            };
            if self.readable(Some(until))? {
                self.fill(what)?;
                slice = crate::idle::SLICE;
            } else if Instant::now() >= deadline {
                return Err(PmiError::Timeout {
                    what: what.into(),
                    secs: started.elapsed().as_secs_f64(),
                });
            } else {
                slice = crate::idle::next_slice(slice);
            }
        }
    }

    /// Next line if one is already available.
    pub(crate) fn try_recv(&mut self, what: &str) -> Result<Option<Command>> {
        loop {
            if let Some(c) = self.take_line()? {
                return Ok(Some(c));
            }
            if !self.readable(None)? {
                return Ok(None);
            }
            self.fill(what)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;
    use std::time::Duration;

    /// A wait with the idle hook installed blocks a slice at a time: the hook runs about once
    /// per millisecond, not in a loop (a poll rounded down to 0 ms made waiting processes spin
    /// and starve the daemon on a loaded machine).
    #[test]
    fn a_wait_with_the_idle_hook_blocks_between_runs() {
        let _owner = ibdyn_owner::enter();
        let (a, _b) = UnixStream::pair().expect("socketpair");
        let mut conn = LineConn::new(a);
        let runs = Rc::new(std::cell::Cell::new(0u32));
        let r = runs.clone();
        crate::set_idle_hook(Some(Box::new(move || r.set(r.get() + 1))));
        let started = Instant::now();
        let wait = Duration::from_millis(30);
        let got = conn.recv(started + wait, "test reply", started);
        crate::set_idle_hook(None);
        assert!(matches!(got, Err(PmiError::Timeout { .. })), "{got:?}");
        // At most one run per slice (plus the first); a spinning wait runs it thousands of times.
        let slices = (started.elapsed().as_micros() / 1000) as u32 + 2;
        assert!(
            runs.get() <= slices,
            "the hook ran {} times in {:?}",
            runs.get(),
            started.elapsed()
        );
    }
}
