//! Network limits: bare UDP and TCP ping-pong and TCP streaming bandwidth between two processes
//! on loopback (the parent and a forked child). These are the floors the `sock` provider is
//! measured against. Each returns NaN if the measurement could not be completed (socket error,
//! or the peer went quiet for 5 s); nothing here blocks without a bound.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream, UdpSocket};
use std::time::{Duration, Instant};

const QUIET: Duration = Duration::from_secs(5);
const WARMUP: usize = 10;

/// Run `child` in a forked process (exit code 0 when it returns true), then `parent` here; reap
/// the child. Sockets and the child's buffers are made before the fork, so the child needs no
/// address exchange and no allocation.
fn with_child(child: impl FnOnce() -> bool, parent: impl FnOnce() -> f64) -> f64 {
    // SAFETY: the child only does socket I/O on already-open sockets and then _exit()s; it never
    // returns into the caller's code or runs destructors of the parent's state.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return f64::NAN;
    }
    if pid == 0 {
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(child)).unwrap_or(false);
        // SAFETY: immediate exit of the forked child without unwinding into the parent's frames.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    let v = parent();
    let mut status = 0;
    if !v.is_finite() {
        // SAFETY: pid is our own child.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    // SAFETY: reaping our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        v
    } else {
        f64::NAN
    }
}

/// Half the mean round-trip time of a `bytes`-byte UDP datagram, in microseconds.
pub fn udp_pingpong_one_way_us(bytes: usize, iters: usize) -> f64 {
    let bytes = bytes.clamp(1, 65_000);
    let Ok(a) = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)) else {
        return f64::NAN;
    };
    let Ok(b) = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)) else {
        return f64::NAN;
    };
    let (Ok(aa), Ok(ba)) = (a.local_addr(), b.local_addr()) else {
        return f64::NAN;
    };
    if a.connect(ba).is_err() || b.connect(aa).is_err() {
        return f64::NAN;
    }
    for s in [&a, &b] {
        if s.set_read_timeout(Some(QUIET)).is_err() {
            return f64::NAN;
        }
    }
    let total = iters + WARMUP;
    let mut cbuf = vec![0u8; bytes];
    with_child(
        move || {
            let buf = &mut cbuf;
            (0..total).all(|_| b.recv(buf).is_ok() && b.send(buf).is_ok())
        },
        || {
            let mut buf = vec![0u8; bytes];
            let mut start = Instant::now();
            for i in 0..total {
                if i == WARMUP {
                    start = Instant::now();
                }
                if a.send(&buf).is_err() || a.recv(&mut buf).is_err() {
                    return f64::NAN;
                }
            }
            start.elapsed().as_secs_f64() * 1e6 / iters.max(1) as f64 / 2.0
        },
    )
}

fn tcp_pair() -> Option<(TcpListener, std::net::SocketAddr)> {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).ok()?;
    let addr = l.local_addr().ok()?;
    Some((l, addr))
}

fn tcp_setup(s: &TcpStream) -> bool {
    s.set_nodelay(true).is_ok()
        && s.set_read_timeout(Some(QUIET)).is_ok()
        && s.set_write_timeout(Some(QUIET)).is_ok()
}

/// The parent's end of the connection: accept with a bound (the child connects right after fork).
fn accept_bounded(l: &TcpListener) -> Option<TcpStream> {
    l.set_nonblocking(true).ok()?;
    let end = Instant::now() + QUIET;
    loop {
        match l.accept() {
            Ok((s, _)) => {
                s.set_nonblocking(false).ok()?;
                return tcp_setup(&s).then_some(s);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock && Instant::now() < end => {
                std::thread::sleep(Duration::from_micros(100))
            }
            Err(_) => return None,
        }
    }
}

/// Half the mean round-trip time of a `bytes`-byte message over TCP (TCP_NODELAY), in microseconds.
pub fn tcp_pingpong_one_way_us(bytes: usize, iters: usize) -> f64 {
    tcp_pingpong(bytes, iters, false, 1).map_or(f64::NAN, |b| b[0])
}

/// The same with both ends polling non-blocking sockets (as the `sock` provider does) instead
/// of sleeping in read(2): no wake-up on the path, so the floor of a polling design.
pub fn tcp_polling_pingpong_one_way_us(bytes: usize, iters: usize) -> f64 {
    tcp_pingpong(bytes, iters, true, 1).map_or(f64::NAN, |b| b[0])
}

/// The polling ping-pong's one-way latency (us) of each of `batches` batches of `iters / batches`
/// round trips, in time order (empty if it could not run), for percentiles that a noisy
/// machine's stalls do not move as they move a mean.
pub fn tcp_polling_pingpong_batches_us(bytes: usize, iters: usize, batches: usize) -> Vec<f64> {
    tcp_pingpong(bytes, iters, true, batches).unwrap_or_default()
}

fn get(s: &mut TcpStream, buf: &mut [u8], polling: bool) -> bool {
    if polling {
        spin_read(s, buf)
    } else {
        s.read_exact(buf).is_ok()
    }
}

fn put(s: &mut TcpStream, buf: &[u8], polling: bool) -> bool {
    if polling {
        spin_write(s, buf)
    } else {
        s.write_all(buf).is_ok()
    }
}

/// One-way latencies (us) of `batches` batches of round trips, `iters` in all.
fn tcp_pingpong(bytes: usize, iters: usize, polling: bool, batches: usize) -> Option<Vec<f64>> {
    let bytes = bytes.max(1);
    let batches = batches.clamp(1, iters.max(1));
    let per = (iters / batches).max(1);
    let (l, addr) = tcp_pair()?;
    let total = per * batches + WARMUP;
    let mut buf = vec![0u8; bytes];
    let mut means = Vec::with_capacity(batches);
    let ok = with_child(
        move || {
            let Ok(mut s) = TcpStream::connect_timeout(&addr, QUIET) else {
                return false;
            };
            tcp_setup(&s)
                && s.set_nonblocking(polling).is_ok()
                && (0..total).all(|_| get(&mut s, &mut buf, polling) && put(&mut s, &buf, polling))
        },
        || {
            let Some(mut s) = accept_bounded(&l) else {
                return f64::NAN;
            };
            if s.set_nonblocking(polling).is_err() {
                return f64::NAN;
            }
            let mut buf = vec![0u8; bytes];
            for _ in 0..WARMUP {
                if !put(&mut s, &buf, polling) || !get(&mut s, &mut buf, polling) {
                    return f64::NAN;
                }
            }
            for _ in 0..batches {
                let start = Instant::now();
                for _ in 0..per {
                    if !put(&mut s, &buf, polling) || !get(&mut s, &mut buf, polling) {
                        return f64::NAN;
                    }
                }
                means.push(start.elapsed().as_secs_f64() * 1e6 / per as f64 / 2.0);
            }
            0.0
        },
    );
    (ok.is_finite() && means.len() == batches).then_some(means)
}

/// Moves `len` bytes through a non-blocking stream by polling `step` (given the bytes done so
/// far); false on error, close or `QUIET` without progress.
fn spin_io(len: usize, mut step: impl FnMut(usize) -> std::io::Result<usize>) -> bool {
    let mut done = 0;
    let mut since = Instant::now();
    while done < len {
        match step(done) {
            Ok(0) => return false,
            Ok(n) => {
                done += n;
                since = Instant::now();
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if since.elapsed() > QUIET {
                    return false;
                }
                std::hint::spin_loop();
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
    true
}

fn spin_read(s: &mut TcpStream, buf: &mut [u8]) -> bool {
    spin_io(buf.len(), |at| s.read(&mut buf[at..]))
}

fn spin_write(s: &mut TcpStream, buf: &[u8]) -> bool {
    spin_io(buf.len(), |at| s.write(&buf[at..]))
}

/// Streaming bandwidth of `iters` back-to-back `bytes`-byte writes over TCP, in MB/s (10^6 bytes
/// per second, as OSU reports), timed until the receiver acknowledges the last byte.
pub fn tcp_bandwidth_mbps(bytes: usize, iters: usize) -> f64 {
    let bytes = bytes.max(1);
    let Some((l, addr)) = tcp_pair() else {
        return f64::NAN;
    };
    let mut buf = vec![0u8; bytes];
    with_child(
        move || {
            let Ok(mut s) = TcpStream::connect_timeout(&addr, QUIET) else {
                return false;
            };
            if !tcp_setup(&s) {
                return false;
            }
            // Warm-up round, acknowledged, then the timed stream, acknowledged.
            for n in [1, iters] {
                if !(0..n).all(|_| s.read_exact(&mut buf).is_ok()) || s.write_all(&[1]).is_err() {
                    return false;
                }
            }
            true
        },
        || {
            let Some(mut s) = accept_bounded(&l) else {
                return f64::NAN;
            };
            let buf = vec![7u8; bytes];
            let mut ack = [0u8; 1];
            if s.write_all(&buf).is_err() || s.read_exact(&mut ack).is_err() {
                return f64::NAN;
            }
            let start = Instant::now();
            for _ in 0..iters {
                if s.write_all(&buf).is_err() {
                    return f64::NAN;
                }
            }
            if s.read_exact(&mut ack).is_err() {
                return f64::NAN;
            }
            (bytes * iters) as f64 / start.elapsed().as_secs_f64() / 1e6
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floors_produce_numbers() {
        assert!(udp_pingpong_one_way_us(8, 50) > 0.0);
        assert!(tcp_pingpong_one_way_us(8, 50) > 0.0);
        assert!(tcp_polling_pingpong_one_way_us(8, 50) > 0.0);
        assert!(tcp_polling_pingpong_one_way_us(100_000, 3) > 0.0);
        let batches = tcp_polling_pingpong_batches_us(8, 60, 20);
        assert_eq!(batches.len(), 20);
        assert!(batches.iter().all(|&us| us > 0.0));
        assert!(tcp_bandwidth_mbps(65536, 50) > 0.0);
        assert!(udp_pingpong_one_way_us(1500, 5).is_finite());
        if std::env::var("IBDYN_FLOORS_PRINT").is_ok() {
            eprintln!(
                "udp8 {:.2} us, tcp8 {:.2} us, tcp 1MiB {:.0} MB/s",
                udp_pingpong_one_way_us(8, 5000),
                tcp_pingpong_one_way_us(8, 5000),
                tcp_bandwidth_mbps(1 << 20, 64)
            );
        }
    }
}
