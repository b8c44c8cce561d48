//! Property tests of the daemon protocol's decoders with random lines (a bounded number of
//! cases): any command name with any of the known keys and any values decodes to a message
//! or an error, never a panic; what decodes encodes to a line that decodes the same.

use super::*;
use ibdyn_pmi::wire::Framer;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }
}

const NAMES: &[&str] = &[
    "c_done",
    "c_error",
    "c_exit",
    "c_io",
    "c_run",
    "c_started",
    "c_stdin",
    "c_stdin_eof",
    "c_stop",
    "d_abort",
    "d_coll",
    "d_coll_done",
    "d_coll_fail",
    "d_exit",
    "d_exited",
    "d_get",
    "d_get_result",
    "d_gone",
    "d_io",
    "d_job",
    "d_job_done",
    "d_kill_job",
    "d_ns",
    "d_ns_result",
    "d_put",
    "d_spawn",
    "d_spawn_result",
    "d_start",
    "d_started",
    "d_status",
    "d_status_result",
    "l_adopt",
    "l_job_stdin",
    "l_kill",
    "l_kill_job",
    "l_peers",
    "l_shutdown",
    "l_signal",
    "l_spawn",
    "l_stdin",
    "l_stdin_eof",
    "ibdyn_auth",
    "ready",
    "x",
];

const KEYS: &[&str] = &[
    "cancelled",
    "children",
    "code",
    "count",
    "cwd",
    "data",
    "env",
    "eof",
    "exited",
    "failed",
    "fd",
    "from_seq",
    "id",
    "index",
    "job",
    "jobid",
    "key",
    "kind",
    "kvs",
    "map_by",
    "msg",
    "node",
    "node_uid",
    "nodes",
    "op",
    "origin",
    "owner",
    "parent",
    "parent_port",
    "port",
    "rank",
    "req",
    "results",
    "role",
    "secret",
    "seq",
    "service",
    "signal",
    "signum",
    "size",
    "status",
    "stdin",
    "vals",
    "value",
    "values",
    "wait_ms",
    "why",
];

const VALUES: &[&str] = &[
    "0",
    "1",
    "2",
    "-1",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "99999999999999999999",
    "",
    "zz",
    "ab",
    "abc",
    "00",
    "0,1,2",
    ",",
    "1,",
    "slot",
    "node",
    "fence",
    "allgather",
    "publish",
    "daemon",
    "launcher",
    "6d636d643d737061776e0a",
    "none",
    "ok",
];

fn random_value(rng: &mut Rng) -> String {
    match rng.below(4) {
        0 => {
            let n = rng.below(40);
            (0..n)
                .map(|_| b"0123456789abcdef,:;-x"[rng.below(21)] as char)
                .collect()
        }
        1 => {
            // A real spawn request, sometimes cut short.
            let req = tests::request();
            let w = req.as_wire();
            w[..rng.below(w.len() + 1)].to_string()
        }
        _ => rng.pick(VALUES).to_string(),
    }
}

fn check(cmd: &Command, seed: u64) {
    macro_rules! round_trip {
        ($t:ty) => {
            if let Ok(m) = <$t>::decode(cmd) {
                let again = <$t>::decode(&m.encode());
                assert_eq!(again.ok(), Some(m), "seed {seed}: {cmd:?}");
            }
        };
    }
    round_trip!(ToDaemon);
    round_trip!(Report);
    round_trip!(Up);
    round_trip!(Down);
    round_trip!(ToDvm);
    round_trip!(FromDvm);
    let _ = Hello::decode(cmd);
}

#[test]
fn decoders_take_any_line() {
    for seed in 1..=20_000u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let mut cmd = Command::new(rng.pick(NAMES));
        for _ in 0..rng.below(8) {
            let key = rng.pick(KEYS);
            cmd = cmd.arg(key, random_value(&mut rng));
        }
        check(&cmd, seed);
        // The same through the framer, as the bytes of a link arrive.
        let mut f = Framer::default();
        for frame in f.push(cmd.to_line().as_bytes()) {
            if let ibdyn_pmi::wire::Frame::Line(c) = frame {
                check(&c, seed);
            }
        }
    }
}
