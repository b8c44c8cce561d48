//! The v-forms of the data movers on intercommunicators (Gatherv, Scatterv, Allgatherv,
//! Alltoallv), built from point-to-point on the intercommunicator itself with a tag above
//! MPI_TAG_UB (users cannot send with it): every block goes straight from its sender to its
//! receiver, and collectives on one communicator are ordered, so they never cross.

use crate::error::MpiResult;
use ibdyn_intercomm::Communicator as Raw;

/// The tag of these messages, reserved: MPI_TAG_UB is one below it.
pub const TAG: i32 = i32::MAX;

/// Sends `blocks` (remote rank, bytes) and receives `into` (remote rank, buffer), all at once.
/// Empty blocks neither go nor are waited for (MPI: both sides agree on every block's size),
/// so no empty message is left behind for a later collective to match.
pub fn exchange(c: &Raw, blocks: &[(i32, &[u8])], into: Vec<(i32, &mut [u8])>) -> MpiResult<()> {
    let mut reqs = Vec::with_capacity(blocks.len() + into.len());
    for (r, b) in into.into_iter().filter(|(_, b)| !b.is_empty()) {
        reqs.push(c.irecv(b, r, TAG)?);
    }
    for &(r, b) in blocks.iter().filter(|(_, b)| !b.is_empty()) {
        reqs.push(c.isend(b, r, TAG)?);
    }
    let mut first = None;
    for q in reqs {
        if let Err(e) = q.wait() {
            first.get_or_insert(e);
        }
    }
    match first {
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}

/// The non-empty blocks (`counts[i]` bytes at `displs[i]` of a `len`-byte buffer) as
/// (remote rank, offset, length), in buffer order; overlapping receive blocks are an error
/// (MPI forbids them).
pub fn spans(
    counts: &[usize],
    displs: &[usize],
    len: usize,
) -> MpiResult<Vec<(usize, usize, usize)>> {
    let mut order: Vec<usize> = (0..counts.len()).filter(|&i| counts[i] > 0).collect();
    order.sort_by_key(|&i| displs[i]);
    let mut at = 0;
    let mut out = Vec::with_capacity(order.len());
    for i in order {
        if displs[i] < at || displs[i] + counts[i] > len {
            return crate::error::err(
                crate::consts::MPI_ERR_ARG,
                "receive blocks overlap or lie outside the buffer",
            );
        }
        out.push((i, displs[i], counts[i]));
        at = displs[i] + counts[i];
    }
    Ok(out)
}

/// The blocks of `buf` (see `spans`) as disjoint slices tagged with their remote rank.
pub fn carve<'a>(
    buf: &'a mut [u8],
    counts: &[usize],
    displs: &[usize],
) -> MpiResult<Vec<(i32, &'a mut [u8])>> {
    let spans = spans(counts, displs, buf.len())?;
    let mut out = Vec::with_capacity(spans.len());
    let mut rest = buf;
    let mut at = 0;
    for (i, off, len) in spans {
        let (_, tail) = std::mem::take(&mut rest).split_at_mut(off - at);
        let (block, tail) = tail.split_at_mut(len);
        out.push((i as i32, block));
        rest = tail;
        at = off + len;
    }
    Ok(out)
}
