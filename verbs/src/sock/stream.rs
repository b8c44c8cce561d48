//! A non-blocking TCP stream carrying length-prefixed frames: `[u32 len][u8 type][body]`.

use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsRawFd, RawFd};

use super::spare::read_spare;

/// Largest frame accepted from a peer (a message or one RDMA-emulation response).
pub(crate) const MAX_FRAME: usize = 1 << 30;
/// Bytes read per `fill` at most, so one busy stream does not starve the rest.
const READ_BUDGET: usize = 8 << 20;

pub(crate) struct Stream {
    pub(crate) tcp: TcpStream,
    out: VecDeque<Vec<u8>>,
    out_off: usize,
    /// Received bytes live in `inbuf[start..]`; the socket is read into the spare capacity
    /// (`read_spare`), so the buffer is never zeroed and only the pages data reached are
    /// faulted in; it only grows.
    inbuf: Vec<u8>,
    start: usize,
    /// A large frame being read straight into its own buffer: (type, body, bytes filled).
    big: Option<(u8, Vec<u8>, usize)>,
    /// Largest frame accepted: tiny until the peer has identified itself with a HELLO.
    pub(crate) max_frame: usize,
}

/// Frames larger than this are received into their own buffer (no staging copy).
const BIG_FRAME: usize = 64 << 10;

pub(crate) enum Fill {
    /// Still open; this many bytes were read.
    Open(usize),
    Closed(String),
}

impl Stream {
    pub(crate) fn new(tcp: TcpStream) -> std::io::Result<Stream> {
        tcp.set_nonblocking(true)?;
        tcp.set_nodelay(true)?;
        Ok(Stream {
            tcp,
            out: VecDeque::new(),
            out_off: 0,
            inbuf: Vec::with_capacity(64 << 10),
            start: 0,
            big: None,
            max_frame: MAX_FRAME,
        })
    }

    pub(crate) fn fd(&self) -> RawFd {
        self.tcp.as_raw_fd()
    }

    pub(crate) fn wants_write(&self) -> bool {
        !self.out.is_empty()
    }

    /// True when every byte written has been acknowledged by the peer's TCP: only then may this
    /// process exit without losing it (closing a socket that still has unread input sends a
    /// reset, which discards what the kernel had not sent yet).
    pub(crate) fn delivered(&self) -> bool {
        if self.wants_write() {
            return false;
        }
        let mut queued: libc::c_int = 0;
        // SAFETY: TIOCOUTQ writes one int through the valid pointer; the fd is open.
        let rc = unsafe { libc::ioctl(self.fd(), libc::TIOCOUTQ, &mut queued) };
        rc != 0 || queued == 0
    }

    /// Queue a frame whose body is handed over (large bodies are not copied).
    pub(crate) fn push_owned(&mut self, kind: u8, body: Vec<u8>) {
        if body.len() < BIG_FRAME {
            return self.push(kind, &[&body]);
        }
        let mut h = Vec::with_capacity(5);
        h.extend_from_slice(&((body.len() + 1) as u32).to_le_bytes());
        h.push(kind);
        self.out.push_back(h);
        self.out.push_back(body);
    }

    /// Queue a frame built from `kind` and body parts.
    pub(crate) fn push(&mut self, kind: u8, parts: &[&[u8]]) {
        let body: usize = parts.iter().map(|p| p.len()).sum();
        let mut f = Vec::with_capacity(5 + body);
        f.extend_from_slice(&((body + 1) as u32).to_le_bytes());
        f.push(kind);
        for p in parts {
            f.extend_from_slice(p);
        }
        self.out.push_back(f);
    }

    /// Write as much as the socket takes. Err on a broken connection.
    pub(crate) fn flush(&mut self) -> Result<(), String> {
        while let Some(front) = self.out.front() {
            match self.tcp.write(&front[self.out_off..]) {
                Ok(0) => return Err("connection closed while writing".into()),
                Ok(n) => {
                    self.out_off += n;
                    if self.out_off == front.len() {
                        self.out.pop_front();
                        self.out_off = 0;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.to_string()),
            }
        }
        Ok(())
    }

    /// Make room after the received bytes: move them to the front, grow for a large frame.
    fn make_room(&mut self) {
        if self.start > 0 {
            self.inbuf.drain(..self.start);
            self.start = 0;
        }
        if self.inbuf.len() == self.inbuf.capacity() {
            let mut want = self.inbuf.capacity() * 2;
            if self.inbuf.len() >= 4 {
                let len = u32::from_le_bytes([
                    self.inbuf[0],
                    self.inbuf[1],
                    self.inbuf[2],
                    self.inbuf[3],
                ]) as usize;
                want = want.max(4 + len.min(self.max_frame));
            }
            self.inbuf.reserve_exact(want - self.inbuf.len());
        }
    }

    /// Read what is available (up to a budget).
    pub(crate) fn fill(&mut self) -> Fill {
        let mut got = 0;
        loop {
            self.promote();
            let (read, asked) = match self.big.as_mut() {
                Some((_, body, filled)) if *filled == body.len() => return Fill::Open(got),
                Some((_, body, filled)) => {
                    let asked = body.len() - *filled;
                    (self.tcp.read(&mut body[*filled..]), asked)
                }
                None => {
                    if self.inbuf.len() == self.inbuf.capacity() {
                        self.make_room();
                    }
                    let asked = self.inbuf.capacity() - self.inbuf.len();
                    (read_spare(self.tcp.as_raw_fd(), &mut self.inbuf), asked)
                }
            };
            match read {
                Ok(0) => return Fill::Closed("peer closed the connection".into()),
                Ok(n) => {
                    if let Some((_, _, filled)) = self.big.as_mut() {
                        *filled += n;
                    }
                    got += n;
                    // A short read took all the socket had: another read would only say
                    // so (EAGAIN), a system call per message; what comes later the next
                    // poll shows.
                    if got >= READ_BUDGET || n < asked {
                        return Fill::Open(got);
                    }
                }
                Err(e) => match e.kind() {
                    ErrorKind::WouldBlock => return Fill::Open(got),
                    ErrorKind::Interrupted => continue,
                    _ => return Fill::Closed(e.to_string()),
                },
            }
        }
    }

    /// When the frame at the front is large and incomplete, move it into its own buffer.
    fn promote(&mut self) {
        let end = self.inbuf.len();
        if self.big.is_some() || end - self.start < 5 {
            return;
        }
        let h = &self.inbuf[self.start..];
        let len = u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as usize;
        if len <= BIG_FRAME || len > self.max_frame || end - self.start >= 4 + len {
            return; // small, invalid (next_frame reports it) or already complete
        }
        let kind = h[4];
        let have = end - self.start - 5;
        let mut body = vec![0u8; len - 1];
        body[..have].copy_from_slice(&self.inbuf[self.start + 5..]);
        self.big = Some((kind, body, have));
        self.start = 0;
        self.inbuf.clear();
    }

    /// Next complete frame as (type, body), if any; Err on a frame no peer of ours would send.
    pub(crate) fn next_frame(&mut self) -> Result<Option<(u8, Vec<u8>)>, String> {
        if let Some((_, body, filled)) = &self.big {
            if *filled < body.len() {
                return Ok(None);
            }
            let (kind, body, _) = self.big.take().expect("checked");
            return Ok(Some((kind, body)));
        }
        let avail = &self.inbuf[self.start..];
        if avail.len() < 4 {
            return Ok(None);
        }
        let len = u32::from_le_bytes([avail[0], avail[1], avail[2], avail[3]]) as usize;
        if len == 0 || len > self.max_frame {
            return Err(format!("bad frame length {len}"));
        }
        if avail.len() < 4 + len {
            return Ok(None);
        }
        let kind = avail[4];
        let body = avail[5..4 + len].to_vec();
        self.start += 4 + len;
        if self.start == self.inbuf.len() {
            self.start = 0;
            self.inbuf.clear();
        }
        Ok(Some((kind, body)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// Frames of every size class in one burst (many small ones that wrap and grow the staging
    /// buffer, medium ones, one taken into a buffer of its own) arrive whole and in order.
    #[test]
    fn frames_of_all_sizes_arrive_whole_and_in_order() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut tx = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let mut rx = Stream::new(l.accept().unwrap().0).unwrap();
        let mut sizes: Vec<usize> = (0..300).map(|i| 1 + (i * 37) % 2000).collect();
        sizes.extend([40 << 10, 63 << 10, 70 << 10, 5, 200 << 10, 1]);
        let body = |i: usize, n: usize| -> Vec<u8> { (0..n).map(|j| (i * 7 + j) as u8).collect() };
        let writer = {
            let sizes = sizes.clone();
            std::thread::spawn(move || {
                for (i, &n) in sizes.iter().enumerate() {
                    tx.write_all(&((n + 1) as u32).to_le_bytes()).unwrap();
                    tx.write_all(&[i as u8]).unwrap();
                    tx.write_all(&body(i, n)).unwrap();
                }
            })
        };
        let mut got = 0;
        while got < sizes.len() {
            // As the fabric does: frames already read count even when the writer has gone.
            let fill = rx.fill();
            while let Some((kind, b)) = rx.next_frame().unwrap() {
                assert_eq!(kind, got as u8);
                assert_eq!(b, body(got, sizes[got]), "frame {got}");
                got += 1;
            }
            if let Fill::Closed(why) = fill {
                assert_eq!(got, sizes.len(), "closed early: {why}");
            }
            std::thread::yield_now();
        }
        writer.join().unwrap();
    }
}
