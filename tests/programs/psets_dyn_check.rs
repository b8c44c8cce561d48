//! Dynamic process sets across real processes (run by tests/sessions_dyn.rs under `ibdyn
//! run`). The first argument picks the scenario; every process that ends well prints
//! `psets_dyn_check: <what> ok` (one line each), a failure exits non-zero naming the check.
//!
//! | scenario | ranks | what |
//! |---|---|---|
//! | algebra | 4, `--pset app://even=0,2` | union/difference/intersection, origins, pset data, refusals |
//! | shrink | 4 | rank 0 shrinks WORLD by 1; rank 3 retires; the rest build a communicator |
//! | grow | 2 | rank 0 grows WORLD by 2; old and new build a communicator of 4 |
//! | grow-fail | 2 | the program vanished before the grow: the start error comes back |
//! | stuck | 3 | the retired rank never leaves: finalize kills it and names it |
//! | death | 3 | the provider dies before an integrate: the others get an error naming it |
//! | resize | any | waits for a change posted by `ibdyn resize`, adapts, reports |

use ibdyn::traits::*;
use ibdyn::{
    IntraCommunicator, PsetOp, PsetOpOptions, Session, SessionOptions, SystemOperation, PSET_WORLD,
};
use std::time::{Duration, Instant};

type R<T = ()> = Result<T, String>;

fn ok<T>(what: &str, r: ibdyn::Result<T>) -> R<T> {
    r.map_err(|e| format!("{what}: {e}"))
}

fn expect(cond: bool, what: &str) -> R {
    cond.then_some(()).ok_or_else(|| format!("{what}: wrong"))
}

fn err_has<T: std::fmt::Debug>(r: ibdyn::Result<T>, want: &[&str], what: &str) -> R {
    match r {
        Ok(v) => Err(format!("{what}: expected an error, got {v:?}")),
        Err(e) => {
            let t = e.to_string();
            expect(want.iter().all(|w| t.contains(w)), &format!("{what} ({t})"))
        }
    }
}

fn session() -> R<Session> {
    ok(
        "init",
        Session::init(SessionOptions {
            group_timeout: Duration::from_secs(20),
        }),
    )
}

fn world_rank(s: &Session) -> R<usize> {
    let g = ok("WORLD", s.group_from_pset(PSET_WORLD))?;
    let me = ok("SELF", s.group_from_pset(ibdyn::PSET_SELF))?;
    Ok(g.rank_of(me.members()[0]).expect("a member of WORLD"))
}

fn sum(c: &IntraCommunicator, x: i64) -> R<i64> {
    let mut out = [0i64];
    ok(
        "allreduce",
        c.all_reduce_into(&[x], &mut out, SystemOperation::sum()),
    )?;
    Ok(out[0])
}

/// Polls (bounded) until `input` has a change.
fn wait_change(s: &Session, input: &str) -> R<ibdyn::PsetChange> {
    let end = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(c) = ok("query", s.query_pset_op(PSET_WORLD, input))? {
            return Ok(c);
        }
        if Instant::now() > end {
            return Err(format!("no change of {input} within 60 s"));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn algebra() -> R {
    let s = session()?;
    let me = world_rank(&s)?;
    let no_room = std::env::var("IBDYN_MAX_PROCS").is_ok();
    // Everyone computes the odd ranks; the registry remembers how.
    let odd = ok(
        "difference",
        s.pset_create_op(PsetOp::Difference, PSET_WORLD, "app://even"),
    )?;
    let info = ok("info odd", s.pset_info(&odd))?;
    expect(
        info.mpi_size == 2 && info.is_member == (me % 2 == 1),
        "odd set",
    )?;
    let origin = ok("origin", s.pset_origin(&odd))?;
    expect(
        matches!(&origin, Some((PsetOp::Difference, ins)) if ins.len() == 2 && ins[1] == "app://even"),
        &format!("origin {origin:?}"),
    )?;
    let all = ok("union", s.pset_create_op(PsetOp::Union, &odd, "app://even"))?;
    expect(ok("info all", s.pset_info(&all))?.mpi_size == 4, "union")?;
    let none = ok(
        "intersection",
        s.pset_create_op(PsetOp::Intersection, &odd, "app://even"),
    )?;
    expect(
        ok("info none", s.pset_info(&none))?.mpi_size == 0,
        "intersection",
    )?;
    let n_before = ok("num", s.num_psets())?;
    expect(ok("nth", s.nth_pset(n_before - 1))? == none, "sets append")?;
    // Rank 0 names a set; the others find it through WORLD's data.
    if me == 0 {
        ok("set data", s.set_pset_data(PSET_WORLD, &[("odd", &odd)]))?;
    }
    let kv = ok(
        "get data",
        s.get_pset_data(PSET_WORLD, PSET_WORLD, &["odd"], true),
    )?;
    let shared = kv[0].1.clone();
    let g = ok("group of shared", s.group_from_pset(&shared))?;
    expect(g.size() == 2, "shared set")?;
    if me % 2 == 1 {
        let c = ok("comm from odd", g.create_comm("odd"))?;
        expect(sum(&c, me as i64)? == 4, "sum over odd")?;
    }
    let missing = ok(
        "get missing",
        s.get_pset_data(PSET_WORLD, PSET_WORLD, &["nope"], false),
    )?;
    expect(missing.is_empty(), "missing key")?;
    // Refusals, each with its reason.
    if me == 0 {
        let mut other = session()?;
        ok("finalize other", other.finalize())?;
        err_has(
            other.pset_op(PsetOp::Union, &[PSET_WORLD], &PsetOpOptions::default()),
            &["finalized"],
            "op on a finalized session",
        )?;
        err_has(
            s.finalize_pset_op(PSET_WORLD),
            &["nothing to finalize"],
            "finalize with nothing pending",
        )?;
        err_has(
            s.pset_op(PsetOp::Shrink, &[PSET_WORLD], &PsetOpOptions::processes(4)),
            &["at least one must stay"],
            "shrink larger than the set",
        )?;
        err_has(
            s.pset_op(PsetOp::Union, &["app://nope"], &PsetOpOptions::default()),
            &["app://nope"],
            "unknown input",
        )?;
        err_has(
            s.pset_op(PsetOp::Union, &["nope"], &PsetOpOptions::default()),
            &["SCHEME://NAME"],
            "malformed input",
        )?;
        err_has(
            s.pset_create_op(PsetOp::Grow, PSET_WORLD, PSET_WORLD),
            &["pset_op"],
            "create_op with a resource change",
        )?;
        if no_room {
            err_has(
                s.pset_op(PsetOp::Grow, &[&odd], &PsetOpOptions::processes(1)),
                &["no room", "IBDYN_MAX_PROCS"],
                "grow with no room",
            )?;
        }
        // A pending shrink of `odd` makes it busy; the retired process leaves (rank 3).
        let out = ok(
            "shrink odd",
            s.pset_op(PsetOp::Shrink, &[&odd], &PsetOpOptions::processes(1)),
        )?;
        expect(out.len() == 2, "shrink outputs")?;
        err_has(
            s.pset_op(PsetOp::Shrink, &[&odd], &PsetOpOptions::processes(1)),
            &["busy"],
            "second pending op",
        )?;
        ok(
            "set shrunk",
            s.set_pset_data(PSET_WORLD, &[("shrunk", &odd)]),
        )?;
    }
    let kv = ok(
        "get shrunk",
        s.get_pset_data(PSET_WORLD, PSET_WORLD, &["shrunk"], true),
    )?;
    let c =
        ok("change of odd", s.query_pset_op(PSET_WORLD, &kv[0].1))?.ok_or("no change of odd")?;
    expect(
        c.op == PsetOp::Shrink && c.included == (me == 3),
        "change seen",
    )?;
    if me == 3 {
        drop(s);
        println!("psets_dyn_check: retired ok");
        return Ok(());
    }
    // The change is seen by everyone before rank 0 finalizes it (then it is gone).
    if me != 0 {
        let key = format!("seen.{me}");
        ok("set seen", s.set_pset_data(PSET_WORLD, &[(&key, "1")]))?;
    }
    if me == 0 {
        ok(
            "get seen",
            s.get_pset_data(PSET_WORLD, PSET_WORLD, &["seen.1", "seen.2"], true),
        )?;
        ok("finalize shrink", s.finalize_pset_op(&odd))?;
        err_has(s.finalize_pset_op(&odd), &["nothing to finalize"], "twice")?;
    }
    println!("psets_dyn_check: algebra ok");
    Ok(())
}

/// Old members and new ones agree on the new main set and build a communicator over it.
fn integrate_and_check(s: &Session, delta: &str, provided: Option<&str>, size: usize) -> R<bool> {
    let (main, leave) = ok("integrate", s.integrate_res_change(delta, provided))?;
    if leave {
        return Ok(true);
    }
    let g = ok("group of main", s.group_from_pset(&main))?;
    expect(g.size() == size, &format!("main size {}", g.size()))?;
    let c = ok("comm from main", g.create_comm("main"))?;
    let n = c.size() as i64;
    expect(
        sum(&c, c.rank() as i64)? == n * (n - 1) / 2,
        "sum over main",
    )?;
    Ok(false)
}

fn shrink() -> R {
    let s = session()?;
    let me = world_rank(&s)?;
    let (delta, main) = if me == 0 {
        let out = ok(
            "shrink",
            s.pset_op(PsetOp::Shrink, &[PSET_WORLD], &PsetOpOptions::processes(1)),
        )?;
        (out[0].clone(), Some(out[1].clone()))
    } else {
        (wait_change(&s, PSET_WORLD)?.delta, None)
    };
    let leave = integrate_and_check(&s, &delta, main.as_deref(), 3)?;
    expect(leave == (me == 3), "who leaves")?;
    if leave {
        drop(s);
        println!("psets_dyn_check: retired ok");
        return Ok(());
    }
    if me == 0 {
        ok("finalize", s.finalize_pset_op(PSET_WORLD))?;
    }
    println!("psets_dyn_check: shrink ok");
    Ok(())
}

fn grow() -> R {
    let s = session()?;
    // Started by the grow? Then WORLD is the delta (an old process may see the change
    // already, not included).
    if let Some(c) = ok("recv_res_change", s.recv_res_change(PSET_WORLD))?
        .filter(|c| c.included && c.kind.starts())
    {
        expect(c.kind == PsetOp::Grow, &format!("added process {c:?}"))?;
        integrate_and_check(&s, &c.delta, None, 4)?;
        // (`ibdyn run --prestart`: the added process was a copy started ahead.)
        let how = if ibdyn::pmi::prestart::was_prestarted() {
            " (prestarted)"
        } else {
            ""
        };
        println!("psets_dyn_check: added ok{how}");
        return Ok(());
    }
    let me = world_rank(&s)?;
    let (delta, main) = if me == 0 {
        // The non-blocking form: granted at once, tested while "computing".
        let mut req = ok(
            "ipset_op",
            s.ipset_op(PsetOp::Grow, &[PSET_WORLD], &PsetOpOptions::processes(2)),
        )?;
        let mut tests = 0;
        while !ok("test", req.test())? {
            tests += 1;
            expect(tests < 100_000, "the grow completes")?;
            std::thread::sleep(Duration::from_micros(100));
        }
        let out = ok("wait", req.wait())?;
        expect(out.len() == 2, "grow outputs")?;
        (out[0].clone(), Some(out[1].clone()))
    } else {
        (wait_change(&s, PSET_WORLD)?.delta, None)
    };
    integrate_and_check(&s, &delta, main.as_deref(), 4)?;
    if me == 0 {
        ok("finalize", s.finalize_pset_op(PSET_WORLD))?;
    }
    println!("psets_dyn_check: grow ok");
    Ok(())
}

fn grow_fail() -> R {
    let s = session()?;
    if world_rank(&s)? == 0 {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        std::fs::remove_file(&exe).map_err(|e| format!("remove {}: {e}", exe.display()))?;
        err_has(
            s.pset_op(PsetOp::Grow, &[PSET_WORLD], &PsetOpOptions::processes(2)),
            &["cancelled", "did not start", "rank 0 on node"],
            "grow of a vanished program",
        )?;
        // The set is free again.
        err_has(
            s.finalize_pset_op(PSET_WORLD),
            &["cancelled"],
            "finalize reports the cancel",
        )?;
        err_has(
            s.finalize_pset_op(PSET_WORLD),
            &["nothing to finalize"],
            "then nothing pending",
        )?;
    }
    println!("psets_dyn_check: grow-fail ok");
    Ok(())
}

fn stuck() -> R {
    let s = session()?;
    let me = world_rank(&s)?;
    if me == 0 {
        ok(
            "shrink",
            s.pset_op(PsetOp::Shrink, &[PSET_WORLD], &PsetOpOptions::processes(1)),
        )?;
        let t = Instant::now();
        err_has(
            s.finalize_pset_op(PSET_WORLD),
            &["did not finalize", "rank 2", "killed"],
            "overstaying retired process",
        )?;
        expect(t.elapsed() < Duration::from_secs(20), "bounded")?;
        println!("psets_dyn_check: stuck ok");
    } else if me == 2 {
        wait_change(&s, PSET_WORLD)?;
        // Retired, but never leaves (killed by the daemons).
        std::thread::sleep(Duration::from_secs(120));
    } else {
        println!("psets_dyn_check: stuck ok");
    }
    Ok(())
}

fn death() -> R {
    let s = session()?;
    let me = world_rank(&s)?;
    if me == 0 {
        ok(
            "shrink",
            s.pset_op(PsetOp::Shrink, &[PSET_WORLD], &PsetOpOptions::processes(1)),
        )?;
        // The provider dies without providing.
        std::process::exit(3);
    }
    let c = wait_change(&s, PSET_WORLD)?;
    let t = Instant::now();
    err_has(
        s.integrate_res_change(&c.delta, None),
        &["rank 0", "died"],
        "integrate with a dead member",
    )?;
    expect(t.elapsed() < Duration::from_secs(30), "bounded")?;
    println!("psets_dyn_check: death ok");
    Ok(())
}

/// Waits for `ibdyn resize` to post a change of the job's main set, adapts, and reports the
/// new size.
fn resize() -> R {
    let s = session()?;
    if let Some(c) = ok("recv_res_change", s.recv_res_change(PSET_WORLD))?
        .filter(|c| c.included && c.kind.starts())
    {
        let (main, _) = ok("integrate", s.integrate_res_change(&c.delta, None))?;
        let g = ok("main", s.group_from_pset(&main))?;
        let comm = ok("comm", g.create_comm("resized"))?;
        sum(&comm, 1)?;
        println!("psets_dyn_check: resize added ok");
        return Ok(());
    }
    let me = world_rank(&s)?;
    let size = ok("info", s.pset_info(PSET_WORLD))?.mpi_size;
    if me == 0 {
        println!("psets_dyn_check: waiting for resize");
    }
    let c = wait_change(&s, PSET_WORLD)?;
    let provided = (me == 0).then_some(c.new_main.as_str());
    let (main, leave) = ok("integrate", s.integrate_res_change(&c.delta, provided))?;
    if leave {
        drop(s);
        println!("psets_dyn_check: resize retired ok");
        return Ok(());
    }
    let g = ok("main", s.group_from_pset(&main))?;
    let comm = ok("comm", g.create_comm("resized"))?;
    let n = sum(&comm, 1)?;
    if me == 0 {
        ok("finalize", s.finalize_pset_op(&c.input))?;
        println!("psets_dyn_check: resized from {size} to {n}");
    }
    println!("psets_dyn_check: resize ok");
    Ok(())
}

/// Run with `--pset app://x=RANKS` in jobs of one DVM that define `app://x` differently:
/// the registry keeps each job's set apart, so an op on it sees this job's members, and
/// data set on it stays with this job. Each rank prints `named ok`.
fn named() -> R {
    let s = session()?;
    let me = world_rank(&s)?;
    let mine = ok("group x", s.group_from_pset("app://x"))?;
    let u = ok(
        "union",
        s.pset_create_op(PsetOp::Union, "app://x", "app://x"),
    )?;
    let got = ok("group of union", s.group_from_pset(&u))?;
    expect(
        got.members() == mine.members(),
        &format!("op on this job's app://x: {got:?} vs {mine:?}"),
    )?;
    let tag = format!("{:?}", mine.members());
    if me == 0 {
        ok("set data", s.set_pset_data("app://x", &[("def", &tag)]))?;
    }
    let kv = ok(
        "get data",
        s.get_pset_data(PSET_WORLD, "app://x", &["def"], true),
    )?;
    expect(
        kv[0].1 == tag,
        &format!("data of this job's app://x: {:?}", kv[0].1),
    )?;
    println!("psets_dyn_check: named ok");
    Ok(())
}

fn main() {
    let what = std::env::args().nth(1).unwrap_or_default();
    let r = match what.as_str() {
        "algebra" => algebra(),
        "shrink" => shrink(),
        "grow" => grow(),
        "grow-fail" => grow_fail(),
        "stuck" => stuck(),
        "death" => death(),
        "resize" => resize(),
        "named" => named(),
        other => Err(format!("unknown scenario {other:?}")),
    };
    if let Err(e) = r {
        eprintln!("psets_dyn_check {what}: {e}");
        std::process::exit(1);
    }
}
