//! A non-blocking TCP stream carrying length-prefixed frames: `[u32 len][u8 type][body]`.

use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsRawFd, RawFd};

/// Largest frame accepted from a peer (a message or one RDMA-emulation response).
pub(crate) const MAX_FRAME: usize = 1 << 30;
/// Bytes read per `fill` at most, so one busy stream does not starve the rest.
const READ_BUDGET: usize = 8 << 20;

pub(crate) struct Stream {
    pub(crate) tcp: TcpStream,
    out: VecDeque<Vec<u8>>,
    out_off: usize,
    inbuf: Vec<u8>,
    in_off: usize,
}

pub(crate) enum Fill {
    Open,
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
            inbuf: Vec::new(),
            in_off: 0,
        })
    }

    pub(crate) fn fd(&self) -> RawFd {
        self.tcp.as_raw_fd()
    }

    pub(crate) fn wants_write(&self) -> bool {
        !self.out.is_empty()
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

    /// Read what is available (up to a budget).
    pub(crate) fn fill(&mut self) -> Fill {
        let mut got = 0;
        loop {
            if self.in_off > 0 && self.in_off * 2 >= self.inbuf.len() {
                self.inbuf.drain(..self.in_off);
                self.in_off = 0;
            }
            let len = self.inbuf.len();
            let want = (len - self.in_off).clamp(64 << 10, 4 << 20);
            self.inbuf.resize(len + want, 0);
            match self.tcp.read(&mut self.inbuf[len..]) {
                Ok(0) => {
                    self.inbuf.truncate(len);
                    return Fill::Closed("peer closed the connection".into());
                }
                Ok(n) => {
                    self.inbuf.truncate(len + n);
                    got += n;
                    if got >= READ_BUDGET {
                        return Fill::Open;
                    }
                }
                Err(e) => {
                    self.inbuf.truncate(len);
                    match e.kind() {
                        ErrorKind::WouldBlock => return Fill::Open,
                        ErrorKind::Interrupted => continue,
                        _ => return Fill::Closed(e.to_string()),
                    }
                }
            }
        }
    }

    /// Next complete frame as (type, body), if any; Err on a frame no peer of ours would send.
    pub(crate) fn next_frame(&mut self) -> Result<Option<(u8, Vec<u8>)>, String> {
        let avail = &self.inbuf[self.in_off..];
        if avail.len() < 4 {
            return Ok(None);
        }
        let len = u32::from_le_bytes([avail[0], avail[1], avail[2], avail[3]]) as usize;
        if len == 0 || len > MAX_FRAME {
            return Err(format!("bad frame length {len}"));
        }
        if avail.len() < 4 + len {
            return Ok(None);
        }
        let kind = avail[4];
        let body = avail[5..4 + len].to_vec();
        self.in_off += 4 + len;
        Ok(Some((kind, body)))
    }
}
