//! A collective as data: rounds of sends and receives over regions of three buffers, each
//! followed by local copies and reductions. Algorithms only build schedules; `exec` runs them.

use crate::error::{CollError, Result};

/// Which buffer a region lies in.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Buf {
    /// The caller's input (read only).
    Send,
    /// The caller's output.
    Recv,
    /// Working space owned by the running schedule.
    Scratch,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Region {
    pub buf: Buf,
    pub off: usize,
    pub len: usize,
}

impl Region {
    pub fn send(off: usize, len: usize) -> Region {
        Region {
            buf: Buf::Send,
            off,
            len,
        }
    }
    pub fn recv(off: usize, len: usize) -> Region {
        Region {
            buf: Buf::Recv,
            off,
            len,
        }
    }
    pub fn empty() -> Region {
        Region {
            buf: Buf::Scratch,
            off: 0,
            len: 0,
        }
    }
    /// The part `[off, off + len)` of this region.
    pub fn sub(self, off: usize, len: usize) -> Region {
        debug_assert!(off + len <= self.len, "sub-region out of its region");
        Region {
            buf: self.buf,
            off: self.off + off,
            len,
        }
    }
}

/// A local step, run once every transfer of its round has completed.
#[derive(Copy, Clone, Debug)]
pub(crate) enum Local {
    Copy {
        src: Region,
        dst: Region,
    },
    /// `dst = src ∘ dst` when `src_first`, else `dst = dst ∘ src`.
    Reduce {
        src: Region,
        dst: Region,
        src_first: bool,
    },
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Round {
    /// (peer, region): peers are team ranks while building, communicator ranks once mapped.
    pub sends: Vec<(usize, Region)>,
    pub recvs: Vec<(usize, Region)>,
    pub local: Vec<Local>,
}

impl Round {
    pub fn send(&mut self, peer: usize, r: Region) -> &mut Self {
        self.sends.push((peer, r));
        self
    }
    pub fn recv(&mut self, peer: usize, r: Region) -> &mut Self {
        self.recvs.push((peer, r));
        self
    }
    pub fn copy(&mut self, src: Region, dst: Region) -> &mut Self {
        self.local.push(Local::Copy { src, dst });
        self
    }
    pub fn reduce(&mut self, src: Region, dst: Region, src_first: bool) -> &mut Self {
        self.local.push(Local::Reduce {
            src,
            dst,
            src_first,
        });
        self
    }
}

/// A built schedule.
#[derive(Clone, Debug, Default)]
pub(crate) struct Schedule {
    pub rounds: Vec<Round>,
    pub scratch_len: usize,
}

impl Schedule {
    pub fn new() -> Schedule {
        Schedule::default()
    }

    /// Reserves `len` bytes of scratch space.
    pub fn scratch(&mut self, len: usize) -> Region {
        let r = Region {
            buf: Buf::Scratch,
            off: self.scratch_len,
            len,
        };
        self.scratch_len += len;
        r
    }

    /// Starts a new round.
    pub fn round(&mut self) -> &mut Round {
        self.rounds.push(Round::default());
        self.rounds.last_mut().expect("just pushed")
    }

    /// A round of local steps only.
    pub fn local(&mut self) -> &mut Round {
        self.round()
    }

    /// Turns team ranks into communicator ranks.
    pub fn map_peers(&mut self, f: impl Fn(usize) -> usize) {
        for r in &mut self.rounds {
            for (p, _) in r.sends.iter_mut().chain(r.recvs.iter_mut()) {
                *p = f(*p);
            }
        }
        self.rounds
            .retain(|r| !(r.sends.is_empty() && r.recvs.is_empty() && r.local.is_empty()));
    }

    /// Appends `other` after this schedule's rounds, moving its scratch regions past this
    /// one's. With `map_peers` applied to each part first, this composes algorithms that run
    /// over different teams (node-local, then leaders, then node-local again) into one
    /// collective: the seam for two-level forms.
    pub fn append(&mut self, mut other: Schedule) {
        let shift = self.scratch_len;
        let fix = |r: &mut Region| {
            if r.buf == Buf::Scratch {
                r.off += shift;
            }
        };
        for round in &mut other.rounds {
            round
                .sends
                .iter_mut()
                .chain(round.recvs.iter_mut())
                .for_each(|(_, r)| fix(r));
            for l in &mut round.local {
                match l {
                    Local::Copy { src, dst } | Local::Reduce { src, dst, .. } => {
                        fix(src);
                        fix(dst);
                    }
                }
            }
        }
        self.scratch_len += other.scratch_len;
        self.rounds.append(&mut other.rounds);
    }

    /// Checks what makes running the schedule memory-safe: every region inside its buffer,
    /// the send buffer never written, and no region written while another use of it may be
    /// in flight (receives of a round against each other and against its sends; the two
    /// sides of each local step).
    pub fn validate(&self, send_len: usize, recv_len: usize) -> Result<()> {
        let cap = |b: Buf| match b {
            Buf::Send => send_len,
            Buf::Recv => recv_len,
            Buf::Scratch => self.scratch_len,
        };
        let bad = |what: String| Err(CollError::Schedule(what));
        let in_bounds = |r: &Region| r.off.checked_add(r.len).is_some_and(|e| e <= cap(r.buf));
        for (i, round) in self.rounds.iter().enumerate() {
            let mut uses: Vec<(Region, bool)> =
                Vec::with_capacity(round.sends.len() + round.recvs.len());
            uses.extend(round.sends.iter().map(|&(_, r)| (r, false)));
            uses.extend(round.recvs.iter().map(|&(_, r)| (r, true)));
            for (r, w) in &uses {
                if !in_bounds(r) || (*w && r.buf == Buf::Send) {
                    return bad(format!(
                        "round {i}: region {r:?} out of bounds or writes the send buffer"
                    ));
                }
            }
            if let Some((a, b)) = conflict(&mut uses) {
                return bad(format!("round {i}: {a:?} and {b:?} overlap with a write"));
            }
            for l in &round.local {
                let (src, dst) = match *l {
                    Local::Copy { src, dst } => (src, dst),
                    Local::Reduce { src, dst, .. } => (src, dst),
                };
                if !in_bounds(&src)
                    || !in_bounds(&dst)
                    || dst.buf == Buf::Send
                    || src.len != dst.len
                {
                    return bad(format!(
                        "round {i}: local step {l:?} out of bounds or mis-sized"
                    ));
                }
                if let Some((a, b)) = conflict(&mut [(src, false), (dst, true)]) {
                    return bad(format!(
                        "round {i}: local step regions {a:?} and {b:?} overlap"
                    ));
                }
            }
        }
        Ok(())
    }

    /// True when the schedule writes every byte of scratch it reads before reading it, so
    /// the scratch need not start zeroed. In a round, sends read before its receives
    /// write; then the local steps run in order (a reduction reads its destination too).
    pub fn writes_scratch_first(&self) -> bool {
        let mut written = Written::default();
        let ok = |w: &Written, r: &Region| r.buf != Buf::Scratch || w.covers(r);
        for round in &self.rounds {
            if !round.sends.iter().all(|(_, r)| ok(&written, r)) {
                return false;
            }
            for (_, r) in &round.recvs {
                written.add(r);
            }
            for l in &round.local {
                match *l {
                    Local::Copy { src, dst } => {
                        if !ok(&written, &src) {
                            return false;
                        }
                        written.add(&dst);
                    }
                    Local::Reduce { src, dst, .. } => {
                        if !ok(&written, &src) || !ok(&written, &dst) {
                            return false;
                        }
                    }
                }
            }
        }
        true
    }
}

/// The parts of scratch written so far: sorted, disjoint, non-adjacent [start, end) spans.
#[derive(Default)]
struct Written(Vec<(usize, usize)>);

impl Written {
    fn add(&mut self, r: &Region) {
        if r.buf != Buf::Scratch || r.len == 0 {
            return;
        }
        let (mut s, mut e) = (r.off, r.off + r.len);
        // Merge every span that touches [s, e).
        self.0.retain(|&(a, b)| {
            if b < s || a > e {
                return true;
            }
            s = s.min(a);
            e = e.max(b);
            false
        });
        let at = self.0.partition_point(|&(a, _)| a < s);
        self.0.insert(at, (s, e));
    }

    fn covers(&self, r: &Region) -> bool {
        if r.len == 0 {
            return true;
        }
        let at = self.0.partition_point(|&(a, _)| a <= r.off);
        at > 0 && self.0[at - 1].1 >= r.off + r.len
    }
}

/// Two regions that overlap where at least one of them is written, if any.
fn conflict(uses: &mut [(Region, bool)]) -> Option<(Region, Region)> {
    uses.sort_by_key(|(r, _)| (r.buf, r.off));
    // Per buffer: the furthest end among all earlier regions, and among earlier written ones.
    let mut cur: Option<Buf> = None;
    let (mut end_any, mut end_w) = (None::<(usize, Region)>, None::<(usize, Region)>);
    for &(r, w) in uses.iter() {
        if r.len == 0 {
            continue;
        }
        if cur != Some(r.buf) {
            cur = Some(r.buf);
            end_any = None;
            end_w = None;
        }
        let against = if w { end_any } else { end_w };
        if let Some((e, other)) = against {
            if r.off < e {
                return Some((other, r));
            }
        }
        let end = r.off + r.len;
        if end_any.is_none_or(|(e, _)| end > e) {
            end_any = Some((end, r));
        }
        if w && end_w.is_none_or(|(e, _)| end > e) {
            end_w = Some((end, r));
        }
    }
    None
}

/// Splits `n` elements into `parts` near-equal consecutive blocks; returns element counts.
pub(crate) fn split_even(n: usize, parts: usize) -> Vec<usize> {
    let (q, r) = (n / parts, n % parts);
    (0..parts).map(|i| q + usize::from(i < r)).collect()
}

/// Offsets (prefix sums) of `counts`, with the total as the last entry.
pub(crate) fn offsets(counts: &[usize]) -> Vec<usize> {
    let mut out = Vec::with_capacity(counts.len() + 1);
    let mut acc = 0;
    out.push(0);
    for c in counts {
        acc += c;
        out.push(acc);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_read_before_it_is_written_needs_zeroing() {
        let mut s = Schedule::new();
        let t = s.scratch(16);
        s.round().recv(1, t.sub(0, 8)).recv(2, t.sub(8, 8));
        s.round().send(3, t);
        s.local().reduce(t.sub(0, 8), Region::recv(0, 8), true);
        assert!(
            s.writes_scratch_first(),
            "received in two halves, then read"
        );

        let mut s = Schedule::new();
        let t = s.scratch(16);
        s.round().send(1, t.sub(0, 8)).recv(1, t.sub(8, 8));
        assert!(!s.writes_scratch_first(), "sent before anything wrote it");

        let mut s = Schedule::new();
        let t = s.scratch(8);
        s.round().recv(1, Region::recv(0, 8));
        s.local().reduce(Region::recv(0, 8), t, true);
        assert!(
            !s.writes_scratch_first(),
            "a reduction reads its destination"
        );

        let mut s = Schedule::new();
        let t = s.scratch(8);
        s.local().copy(Region::send(0, 8), t);
        s.local().reduce(Region::send(0, 8), t, true);
        s.round().recv(1, t.sub(0, 4));
        s.round().send(1, t.sub(2, 6));
        assert!(s.writes_scratch_first(), "copied in, then reduced and sent");

        let mut s = Schedule::new();
        let t = s.scratch(12);
        s.round().recv(1, t.sub(0, 4)).recv(2, t.sub(8, 4));
        s.round().send(1, t.sub(2, 8));
        assert!(!s.writes_scratch_first(), "a gap in the middle");
    }

    #[test]
    fn overlap_detection() {
        let mut s = Schedule::new();
        let t = s.scratch(16);
        s.round().send(1, t.sub(0, 8)).send(2, t.sub(4, 8));
        assert!(s.validate(0, 0).is_ok(), "two reads may overlap");
        s.round().send(1, t.sub(0, 8)).recv(2, t.sub(7, 2));
        assert!(s.validate(0, 0).is_err());
        let mut s = Schedule::new();
        s.round()
            .recv(1, Region::recv(0, 4))
            .recv(2, Region::recv(4, 4));
        assert!(s.validate(0, 8).is_ok());
        assert!(s.validate(0, 7).is_err(), "out of bounds");
        let mut s = Schedule::new();
        s.round().recv(1, Region::send(0, 4));
        assert!(s.validate(4, 0).is_err(), "send buffer is read only");
    }

    #[test]
    fn append_relocates_scratch() {
        let mut a = Schedule::new();
        let t = a.scratch(8);
        a.round().send(1, t);
        let mut b = Schedule::new();
        let u = b.scratch(4);
        b.round().recv(2, u).copy(u, Region::recv(0, 4));
        a.append(b);
        assert_eq!(a.scratch_len, 12);
        assert_eq!(
            a.rounds[1].recvs[0].1,
            Region {
                buf: Buf::Scratch,
                off: 8,
                len: 4
            }
        );
        assert!(matches!(a.rounds[1].local[0], Local::Copy { src, .. } if src.off == 8));
        assert!(a.validate(0, 4).is_ok());
    }
}
