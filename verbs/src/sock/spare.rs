//! Reading a socket into a vector's spare capacity. The kernel writes only what arrives, so a
//! receive buffer is never zeroed and only the pages data reached are faulted in: a 64 KiB
//! buffer zeroed up front cost every process 16 page faults (~50 us on a VM) at start-up, on a
//! spawned process's way to its first message, and every TCP connection as much again.

use std::io;
use std::os::fd::RawFd;

/// Reads once from `fd` into `buf`'s spare capacity and extends `buf` by the bytes read (0 at
/// the end of a stream, or for an empty datagram). A datagram longer than the spare capacity
/// is cut, as with any read.
pub(crate) fn read_spare(fd: RawFd, buf: &mut Vec<u8>) -> io::Result<usize> {
    let room = buf.spare_capacity_mut();
    // SAFETY: read writes at most `room.len()` bytes into memory `buf` owns.
    let n = unsafe { libc::read(fd, room.as_mut_ptr().cast(), room.len()) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let n = n as usize;
    // SAFETY: read initialised the `n` bytes that follow the old length.
    unsafe { buf.set_len(buf.len() + n) };
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;

    #[test]
    fn reads_append_after_what_is_there_and_the_end_reads_zero() {
        let (mut a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let mut buf = Vec::with_capacity(8);
        buf.push(b'x');
        a.write_all(b"hello").unwrap();
        assert_eq!(read_spare(b.as_raw_fd(), &mut buf).unwrap(), 5);
        assert_eq!(buf, b"xhello");
        a.write_all(b"12345").unwrap();
        // Only the room left is filled; the rest waits for the next read.
        assert_eq!(read_spare(b.as_raw_fd(), &mut buf).unwrap(), 2);
        assert_eq!(buf, b"xhello12");
        buf.clear();
        assert_eq!(read_spare(b.as_raw_fd(), &mut buf).unwrap(), 3);
        assert_eq!(buf, b"345");
        drop(a);
        assert_eq!(read_spare(b.as_raw_fd(), &mut buf).unwrap(), 0);
        b.set_nonblocking(true).unwrap();
        let mut c = Vec::with_capacity(4);
        let (_keep, d) = std::os::unix::net::UnixStream::pair().unwrap();
        d.set_nonblocking(true).unwrap();
        let e = read_spare(d.as_raw_fd(), &mut c).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
        assert!(c.is_empty());
    }
}
