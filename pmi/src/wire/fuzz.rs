//! Property tests of the PMI-1 wire parser with random input (a bounded number of cases, so
//! CI runs them in about a second): whatever a client sends, the framer, the line parser and
//! the spawn-block parser return values or errors, never panic, and hold at most a bounded
//! amount of memory.

use super::*;

/// xorshift64*: reproducible cases without a dependency (the seed is in the failure message).
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn bytes(&mut self, max: usize) -> Vec<u8> {
        let n = self.below(max + 1);
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// Pieces of real PMI-1 traffic, so that random input reaches past the first check.
const TOKENS: &[&str] = &[
    "cmd=",
    "mcmd=spawn\n",
    "endcmd\n",
    "\n",
    " ",
    "=",
    "put",
    "get",
    "init",
    "kvsname=",
    "key=",
    "value=",
    "nprocs=",
    "execname=",
    "totspawns=",
    "spawnssofar=",
    "argcnt=",
    "arg1=",
    "arg2=",
    "preput_num=",
    "preput_key_0=",
    "preput_val_0=",
    "info_num=",
    "info_key_0=",
    "info_val_0=",
    "0",
    "1",
    "2",
    "4294967295",
    "18446744073709551616",
    "-1",
    "99999999999",
    "\r",
    "\u{ff}",
    "\0",
    "x",
];

fn random_text(rng: &mut Rng, pieces: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..rng.below(pieces) {
        if rng.below(4) == 0 {
            out.extend(rng.bytes(8));
        } else {
            out.extend_from_slice(TOKENS[rng.below(TOKENS.len())].as_bytes());
        }
    }
    out
}

#[test]
fn the_framer_and_parsers_take_any_bytes() {
    for seed in 1..=3000u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let mut f = Framer::default();
        for _ in 0..8 {
            let chunk = random_text(&mut rng, 40);
            for frame in f.push(&chunk) {
                match frame {
                    Frame::Line(c) => {
                        let _ = c.num::<u32>("nprocs");
                        let _ = Command::parse(&c.to_line());
                    }
                    Frame::Spawn(block) => {
                        if let Ok(b) = parse_spawn_block(&block) {
                            assert!(b.command.nprocs <= MAX_SPAWN_PROCS, "seed {seed}");
                            assert!(b.command.args.len() <= block.args.len(), "seed {seed}");
                        }
                    }
                    Frame::Bad(_) => {}
                }
            }
            assert!(
                f.buf.len() <= MAX_LINE,
                "seed {seed}: framer holds {}",
                f.buf.len()
            );
            assert!(f.block_bytes <= MAX_LINE + 64, "seed {seed}");
        }
        let text = String::from_utf8_lossy(&random_text(&mut rng, 20)).into_owned();
        let _ = Command::parse(&text);
        let _ = hex_decode(&text);
        let _ = decode_array(&text, rng.below(5));
    }
}

#[test]
fn spawn_blocks_with_huge_counts_are_errors_not_allocations() {
    let block = |pairs: &[(&str, &str)]| Command {
        name: "spawn".into(),
        args: pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    };
    let base = [
        ("nprocs", "1"),
        ("execname", "/bin/true"),
        ("totspawns", "1"),
        ("spawnssofar", "1"),
    ];
    for extra in [
        ("argcnt", "18446744073709551615"),
        ("argcnt", "1000000000"),
        ("preput_num", "18446744073709551615"),
        ("info_num", "1000000000000"),
    ] {
        let mut p = base.to_vec();
        p.push(extra);
        assert!(parse_spawn_block(&block(&p)).is_err(), "{extra:?}");
    }
    for (k, v) in [
        ("nprocs", "4294967295"),
        ("totspawns", "4000000000"),
        ("spawnssofar", "0"),
        ("spawnssofar", "2"),
    ] {
        let p: Vec<(&str, &str)> = base
            .iter()
            .map(|&(bk, bv)| if bk == k { (k, v) } else { (bk, bv) })
            .collect();
        assert!(parse_spawn_block(&block(&p)).is_err(), "{k}={v}");
    }
    assert!(parse_spawn_block(&block(&base)).is_ok());
}

#[test]
fn an_endless_spawn_block_is_cut_off() {
    let mut f = Framer::default();
    assert!(f.push(b"mcmd=spawn\n").is_empty());
    let line = format!("k={}\n", "v".repeat(1 << 16));
    let mut bad = 0;
    for _ in 0..(MAX_LINE / line.len() + 2) {
        bad += f
            .push(line.as_bytes())
            .iter()
            .filter(|fr| matches!(fr, Frame::Bad(_)))
            .count();
    }
    // The block is dropped once too long (its later lines are errors of their own).
    assert!(bad >= 1 && f.block.is_none() && f.block_bytes <= MAX_LINE + line.len());
    // What follows is read as usual again.
    assert_eq!(
        f.push(b"cmd=finalize\n"),
        vec![Frame::Line(Command::new("finalize"))]
    );
}
