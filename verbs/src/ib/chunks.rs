//! Messages over RC are cut into pieces that each fit one shared-receive buffer: a flag byte
//! (1 on the last piece, 0 before) and up to `piece_len - 1` bytes of the message. RC delivers in
//! order, so the receiver appends pieces until a last one (pure, tested without a device).

/// The pieces of `message` for receive buffers of `piece_len` bytes (`piece_len >= 2`). An empty
/// message is one piece holding only the flag.
pub(crate) fn split(message: &[u8], piece_len: usize) -> Vec<Vec<u8>> {
    debug_assert!(
        piece_len >= 2,
        "a piece holds the flag and at least one byte"
    );
    if message.is_empty() {
        return vec![vec![1]];
    }
    let mut parts = message.chunks(piece_len - 1).peekable();
    let mut out = Vec::with_capacity(message.len().div_ceil(piece_len - 1));
    while let Some(part) = parts.next() {
        let mut piece = Vec::with_capacity(part.len() + 1);
        piece.push(parts.peek().is_none() as u8);
        piece.extend_from_slice(part);
        out.push(piece);
    }
    out
}

/// The message being received on one queue pair.
#[derive(Debug, Default)]
pub(crate) struct Reassembly {
    partial: Vec<u8>,
}

impl Reassembly {
    /// Adds one received piece; returns the whole message when it was the last one. An empty
    /// piece (no flag) carries nothing and is ignored.
    pub(crate) fn push(&mut self, piece: &[u8]) -> Option<Vec<u8>> {
        let (&flag, body) = piece.split_first()?;
        self.partial.extend_from_slice(body);
        (flag == 1).then(|| std::mem::take(&mut self.partial))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
    }

    #[test]
    fn pieces_hold_piece_len_minus_one_bytes_and_flag_only_the_last() {
        for (len, pieces) in [(1, 1), (7, 1), (8, 2), (14, 2), (15, 3), (100, 15)] {
            let p = split(&message(len), 8);
            assert_eq!(p.len(), pieces, "message of {len} bytes");
            assert!(p.iter().all(|x| x.len() <= 8 && x.len() >= 2));
            let flags: Vec<u8> = p.iter().map(|x| x[0]).collect();
            let mut want = vec![0; pieces - 1];
            want.push(1);
            assert_eq!(flags, want, "message of {len} bytes");
        }
        // A message exactly filling its pieces has no empty tail piece.
        let p = split(&message(14), 8);
        assert_eq!(p[1].len(), 8);
    }

    #[test]
    fn an_empty_message_is_one_flag_byte() {
        assert_eq!(split(&[], 8), vec![vec![1]]);
        let mut r = Reassembly::default();
        assert_eq!(r.push(&[1]), Some(Vec::new()));
    }

    #[test]
    fn reassembly_gives_back_each_message_in_order() {
        let msgs = [message(8191), message(0), message(20_000), message(8192)];
        let mut r = Reassembly::default();
        let mut got = Vec::new();
        for m in &msgs {
            for piece in split(m, super::super::CHUNK) {
                assert!(piece.len() <= super::super::CHUNK);
                got.extend(r.push(&piece));
            }
        }
        assert_eq!(got, msgs.to_vec());
    }

    #[test]
    fn pieces_of_one_message_complete_only_at_the_last() {
        let m = message(30);
        let pieces = split(&m, 8);
        let mut r = Reassembly::default();
        for p in &pieces[..pieces.len() - 1] {
            assert_eq!(r.push(p), None);
        }
        assert_eq!(r.push(&[]), None, "an empty piece changes nothing");
        assert_eq!(r.push(pieces.last().unwrap()), Some(m));
    }
}
