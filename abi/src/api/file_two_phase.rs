//! Collective writes in two phases (ROMIO's collective buffering): the processes split the
//! file range they write together into one contiguous domain each, send every piece of data
//! to the owner of its domain, and each owner writes its domain in as few `pwrite` calls as
//! the pieces allow. Many small interleaved pieces (a strided view) become one large write
//! per process, and the processes no longer take turns on the file's lock for each piece.

use super::selfcall::{check, reduce_int, PMPI_Allgather, PMPI_Alltoall, PMPI_Alltoallv};
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::file::write_ranges;

use std::ffi::c_void;
use std::os::raw::c_int;

/// Below this mean piece size, the pieces go through their domains' owners.
const SMALL_PIECE: u64 = 64 * 1024;

thread_local! {
    /// The send and receive buffers, kept between calls: a fresh multi-megabyte buffer each
    /// time cost more in page faults than the copies themselves.
    static BUFFERS: std::cell::RefCell<(Vec<u8>, Vec<u8>)> = Default::default();
}

/// A buffer of `len` bytes from `v` (grown, never shrunk).
fn sized(v: &mut Vec<u8>, len: usize) -> &mut [u8] {
    if v.len() < len {
        v.resize(len, 0);
    }
    &mut v[..len]
}

fn int(n: usize, what: &str) -> MpiResult<c_int> {
    c_int::try_from(n).or_else(|_| {
        err(
            MPI_ERR_COUNT,
            format!("collective write: {what} ({n}) exceeds what one exchange carries"),
        )
    })
}

/// Writes `data` at the file byte `ranges` (ascending) of every process of `fc` together.
pub(super) fn write_all(
    fd: c_int,
    fc: Handle,
    n: usize,
    ranges: &[(u64, usize)],
    data: &[u8],
) -> MpiResult<()> {
    let lo = ranges.first().map_or(u64::MAX, |r| r.0);
    let hi = ranges.last().map_or(0, |r| r.0 + r.1 as u64);
    let mine = [lo, hi, ranges.len() as u64, data.len() as u64];
    let mut all = vec![[0u64; 4]; n];
    // SAFETY: four u64 from each process.
    check(
        unsafe {
            PMPI_Allgather(
                mine.as_ptr().cast(),
                32,
                MPI_BYTE,
                all.as_mut_ptr().cast(),
                32,
                MPI_BYTE,
                fc,
            )
        },
        "MPI_Allgather",
    )?;
    let (pieces, bytes): (u64, u64) = all.iter().fold((0, 0), |a, x| (a.0 + x[2], a.1 + x[3]));
    if pieces == 0 || bytes / pieces >= SMALL_PIECE {
        return write_ranges(fd, ranges, data);
    }
    let glo = all.iter().map(|x| x[0]).min().unwrap_or(0);
    let ghi = all.iter().map(|x| x[1]).max().unwrap_or(0);
    let chunk = (ghi - glo).div_ceil(n as u64).div_ceil(4096) * 4096;
    let owner = |off: u64| (((off - glo) / chunk.max(1)) as usize).min(n - 1);
    // Split my pieces at the domain boundaries: (owner, file offset, length, data offset).
    let mut split: Vec<(usize, u64, usize, usize)> = Vec::new();
    let mut at = 0;
    for &(off, len) in ranges {
        let (mut o, mut left) = (off, len);
        while left > 0 {
            let d = owner(o);
            let end = (glo + (d as u64 + 1) * chunk).min(o + left as u64);
            let take = if d == n - 1 { left } else { (end - o) as usize };
            split.push((d, o, take, at));
            at += take;
            o += take as u64;
            left -= take;
        }
    }
    // One send buffer, grouped by owner (my pieces are in file order, so each owner's
    // pieces are consecutive in `data` already when domains follow the file).
    let mut heads: Vec<Vec<u64>> = vec![Vec::new(); n];
    let mut sizes = vec![0usize; n];
    for &(d, o, l, _) in &split {
        heads[d].extend([o, l as u64]);
        sizes[d] += l;
    }
    let mut starts = vec![0usize; n];
    for d in 1..n {
        starts[d] = starts[d - 1] + sizes[d - 1];
    }
    let (mut send_buf, mut recv_buf) = BUFFERS.with(|b| std::mem::take(&mut *b.borrow_mut()));
    let send = sized(&mut send_buf, data.len());
    let mut fill = starts.clone();
    for &(d, _, l, from) in &split {
        send[fill[d]..fill[d] + l].copy_from_slice(&data[from..from + l]);
        fill[d] += l;
    }
    // Sends `send` (`counts[d]` bytes to process d, in order) and returns what arrives.
    let exchange = |send: &[u8], counts: &[usize], recv: &mut Vec<u8>| -> MpiResult<usize> {
        let counts: Vec<c_int> = counts
            .iter()
            .map(|&c| int(c, "bytes"))
            .collect::<MpiResult<_>>()?;
        let mut theirs = vec![0 as c_int; n];
        // SAFETY: one int to and from each process.
        check(
            unsafe {
                PMPI_Alltoall(
                    counts.as_ptr().cast(),
                    1,
                    MPI_INT,
                    theirs.as_mut_ptr().cast(),
                    1,
                    MPI_INT,
                    fc,
                )
            },
            "MPI_Alltoall",
        )?;
        let displs = |c: &[c_int]| -> MpiResult<Vec<c_int>> {
            let mut v = Vec::with_capacity(n);
            let mut s = 0usize;
            for &x in c {
                v.push(int(s, "the exchange")?);
                s += x as usize;
            }
            Ok(v)
        };
        let (sd, rd) = (displs(&counts)?, displs(&theirs)?);
        let total: usize = theirs.iter().map(|&x| x as usize).sum();
        let recv = sized(recv, total);
        // SAFETY: the buffers hold the counts at the displacements computed above.
        check(
            unsafe {
                PMPI_Alltoallv(
                    send.as_ptr().cast::<c_void>(),
                    counts.as_ptr(),
                    sd.as_ptr(),
                    MPI_BYTE,
                    recv.as_mut_ptr().cast(),
                    theirs.as_ptr(),
                    rd.as_ptr(),
                    MPI_BYTE,
                    fc,
                )
            },
            "MPI_Alltoallv",
        )?;
        Ok(total)
    };
    let head_bytes: Vec<u8> = heads
        .iter()
        .flatten()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    let head_counts: Vec<usize> = heads.iter().map(|h| h.len() * 8).collect();
    let mut hdr = Vec::new();
    let hn = exchange(&head_bytes, &head_counts, &mut hdr)?;
    let r = exchange(send, &sizes, &mut recv_buf)
        .and_then(|gn| write_domain(fd, &hdr[..hn], &recv_buf[..gn]));
    BUFFERS.with(|b| *b.borrow_mut() = (send_buf, recv_buf));
    // A process's data is in the file, written by the owners of its domains, before its
    // call returns (it may read it back at once), and an owner's failure is everyone's.
    let class = r.as_ref().err().map_or(MPI_SUCCESS, |e| e.class);
    let agreed = reduce_int(class, MPI_MAX, fc)?;
    r?;
    if agreed != MPI_SUCCESS {
        return err(
            agreed,
            "another process of the file could not write its domain of this collective write",
        );
    }
    Ok(())
}

/// Writes the pieces of this process's domain: their headers (offset, length pairs) and
/// their bytes in the same order.
fn write_domain(fd: c_int, hdr: &[u8], got: &[u8]) -> MpiResult<()> {
    // The pieces of my domain: (file offset, length, where in `got`).
    let mut pieces: Vec<(u64, usize, usize)> = Vec::new();
    let mut pos = 0;
    for pair in hdr.chunks_exact(16) {
        let off = u64::from_ne_bytes(pair[..8].try_into().expect("8 bytes"));
        let len = u64::from_ne_bytes(pair[8..].try_into().expect("8 bytes")) as usize;
        pieces.push((off, len, pos));
        pos += len;
    }
    // In file order (stable: where pieces overlap, which MPI leaves open, the later sender's
    // bytes land last); each run of adjacent pieces goes out in one gathered write.
    pieces.sort_by_key(|p| p.0);
    let mut i = 0;
    while i < pieces.len() {
        let mut j = i + 1;
        while j < pieces.len() && pieces[j].0 == pieces[j - 1].0 + pieces[j - 1].1 as u64 {
            j += 1;
        }
        let iov: Vec<&[u8]> = pieces[i..j]
            .iter()
            .map(|&(_, l, f)| &got[f..f + l])
            .collect();
        write_gathered(fd, pieces[i].0, &iov)?;
        i = j;
    }
    Ok(())
}

/// Writes the slices one after another from file offset `off` (`pwritev`, in batches the
/// kernel takes).
fn write_gathered(fd: c_int, mut off: u64, parts: &[&[u8]]) -> MpiResult<()> {
    for batch in parts.chunks(1024) {
        let mut iov: Vec<libc::iovec> = batch
            .iter()
            .map(|p| libc::iovec {
                iov_base: p.as_ptr() as *mut c_void,
                iov_len: p.len(),
            })
            .collect();
        let mut left: usize = batch.iter().map(|p| p.len()).sum();
        let mut first = 0;
        while left > 0 {
            // SAFETY: the iovecs describe readable slices that outlive the call.
            let n = unsafe {
                libc::pwritev(
                    fd,
                    iov[first..].as_ptr(),
                    (iov.len() - first) as c_int,
                    off as i64,
                )
            };
            if n < 0 {
                if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return Err(crate::file::os_error("write"));
            }
            let mut n = n as usize;
            off += n as u64;
            left -= n;
            // Skip what a short write took.
            while n > 0 && first < iov.len() {
                if n >= iov[first].iov_len {
                    n -= iov[first].iov_len;
                    first += 1;
                } else {
                    // SAFETY: advancing within the same slice.
                    iov[first].iov_base = unsafe { iov[first].iov_base.cast::<u8>().add(n) }.cast();
                    iov[first].iov_len -= n;
                    n = 0;
                }
            }
        }
    }
    Ok(())
}
