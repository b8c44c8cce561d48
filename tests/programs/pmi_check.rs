//! Test program for the PMI client and the ibdyn daemons: `pmi_check MODE`.
//! Each mode prints `OK <rank>` (or a mode-specific line) and exits 0 when all checks pass,
//! `FAIL rank <r>: ...` and exit code 1 otherwise.

use ibdyn::pmi::{PmiClient, PmiCompletion, ServerKind};
use std::io::{BufRead, BufReader, Read, Write};
use std::time::Duration;

type Res<T> = Result<T, String>;

fn check(cond: bool, what: impl FnOnce() -> String) -> Res<()> {
    if cond {
        Ok(())
    } else {
        Err(what())
    }
}

fn e<E: std::fmt::Display>(what: &str) -> impl Fn(E) -> String + '_ {
    move |err| format!("{what}: {err}")
}

fn basic(c: &mut PmiClient) -> Res<()> {
    let (r, n) = (c.rank(), c.size());
    let ibdyn = c.server_kind() == ServerKind::Ibdyn;
    check(r < n, || format!("rank {r} >= size {n}"))?;
    check(!c.kvsname().is_empty(), || "empty kvsname".into())?;
    check(c.universe_size() >= n, || {
        format!("universe size {} < {n}", c.universe_size())
    })?;
    check(c.appnum() == 0, || format!("appnum {}", c.appnum()))?;
    check(c.local_ranks().contains(&r), || {
        format!("local_ranks {:?} lacks {r}", c.local_ranks())
    })?;
    if ibdyn {
        check(c.node_of(r) == c.node_id(), || {
            format!("node_of({r})={} but node_id={}", c.node_of(r), c.node_id())
        })?;
        let nnodes: u32 = std::env::var("IBDYN_NNODES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1);
        check((0..n).all(|p| c.node_of(p) < nnodes), || {
            "node_of out of range".into()
        })?;
    }

    // put + fence + get
    c.put(&format!("card-{r}"), &format!("addr-{r}-{}", c.node_uid()))
        .map_err(e("put"))?;
    c.fence().map_err(e("fence"))?;
    for p in 0..n {
        let v = c.get(&format!("card-{p}")).map_err(e("get"))?;
        check(v.starts_with(&format!("addr-{p}-")), || {
            format!("card-{p} = {v:?}")
        })?;
    }
    match c.get("no-such-key") {
        Err(ibdyn::pmi::PmiError::KeyNotFound(k)) if k == "no-such-key" => {}
        other => return Err(format!("get of a missing key gave {other:?}")),
    }

    // Binary values; under ibdyn visible to get_wait without a fence.
    let bin = vec![0u8, 255, b' ', b'\n', b'=', r as u8];
    c.put_bytes(&format!("bin-{r}"), &bin)
        .map_err(e("put_bytes"))?;
    let next = (r + 1) % n;
    let got = if ibdyn {
        c.get_wait_bytes(&format!("bin-{next}"), Duration::from_secs(30))
            .map_err(e("get_wait_bytes"))?
    } else {
        c.fence().map_err(e("fence"))?;
        c.get_bytes(&format!("bin-{next}"))
            .map_err(e("get_bytes"))?
    };
    check(got == [0, 255, b' ', b'\n', b'=', next as u8], || {
        format!("bin-{next} = {got:?}")
    })?;

    // allgather
    let all = c
        .allgather(format!("ag-{r}").as_bytes())
        .map_err(e("allgather"))?;
    check(all.len() == n as usize, || {
        format!("allgather gave {} values", all.len())
    })?;
    for (p, v) in all.iter().enumerate() {
        check(v == format!("ag-{p}").as_bytes(), || {
            format!("allgather[{p}] = {v:?}")
        })?;
    }
    let empty = c.allgather(&[]).map_err(e("allgather of empty values"))?;
    check(
        empty.iter().all(Vec::is_empty) && empty.len() == n as usize,
        || "empty allgather".into(),
    )?;

    // non-blocking: ifence and iallgather in flight together, with work and a get meanwhile
    c.put(&format!("nb-{r}"), "x").map_err(e("put"))?;
    let f = c.ifence().map_err(e("ifence"))?;
    let g = c.iallgather(&[r as u8; 3]).map_err(e("iallgather"))?;
    let mine = c
        .get(&format!("card-{r}"))
        .map_err(e("get during ifence"))?;
    check(mine.starts_with(&format!("addr-{r}-")), || {
        "get during ifence".into()
    })?;
    let mut spins = 0u64;
    while !c.test(&g).map_err(e("test"))? {
        spins += 1;
        std::hint::black_box(spins);
        if spins & 1023 == 0 {
            std::thread::yield_now();
        }
    }
    match c.wait(g).map_err(e("wait iallgather"))? {
        PmiCompletion::Allgather(v) => check(
            v.iter().enumerate().all(|(p, x)| x == &[p as u8; 3]),
            || format!("iallgather = {v:?}"),
        )?,
        other => return Err(format!("iallgather completed as {other:?}")),
    }
    check(
        c.wait(f).map_err(e("wait ifence"))? == PmiCompletion::Fence,
        || "ifence".into(),
    )?;
    for p in 0..n {
        c.get(&format!("nb-{p}")).map_err(e("get after ifence"))?;
    }

    // name service
    let svc = format!("svc-{}", c.job_id());
    if r == 0 {
        c.publish_name(&svc, "port#0").map_err(e("publish_name"))?;
    }
    c.barrier().map_err(e("barrier"))?;
    check(
        c.lookup_name(&svc).map_err(e("lookup_name"))? == "port#0",
        || "lookup value".into(),
    )?;
    c.barrier().map_err(e("barrier"))?;
    if r == 0 {
        c.unpublish_name(&svc).map_err(e("unpublish_name"))?;
    }
    c.barrier().map_err(e("barrier"))?;
    check(c.lookup_name(&svc).is_err(), || {
        "lookup after unpublish succeeded".into()
    })?;
    Ok(())
}

fn collective_victim(c: &mut PmiClient, allgather: bool) -> Res<()> {
    let r = c.rank();
    let step = |c: &mut PmiClient| -> ibdyn::pmi::Result<()> {
        if allgather {
            c.allgather(b"v").map(|_| ())
        } else {
            c.fence()
        }
    };
    step(c).map_err(e("first collective"))?;
    if r == 1 {
        std::thread::sleep(Duration::from_millis(200));
        std::process::exit(0);
    }
    match step(c) {
        Err(err) => {
            println!("COLL-FAILED rank {r}: {err}");
            Ok(())
        }
        Ok(()) => Err("the collective succeeded without rank 1".into()),
    }
}

fn raw_exchange(
    sock: &mut std::os::unix::net::UnixStream,
    reader: &mut BufReader<std::os::unix::net::UnixStream>,
    send: &[u8],
) -> Res<String> {
    sock.write_all(send).map_err(e("raw write"))?;
    let mut line = String::new();
    reader.read_line(&mut line).map_err(e("raw read"))?;
    Ok(line)
}

fn malformed(c: &mut PmiClient) -> Res<()> {
    let (r, n) = (c.rank(), c.size());
    if r == 0 || r == n - 1 {
        let path = std::env::var("IBDYN_PMI_SOCK").map_err(e("IBDYN_PMI_SOCK"))?;
        let mut sock = std::os::unix::net::UnixStream::connect(path).map_err(e("connect"))?;
        sock.set_read_timeout(Some(Duration::from_secs(20)))
            .map_err(e("timeout"))?;
        let mut reader = BufReader::new(sock.try_clone().map_err(e("clone"))?);
        let cases: [(&[u8], &str); 7] = [
            (b"this is not pmi\n", "cmd=error"),
            (b"cmd=frobnicate a=b\n", "cmd=error"),
            (b"cmd=put kvsname=x\n", "cmd=error"),
            (b"cmd=barrier_in\n", "cmd=error"),
            (b"cmd=ibdyn_allgather value=zz\n", "cmd=error"),
            (b"\xff\xfe garbage\n", "cmd=error"),
            (b"mcmd=spawn\nnprocs=x\nendcmd\n", "cmd=spawn_result rc=-1"),
        ];
        for (send, want) in cases {
            let got = raw_exchange(&mut sock, &mut reader, send)?;
            check(got.starts_with(want), || {
                format!("{:?} got {got:?}", String::from_utf8_lossy(send))
            })?;
        }
        let got = raw_exchange(&mut sock, &mut reader, b"cmd=get_maxes\n")?;
        check(got.starts_with("cmd=maxes"), || {
            format!("get_maxes after junk: {got:?}")
        })?;
    }
    c.put(&format!("m-{r}"), "v").map_err(e("put"))?;
    c.fence().map_err(e("fence after malformed lines"))?;
    for p in 0..n {
        c.get(&format!("m-{p}")).map_err(e("get"))?;
    }
    Ok(())
}

fn intruder(c: &mut PmiClient) -> Res<()> {
    if c.rank() == 0 {
        let dir = std::path::PathBuf::from(
            std::env::var("IBDYN_SESSION_DIR").map_err(e("IBDYN_SESSION_DIR"))?,
        );
        let mut ports =
            vec![std::fs::read_to_string(dir.join("launcher.port")).map_err(e("launcher.port"))?];
        for d in 0.. {
            match std::fs::read_to_string(dir.join(format!("node{d}/tcp.port"))) {
                Ok(p) => ports.push(p),
                Err(_) => break,
            }
        }
        for p in ports {
            let port: u16 = p.trim().parse().map_err(e("port"))?;
            let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).map_err(e("connect"))?;
            s.set_read_timeout(Some(Duration::from_secs(20)))
                .map_err(e("timeout"))?;
            // The listener challenges first; the answer is not the HMAC under its secret.
            let mut challenge = String::new();
            std::io::BufRead::read_line(
                &mut std::io::BufReader::new(s.try_clone().map_err(e("clone"))?),
                &mut challenge,
            )
            .map_err(e("read the challenge"))?;
            if !challenge.starts_with("cmd=ibdyn_challenge ") {
                return Err(format!("port {port} opened with {challenge:?}"));
            }
            let proof = "ab".repeat(32);
            let hello = format!("cmd=ibdyn_auth proof={proof} nonce=01 role=daemon index=1 port=1\ncmd=d_put kvs=x key=y value=z\n");
            s.write_all(hello.as_bytes()).map_err(e("write"))?;
            let mut buf = [0u8; 64];
            match s.read(&mut buf) {
                Ok(0) => {}
                Err(err) if err.kind() == std::io::ErrorKind::ConnectionReset => {}
                Ok(k) => {
                    return Err(format!(
                        "port {port} answered {:?}",
                        String::from_utf8_lossy(&buf[..k])
                    ))
                }
                Err(err) => return Err(format!("port {port}: {err}")),
            }
            println!("REFUSED port {port}");
        }
    }
    c.fence().map_err(e("fence after intrusion"))?;
    Ok(())
}

/// Allgathers of values of every size around a PMI-1 server's value limit and far past it,
/// each rank's different (rank r, round k: `len` bytes of `r * 31 + k + i`).
fn big_allgather(c: &mut PmiClient) -> Res<()> {
    let (r, n) = (c.rank(), c.size());
    let value = |rank: u32, len: usize| -> Vec<u8> {
        (0..len)
            .map(|i| (rank as usize * 31 + len + i) as u8)
            .collect()
    };
    for len in [0, 1, 500, 511, 512, 513, 1024, 5000, 100_000] {
        let all = c
            .allgather(&value(r, len + r as usize))
            .map_err(e("allgather"))?;
        check(all.len() == n as usize, || format!("{} values", all.len()))?;
        for (p, v) in all.iter().enumerate() {
            check(*v == value(p as u32, len + p), || {
                format!("allgather of {len} bytes: rank {p}'s value differs")
            })?;
        }
    }
    Ok(())
}

fn run(mode: &str) -> Res<()> {
    let mut c = PmiClient::init().map_err(e("init"))?;
    let r = c.rank();
    match mode {
        "basic" | "hydra" => basic(&mut c)?,
        "big-allgather" => big_allgather(&mut c)?,
        "die-in-fence" => collective_victim(&mut c, false)?,
        "die-in-allgather" => collective_victim(&mut c, true)?,
        "malformed" => malformed(&mut c)?,
        "intruder" => intruder(&mut c)?,
        "abort" => {
            if r == 1 {
                c.abort(7, "test abort");
            }
            // The others wait in a fence until the launcher tears the job down.
            let _ = c.fence();
            std::thread::sleep(Duration::from_secs(30));
        }
        "getwait-timeout" => {
            if r == c.size() - 1 {
                match c.get_wait("never-put-key", Duration::from_millis(300)) {
                    Err(err) => println!("GETWAIT-TIMEOUT rank {r}: {err}"),
                    Ok(v) => return Err(format!("get_wait returned {v:?}")),
                }
            }
        }
        "shm" => {
            let path = format!("/dev/shm/ibdyn-{}-check", std::process::id());
            std::fs::write(&path, b"x").map_err(e("create shm file"))?;
            println!("SHM {path}");
        }
        other => return Err(format!("unknown mode {other:?}")),
    }
    c.finalize().map_err(e("finalize"))?;
    println!("OK {r}");
    Ok(())
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "basic".into());
    if let Err(err) = run(&mode) {
        let rank = std::env::var("IBDYN_RANK")
            .or_else(|_| std::env::var("PMI_RANK"))
            .unwrap_or_default();
        println!("FAIL rank {rank}: {err}");
        std::process::exit(1);
    }
}
