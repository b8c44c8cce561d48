//! The PMI-1 wire format ("simple PMI"): one command per line, `cmd=NAME key=value ...\n`,
//! plus the multi-line `mcmd=spawn` block ending with `endcmd`. Values carry no spaces or
//! newlines; arbitrary bytes travel hex-encoded.

use crate::error::{PmiError, Result};
use std::fmt::Display;

/// Longest line a server or client accepts (ibdyn's own commands carry whole allgathers).
pub const MAX_LINE: usize = 16 << 20;
/// Most processes one spawn request may ask for (all its commands together): a bound on
/// what an untrusted request makes a daemon allocate.
pub const MAX_SPAWN_PROCS: u32 = 1 << 20;
/// Most commands in one spawn request (`totspawns`).
pub const MAX_SPAWN_COMMANDS: u32 = 4096;

/// One parsed line: the command name (value of `cmd=`) and its arguments in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    pub name: String,
    pub args: Vec<(String, String)>,
}

impl Command {
    pub fn new(name: &str) -> Command {
        Command {
            name: name.to_string(),
            args: Vec::new(),
        }
    }

    /// Appends `key=value`; the caller guarantees the value is a valid token.
    pub fn arg(mut self, key: &str, value: impl Display) -> Command {
        self.args.push((key.to_string(), value.to_string()));
        self
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.args
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    pub fn require(&self, key: &str) -> Result<&str> {
        self.get(key).ok_or_else(|| PmiError::Malformed {
            line: self.to_line().trim_end().to_string(),
            why: format!("missing {key}="),
        })
    }

    pub fn num<T: std::str::FromStr>(&self, key: &str) -> Result<T> {
        let v = self.require(key)?;
        v.parse().map_err(|_| PmiError::Malformed {
            line: self.to_line().trim_end().to_string(),
            why: format!("{key}={v} is not a number"),
        })
    }

    /// `rc=` of a reply, 0 when absent (hydra's barrier_out carries none).
    pub fn rc(&self) -> i64 {
        self.get("rc").and_then(|v| v.parse().ok()).unwrap_or(0)
    }

    /// Parses one line (without or with its trailing newline).
    pub fn parse(line: &str) -> Result<Command> {
        let text = line.trim_end_matches(['\n', '\r']);
        let bad = |why: &str| PmiError::Malformed {
            line: text.to_string(),
            why: why.to_string(),
        };
        let mut tokens = text.split(' ').filter(|t| !t.is_empty());
        let first = tokens.next().ok_or_else(|| bad("empty line"))?;
        let name = first
            .strip_prefix("cmd=")
            .ok_or_else(|| bad("does not start with cmd="))?;
        if name.is_empty() {
            return Err(bad("empty command name"));
        }
        let mut cmd = Command::new(name);
        for t in tokens {
            let (k, v) = t
                .split_once('=')
                .ok_or_else(|| bad(&format!("token {t:?} has no '='")))?;
            if k.is_empty() {
                return Err(bad(&format!("token {t:?} has an empty key")));
            }
            cmd.args.push((k.to_string(), v.to_string()));
        }
        Ok(cmd)
    }

    /// The wire form, newline included.
    pub fn to_line(&self) -> String {
        let mut s = format!("cmd={}", self.name);
        for (k, v) in &self.args {
            s.push(' ');
            s.push_str(k);
            s.push('=');
            s.push_str(v);
        }
        s.push('\n');
        s
    }
}

/// Checks a key (or kvsname, service name): non-empty, no whitespace, no '='.
pub fn check_key(what: &str, key: &str) -> Result<()> {
    if key.is_empty() {
        return Err(PmiError::invalid(what, key, "is empty"));
    }
    if key
        .chars()
        .any(|c| c.is_whitespace() || c == '=' || c.is_control())
    {
        return Err(PmiError::invalid(
            what,
            key,
            "contains whitespace, '=' or a control character",
        ));
    }
    Ok(())
}

/// Checks a value: no whitespace or control characters ('=' is fine after the first).
pub fn check_value(what: &str, value: &str) -> Result<()> {
    if value.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(PmiError::invalid(
            what,
            value,
            "contains whitespace or a control character",
        ));
    }
    Ok(())
}

/// Turns free text into one token (for `msg=` fields): whitespace becomes '_'.
pub fn msg_token(text: &str) -> String {
    let s: String = text
        .chars()
        .map(|c| {
            if c.is_whitespace() || c.is_control() || c == '=' {
                '_'
            } else {
                c
            }
        })
        .collect();
    if s.is_empty() {
        "none".into()
    } else {
        s
    }
}

/// Reverses `msg_token` well enough for an error message.
pub fn msg_text(token: &str) -> String {
    token.replace('_', " ")
}

pub fn hex_encode(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

pub fn hex_decode(text: &str) -> Result<Vec<u8>> {
    let bad = |why: &str| PmiError::invalid("hex value", text, why);
    if text.len() & 1 == 1 {
        return Err(bad("odd number of digits"));
    }
    let digit = |c: u8| match c {
        b'0'..=b'9' => Ok(c - b'0'),
        b'a'..=b'f' => Ok(c - b'a' + 10),
        b'A'..=b'F' => Ok(c - b'A' + 10),
        _ => Err(bad("not a hex digit")),
    };
    text.as_bytes()
        .chunks(2)
        .map(|p| Ok(digit(p[0])? << 4 | digit(p[1])?))
        .collect()
}

/// Encodes a rank-ordered array of byte strings as one token: hex items joined by ','.
pub fn encode_array(values: &[Vec<u8>]) -> String {
    let items: Vec<String> = values.iter().map(|v| hex_encode(v)).collect();
    items.join(",")
}

/// Decodes `encode_array`; `n` is the expected number of items.
pub fn decode_array(text: &str, n: usize) -> Result<Vec<Vec<u8>>> {
    let items: Vec<Vec<u8>> = if n == 0 {
        Vec::new()
    } else {
        text.split(',').map(hex_decode).collect::<Result<_>>()?
    };
    if items.len() != n {
        return Err(PmiError::invalid(
            "array",
            text,
            &format!("has {} items, expected {n}", items.len()),
        ));
    }
    Ok(items)
}

/// One command of a (possibly multi-command) spawn request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpawnCommand {
    pub program: String,
    pub args: Vec<String>,
    pub nprocs: u32,
    pub info: Vec<(String, String)>,
}

/// The info key of a spawn's working directory: `wdir`, or `wdir_hex` (the path's bytes in
/// hex) for a path that does not fit a PMI value (one with a space).
pub fn wdir_info(dir: &str) -> (String, String) {
    match check_value("wdir", dir) {
        Ok(()) => ("wdir".into(), dir.into()),
        Err(_) => ("wdir_hex".into(), hex_encode(dir.as_bytes())),
    }
}

/// The info key of one variable of a spawn's environment: `env` = `NAME=VALUE`, or
/// `env_hex` = `NAME=<VALUE in hex>` for a value that does not fit a PMI value.
pub fn env_info(name: &str, value: &str) -> (String, String) {
    match check_value("env", value) {
        Ok(()) => ("env".into(), format!("{name}={value}")),
        Err(_) => (
            "env_hex".into(),
            format!("{name}={}", hex_encode(value.as_bytes())),
        ),
    }
}

/// A whole spawn request as the server assembles it from `totspawns` blocks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpawnRequest {
    pub commands: Vec<SpawnCommand>,
    pub preput: Vec<(String, String)>,
}

/// The info key that carries a command's arguments when a line cannot: all of them, as
/// `encode_array` of their bytes (a multi-line `python3 -c` script). ibdyn's own; MPICH's
/// clients, which cannot send such arguments at all, never use it.
const ARGS_HEX: &str = "args_hex";

/// Whether `text` survives as the value of one line of a block (the framer ends a line at
/// `\n` and drops a trailing `\r`).
fn fits_a_line(text: &str) -> bool {
    !text.contains('\n') && !text.ends_with('\r')
}

/// For a plain PMI-1 server (hydra), which knows no `args_hex`: an error naming the first
/// argument a line cannot carry.
pub fn check_plain_args(req: &SpawnRequest) -> Result<()> {
    match req
        .commands
        .iter()
        .flat_map(|c| &c.args)
        .find(|a| !fits_a_line(a))
    {
        Some(a) => Err(PmiError::invalid(
            "spawn argument",
            a,
            "contains a newline, which a plain PMI-1 server (MPICH's mpiexec) cannot carry",
        )),
        None => Ok(()),
    }
}

/// Formats the `mcmd=spawn` blocks of a request (one block per command).
pub fn format_spawn(req: &SpawnRequest) -> Result<String> {
    let mut out = String::new();
    let tot = req.commands.len();
    for (i, c) in req.commands.iter().enumerate() {
        if !fits_a_line(&c.program) {
            return Err(PmiError::invalid(
                "spawn program",
                &c.program,
                "contains a newline or ends with a carriage return",
            ));
        }
        let hex_args = !c.args.iter().all(|a| fits_a_line(a));
        let lines: &[String] = if hex_args { &[] } else { &c.args };
        out.push_str("mcmd=spawn\n");
        out.push_str(&format!("nprocs={}\nexecname={}\n", c.nprocs, c.program));
        out.push_str(&format!("totspawns={tot}\nspawnssofar={}\n", i + 1));
        out.push_str(&format!("argcnt={}\n", lines.len()));
        for (j, a) in lines.iter().enumerate() {
            out.push_str(&format!("arg{}={a}\n", j + 1));
        }
        out.push_str(&format!("preput_num={}\n", req.preput.len()));
        for (j, (k, v)) in req.preput.iter().enumerate() {
            check_key("preput key", k)?;
            check_value("preput value", v)?;
            out.push_str(&format!("preput_key_{j}={k}\npreput_val_{j}={v}\n"));
        }
        let args_hex = hex_args.then(|| {
            let bytes: Vec<Vec<u8>> = c.args.iter().map(|a| a.as_bytes().to_vec()).collect();
            (ARGS_HEX.to_string(), encode_array(&bytes))
        });
        let info: Vec<&(String, String)> = c.info.iter().chain(args_hex.as_ref()).collect();
        out.push_str(&format!("info_num={}\n", info.len()));
        for (j, (k, v)) in info.iter().enumerate() {
            check_key("info key", k)?;
            check_value("info value", v)?;
            out.push_str(&format!("info_key_{j}={k}\ninfo_val_{j}={v}\n"));
        }
        out.push_str("endcmd\n");
    }
    Ok(out)
}

/// One `mcmd=spawn` block: a command, the preputs, and `spawnssofar` of `totspawns`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpawnBlock {
    pub command: SpawnCommand,
    pub preput: Vec<(String, String)>,
    pub sofar: u32,
    pub total: u32,
}

/// Reads one `mcmd=spawn` block (as a `Command` named "spawn").
pub fn parse_spawn_block(block: &Command) -> Result<SpawnBlock> {
    let nprocs: u32 = block.num("nprocs")?;
    let program = block.require("execname")?.to_string();
    let tot: u32 = block.num("totspawns")?;
    let sofar: u32 = block.num("spawnssofar")?;
    let argcnt: usize = block.get("argcnt").map_or(Ok(0), |_| block.num("argcnt"))?;
    let bad = |why: String| PmiError::Malformed {
        line: "mcmd=spawn".into(),
        why,
    };
    if nprocs > MAX_SPAWN_PROCS {
        return Err(bad(format!(
            "nprocs={nprocs}: at most {MAX_SPAWN_PROCS} processes per spawn"
        )));
    }
    if tot > MAX_SPAWN_COMMANDS {
        return Err(bad(format!(
            "totspawns={tot}: at most {MAX_SPAWN_COMMANDS} commands per spawn"
        )));
    }
    if sofar == 0 || sofar > tot {
        return Err(bad(format!("spawnssofar={sofar} of totspawns={tot}")));
    }
    // Each argument is a line of the block: a count beyond them is a lie, not a size.
    if argcnt > block.args.len() {
        return Err(bad(format!(
            "argcnt={argcnt} but the block has {} lines",
            block.args.len()
        )));
    }
    let mut args = Vec::with_capacity(argcnt);
    for j in 1..=argcnt {
        args.push(block.require(&format!("arg{j}"))?.to_string());
    }
    let pairs = |prefix: &str, num: &str| -> Result<Vec<(String, String)>> {
        let n: usize = block.get(num).map_or(Ok(0), |_| block.num(num))?;
        (0..n)
            .map(|j| {
                let k = block.require(&format!("{prefix}_key_{j}"))?.to_string();
                let v = block.require(&format!("{prefix}_val_{j}"))?.to_string();
                Ok((k, v))
            })
            .collect()
    };
    let preput = pairs("preput", "preput_num")?;
    let mut info = pairs("info", "info_num")?;
    if let Some(at) = info.iter().position(|(k, _)| k == ARGS_HEX) {
        let (_, hex) = info.remove(at);
        if argcnt != 0 {
            return Err(bad(format!("argcnt={argcnt} beside {ARGS_HEX}")));
        }
        args = decode_array(&hex, hex.split(',').count())?
            .into_iter()
            .map(|a| String::from_utf8(a).map_err(|_| bad(format!("{ARGS_HEX}: not UTF-8"))))
            .collect::<Result<_>>()?;
    }
    Ok(SpawnBlock {
        command: SpawnCommand {
            program,
            args,
            nprocs,
            info,
        },
        preput,
        sofar,
        total: tot,
    })
}

/// What a server reads from a byte stream.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    Line(Command),
    /// A complete `mcmd=spawn ... endcmd` block, as a command named "spawn".
    Spawn(Command),
    /// A line that could not be parsed; the text says why.
    Bad(String),
}

/// Splits a byte stream into frames; keeps the partial tail between calls.
#[derive(Default)]
pub struct Framer {
    buf: Vec<u8>,
    block: Option<Vec<(String, String)>>,
    /// Bytes of the lines of the open block (bounded like one line).
    block_bytes: usize,
    discarding: bool,
}

impl Framer {
    pub fn push(&mut self, bytes: &[u8]) -> Vec<Frame> {
        let mut frames = Vec::new();
        self.buf.extend_from_slice(bytes);
        while let Some(pos) = self.buf.iter().position(|&b| b == b'\n') {
            let raw: Vec<u8> = self.buf.drain(..=pos).collect();
            if self.discarding {
                self.discarding = false;
                continue;
            }
            match std::str::from_utf8(&raw[..raw.len() - 1]) {
                Ok(text) => {
                    if let Some(f) = self.line(text.trim_end_matches('\r')) {
                        frames.push(f);
                    }
                }
                Err(_) => frames.push(Frame::Bad("line is not UTF-8".into())),
            }
        }
        if self.buf.len() > MAX_LINE {
            self.buf.clear();
            self.discarding = true;
            frames.push(Frame::Bad(format!("line longer than {MAX_LINE} bytes")));
        }
        frames
    }

    fn line(&mut self, text: &str) -> Option<Frame> {
        if let Some(block) = &mut self.block {
            if text == "endcmd" {
                let args = self.block.take().unwrap_or_default();
                return Some(Frame::Spawn(Command {
                    name: "spawn".into(),
                    args,
                }));
            }
            self.block_bytes += text.len() + 1;
            if self.block_bytes > MAX_LINE {
                self.block = None;
                return Some(Frame::Bad(format!(
                    "mcmd=spawn block longer than {MAX_LINE} bytes"
                )));
            }
            return match text.split_once('=') {
                Some((k, v)) if !k.is_empty() => {
                    block.push((k.to_string(), v.to_string()));
                    None
                }
                _ => {
                    self.block = None;
                    Some(Frame::Bad(format!(
                        "line {text:?} inside mcmd=spawn has no key=value"
                    )))
                }
            };
        }
        if let Some(rest) = text.strip_prefix("mcmd=") {
            if rest.trim() == "spawn" {
                self.block = Some(Vec::new());
                self.block_bytes = 0;
                return None;
            }
            return Some(Frame::Bad(format!("unknown multi-line command {rest:?}")));
        }
        if text.trim().is_empty() {
            return None;
        }
        Some(match Command::parse(text) {
            Ok(c) => Frame::Line(c),
            Err(e) => Frame::Bad(e.to_string()),
        })
    }
}

#[cfg(test)]
mod fuzz;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spawn_info_for_text_with_spaces_goes_in_hex() {
        assert_eq!(wdir_info("/a/b"), ("wdir".into(), "/a/b".into()));
        assert_eq!(wdir_info("/a b"), ("wdir_hex".into(), hex_encode(b"/a b")));
        assert_eq!(env_info("K", "v=1"), ("env".into(), "K=v=1".into()));
        assert_eq!(
            env_info("K", "a\tb"),
            ("env_hex".into(), format!("K={}", hex_encode(b"a\tb")))
        );
    }

    #[test]
    fn parse_and_format_round_trip() {
        let c = Command::parse("cmd=put kvsname=kvs_1 key=a value=x=y\n").unwrap();
        assert_eq!(c.name, "put");
        assert_eq!(c.get("kvsname"), Some("kvs_1"));
        assert_eq!(c.get("value"), Some("x=y"));
        assert_eq!(c.to_line(), "cmd=put kvsname=kvs_1 key=a value=x=y\n");
        let c = Command::parse("cmd=get_result  rc=-1 msg=key_x_not_found value=unknown").unwrap();
        assert_eq!(c.rc(), -1);
    }

    #[test]
    fn malformed_lines_are_errors() {
        for bad in [
            "",
            "put key=a",
            "cmd=",
            "cmd=put key",
            "cmd=put =v",
            "cmdx=put",
        ] {
            assert!(Command::parse(bad).is_err(), "{bad:?} parsed");
        }
        let e = Command::parse("cmd=x")
            .unwrap()
            .num::<u32>("n")
            .unwrap_err();
        assert!(e.to_string().contains("missing n="));
        let e = Command::parse("cmd=x n=abc")
            .unwrap()
            .num::<u32>("n")
            .unwrap_err();
        assert!(e.to_string().contains("n=abc"));
    }

    #[test]
    fn keys_and_values_are_checked() {
        assert!(check_key("key", "a b").is_err());
        assert!(check_key("key", "a=b").is_err());
        assert!(check_key("key", "").is_err());
        assert!(check_key("key", "card-3").is_ok());
        assert!(check_value("value", "x\ny").is_err());
        assert!(check_value("value", "x=y").is_ok());
        assert_eq!(msg_token("key a not found"), "key_a_not_found");
    }

    #[test]
    fn hex_is_binary_safe() {
        let all: Vec<u8> = (0..=255).collect();
        let h = hex_encode(&all);
        assert!(h.chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(hex_decode(&h).unwrap(), all);
        assert_eq!(hex_decode("").unwrap(), Vec::<u8>::new());
        assert!(hex_decode("abc").is_err());
        assert!(hex_decode("zz").is_err());
        let arr = vec![b"a b\n".to_vec(), vec![], vec![0, 255]];
        assert_eq!(decode_array(&encode_array(&arr), 3).unwrap(), arr);
        assert!(decode_array(&encode_array(&arr), 2).is_err());
        assert_eq!(decode_array("", 0).unwrap(), Vec::<Vec<u8>>::new());
        assert_eq!(decode_array("", 1).unwrap(), vec![Vec::<u8>::new()]);
    }

    #[test]
    fn framer_splits_lines_blocks_and_bad_input() {
        let mut f = Framer::default();
        assert!(f.push(b"cmd=barrier_in\ncmd=get key").len() == 1);
        let frames = f.push(b"=a\nnonsense\n\xff\n");
        assert_eq!(frames.len(), 3);
        assert!(matches!(&frames[0], Frame::Line(c) if c.get("key") == Some("a")));
        assert!(matches!(frames[1], Frame::Bad(_)));
        assert!(matches!(frames[2], Frame::Bad(_)));
        let req = SpawnRequest {
            commands: vec![
                SpawnCommand {
                    program: "/bin/w".into(),
                    args: vec!["a b".into(), "c".into()],
                    nprocs: 2,
                    info: vec![],
                },
                SpawnCommand {
                    program: "x".into(),
                    args: vec![],
                    nprocs: 1,
                    info: vec![("host".into(), "n1".into())],
                },
            ],
            preput: vec![("parent_port".into(), "p#1".into())],
        };
        let text = format_spawn(&req).unwrap();
        let frames = f.push(text.as_bytes());
        assert_eq!(frames.len(), 2);
        assert_eq!(parsed(&frames), req);
    }

    fn parsed(frames: &[Frame]) -> SpawnRequest {
        let mut got = SpawnRequest::default();
        for (i, fr) in frames.iter().enumerate() {
            let Frame::Spawn(block) = fr else {
                panic!("not a spawn block: {fr:?}")
            };
            let b = parse_spawn_block(block).unwrap();
            assert_eq!((b.sofar, b.total), (i as u32 + 1, 2));
            got.commands.push(b.command);
            got.preput = b.preput;
        }
        got
    }

    #[test]
    fn arguments_a_line_cannot_carry_go_in_hex() {
        let cmd = |args: &[&str]| SpawnCommand {
            program: "python3".into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            nprocs: 1,
            info: vec![("wdir".into(), "/w".into())],
        };
        let req = SpawnRequest {
            commands: vec![
                cmd(&["-c", "import sys\nprint(1)\n", "", "ends\r"]),
                cmd(&["plain", ""]),
            ],
            preput: vec![],
        };
        let text = format_spawn(&req).unwrap();
        assert!(text.contains("argcnt=0\n"), "{text}");
        assert!(text.contains("argcnt=2\n"), "{text}");
        let frames = Framer::default().push(text.as_bytes());
        assert_eq!(parsed(&frames), req);
        let bad = SpawnRequest {
            commands: vec![SpawnCommand {
                program: "a\nb".into(),
                ..cmd(&[])
            }],
            preput: vec![],
        };
        assert!(format_spawn(&bad).is_err());
        let err = check_plain_args(&req).unwrap_err().to_string();
        assert!(err.contains("a plain PMI-1 server"), "{err}");
        assert!(check_plain_args(&SpawnRequest {
            commands: vec![cmd(&["plain", ""])],
            preput: vec![],
        })
        .is_ok());
    }

    #[test]
    fn framer_survives_overlong_lines() {
        let mut f = Framer::default();
        let frames = f.push(&vec![b'x'; MAX_LINE + 1]);
        assert!(matches!(frames[0], Frame::Bad(_)));
        let frames = f.push(b"yyy\ncmd=finalize\n");
        assert_eq!(frames, vec![Frame::Line(Command::new("finalize"))]);
    }
}
