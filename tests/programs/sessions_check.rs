//! Sessions checks, run under `ibdyn run -n 4` (4 processes exactly). Every rank runs every
//! check; each rank prints `sessions_check: all passed` at the end. Any failure exits non-zero
//! with a message naming the check.

use ibdyn::traits::*;
use ibdyn::{
    intercomm_from_groups, CommError, IntraCommunicator, Session, SessionOptions, SystemOperation,
    PSET_SELF, PSET_WORLD,
};
use std::time::Duration;

type R<T = ()> = Result<T, String>;

fn ok<T>(what: &str, r: ibdyn::Result<T>) -> R<T> {
    r.map_err(|e| format!("{what}: {e}"))
}

fn expect(cond: bool, what: &str) -> R {
    cond.then_some(()).ok_or_else(|| format!("{what}: wrong"))
}

fn opts() -> SessionOptions {
    SessionOptions {
        group_timeout: Duration::from_secs(10),
    }
}

fn sum_of_ranks(c: &IntraCommunicator, what: &str) -> R<i64> {
    let mut out = [0i64];
    ok(
        what,
        c.all_reduce_into(&[c.rank() as i64], &mut out, SystemOperation::sum()),
    )?;
    Ok(out[0])
}

fn queries(s: &Session, world: usize) -> R {
    let n = ok("num_psets", s.num_psets())?;
    expect(n >= 2, "num_psets >= 2")?;
    expect(
        ok("nth 0", s.nth_pset(0))? == PSET_WORLD,
        "nth_pset(0) is WORLD",
    )?;
    expect(
        ok("nth 1", s.nth_pset(1))? == PSET_SELF,
        "nth_pset(1) is SELF",
    )?;
    let w = ok("info WORLD", s.pset_info(PSET_WORLD))?;
    expect(w.mpi_size == world && w.is_member, "WORLD info")?;
    let me = ok("info SELF", s.pset_info(PSET_SELF))?;
    expect(me.mpi_size == 1 && me.is_member, "SELF info")?;
    expect(
        matches!(s.nth_pset(n), Err(CommError::PsetIndex { index, count }) if index == n && count == n),
        "nth_pset out of range is PsetIndex",
    )?;
    expect(
        matches!(
            s.pset_info("mpi://world"),
            Err(CommError::UnknownPset { .. })
        ),
        "names are case-sensitive",
    )?;
    expect(
        matches!(
            s.group_from_pset("app://nope"),
            Err(CommError::UnknownPset { .. })
        ),
        "unknown set",
    )?;
    expect(
        matches!(s.pset_info("WORLD"), Err(CommError::MalformedPset { .. })),
        "malformed name",
    )?;
    Ok(())
}

fn run() -> R {
    let mut s1 = ok("init 1", Session::init(opts()))?;
    queries(&s1, 4)?;
    let wg = ok("group WORLD", s1.group_from_pset(PSET_WORLD))?;
    let me = ok("group SELF", s1.group_from_pset(PSET_SELF))?.members()[0];
    let rank = wg.rank_of(me).ok_or("I am not in WORLD")? as i32;
    expect(wg.size() == 4, "run with -n 4")?;
    let w1 = ok("create_comm", wg.create_comm("app.world"))?;
    expect(w1.rank() == rank && w1.size() == 4, "comm from WORLD")?;
    expect(
        sum_of_ranks(&w1, "allreduce on WORLD")? == 6,
        "allreduce sum",
    )?;

    // A second session at once: the same group and tag make a second communicator.
    let mut s2 = ok("init 2", Session::init(opts()))?;
    expect(s2.epoch() == s1.epoch() + 1, "epochs count the inits")?;
    let w2 = ok(
        "create_comm 2",
        ok("group 2", s2.group_from_pset(PSET_WORLD))?.create_comm("app.world"),
    )?;
    expect(sum_of_ranks(&w2, "allreduce on 2nd")? == 6, "2nd allreduce")?;

    // Groups of two sessions in one call: refused at once on every process, naming both.
    let g2 = ok("group 2 again", s2.group_from_pset(PSET_WORLD))?;
    let (lo1, hi2) = (ok("lo1", wg.incl(&[0, 1]))?, ok("hi2", g2.incl(&[2, 3]))?);
    let (e1, e2) = (s1.epoch(), s2.epoch());
    let (local, remote) = if rank < 2 { (&lo1, &hi2) } else { (&hi2, &lo1) };
    match intercomm_from_groups(local, 0, remote, 0, "app.mixed") {
        Err(CommError::MixedSessions { first, second })
            if (first, second) == (e1, e2) || (first, second) == (e2, e1) => {}
        Err(e) => return Err(format!("mixed sessions gave {e}")),
        Ok(_) => return Err("groups of two sessions made an intercommunicator".into()),
    }

    // A subgroup by incl: its own context, apart from the set's communicator.
    let even = ok("incl", wg.incl(&[0, 2]))?;
    if rank % 2 == 0 {
        let ce = ok("create_comm even", even.create_comm("app.world"))?;
        expect(ce.size() == 2, "even size")?;
        expect(sum_of_ranks(&ce, "allreduce even")? == 1, "even sum")?;
    } else {
        expect(
            matches!(
                even.create_comm("app.world"),
                Err(CommError::InvalidArgument(_))
            ),
            "non-member create_comm is an error",
        )?;
    }

    // An intercommunicator between the halves.
    let (lo, hi) = (ok("lo", wg.incl(&[0, 1]))?, ok("hi", wg.incl(&[2, 3]))?);
    let (local, remote) = if rank < 2 { (&lo, &hi) } else { (&hi, &lo) };
    let ic = ok(
        "intercomm_from_groups",
        intercomm_from_groups(local, 0, remote, 0, "app.halves"),
    )?;
    expect(ic.remote_size() == 2, "intercomm remote size")?;
    let peer = ic.process_at_rank(ic.rank());
    let mine = [rank as i64];
    let mut got = [0i64];
    let r = ok("inter irecv", peer.immediate_receive_into(&mut got[..]))?;
    ok("inter send", peer.send(&mine[..]))?;
    ok("inter wait", r.wait())?;
    expect(got[0] == ((rank + 2) % 4) as i64, "intercomm exchange")?;

    // Members that disagree about the order: both get GroupMismatch, at once.
    if rank < 2 {
        let g = if rank == 0 {
            ok("g01", wg.incl(&[0, 1]))?
        } else {
            ok("g10", wg.incl(&[1, 0]))?
        };
        match g.create_comm("app.mismatch") {
            Err(CommError::GroupMismatch { detail, .. }) if detail.contains("different group") => {}
            Err(e) => return Err(format!("mismatch gave {e}")),
            Ok(_) => return Err("a mismatched group made a communicator".into()),
        }
    }
    ok("barrier", w1.barrier())?;

    // A member that never comes: the others fail within the (short) timeout, naming it.
    let mut short = ok(
        "init short",
        Session::init(SessionOptions {
            group_timeout: Duration::from_secs(2),
        }),
    )?;
    if rank < 2 {
        let g = ok("g012", wg.incl(&[0, 1, 2]))?;
        match g.create_comm("app.missing") {
            Err(CommError::GroupMismatch { detail, .. })
                if detail.contains("did not take part") && detail.contains("rank 2") => {}
            // The other one gave up first and withdrew its part.
            Err(CommError::StalePeer { .. }) => {}
            Err(e) => return Err(format!("missing member gave {e}")),
            Ok(_) => return Err("a group with a missing member made a communicator".into()),
        }
    }
    ok("finalize short", short.finalize())?;
    ok("barrier", w1.barrier())?;
    // The timeout of the latest init applies: back to the long one.
    let s_long = ok("init long", Session::init(opts()))?;
    drop(s_long);

    // Finalise both; calls on a finalised session fail; a new session works.
    drop((w1, w2, ic));
    ok("finalize 1", s1.finalize())?;
    expect(
        matches!(s1.num_psets(), Err(CommError::SessionFinalized)),
        "finalized session",
    )?;
    // A group of a finalized session: refused, naming its epoch, while another is live.
    match wg.create_comm("app.stale") {
        Err(e @ CommError::StaleSession { .. }) => {
            let text = e.to_string();
            expect(
                text.contains(&format!("epoch {e1}")) && text.contains(&format!("epoch {e2}")),
                &format!("stale session named with the live one: {text}"),
            )?;
        }
        Err(e) => return Err(format!("group of a finalized session gave {e}")),
        Ok(_) => return Err("a group of a finalized session made a communicator".into()),
    }
    ok("finalize 2", s2.finalize())?;
    let s3 = ok("re-init", Session::init(opts()))?;
    expect(s3.epoch() == 5, "re-init epoch")?;
    queries(&s3, 4)?;
    let w3 = ok(
        "create_comm after re-init",
        ok("group 3", s3.group_from_pset(PSET_WORLD))?.create_comm("app.world"),
    )?;
    expect(
        sum_of_ranks(&w3, "allreduce after re-init")? == 6,
        "re-init sum",
    )?;

    // A universe alongside; rank 0 defines sets the way a launcher does (the job-level
    // key), and a session started afterwards sees them.
    let universe = ok("initialize", ibdyn::initialize())?;
    let world = universe.world();
    expect(
        sum_of_ranks(&world, "allreduce on universe")? == 6,
        "universe sum",
    )?;
    if rank == 0 {
        ok(
            "put psets",
            universe
                .with_pmi(|p| p.put("ibdyn-psets", "app://even=0,2;app://odd=1,3"))
                .map_err(CommError::from),
        )?;
    }
    ok("barrier", world.barrier())?;
    let s4 = ok("init 4", Session::init(opts()))?;
    expect(ok("num 4", s4.num_psets())? == 4, "launcher sets counted")?;
    expect(
        ok("nth 2", s4.nth_pset(2))? == "app://even",
        "launcher set order",
    )?;
    let info = ok("info even", s4.pset_info("app://even"))?;
    expect(
        info.mpi_size == 2 && info.is_member == (rank % 2 == 0),
        "even info",
    )?;
    let set = if rank % 2 == 0 {
        "app://even"
    } else {
        "app://odd"
    };
    let half = ok("group half", s4.group_from_pset(set))?;
    let ch = ok("create_comm half", half.create_comm("app.half"))?;
    expect(sum_of_ranks(&ch, "allreduce half")? == 1, "half sum")?;
    drop((w3, ch, s3, s4));
    ok("finalize universe", universe.finalize())?;
    Ok(())
}

/// Sets named with `ibdyn run --pset app://even=0,2 --pset app://odd=1,3`, each usable again.
fn launcher_sets() -> R {
    let s = ok("init", Session::init(opts()))?;
    let world = ok(
        "create_comm WORLD",
        ok("group", s.group_from_pset(PSET_WORLD))?.create_comm("app.w"),
    )?;
    let rank = world.rank();
    expect(
        ok("num", s.num_psets())? == 4,
        "WORLD, SELF and two launcher sets",
    )?;
    expect(
        ok("nth 3", s.nth_pset(3))? == "app://odd",
        "launcher set order",
    )?;
    expect(
        s.pset_info("app://Even").is_err(),
        "set names are case-sensitive",
    )?;
    let set = if rank % 2 == 0 {
        "app://even"
    } else {
        "app://odd"
    };
    let info = ok("info", s.pset_info(set))?;
    expect(info.mpi_size == 2 && info.is_member, "own half")?;
    for round in 0..2 {
        let c = ok(
            "create_comm",
            ok("group", s.group_from_pset(set))?.create_comm("app.launcher"),
        )?;
        expect(c.size() == 2, "a half has two members")?;
        expect(
            sum_of_ranks(&c, "allreduce")? == 1,
            &format!("sum over {set}, round {round}"),
        )?;
    }
    Ok(())
}

/// Sessions only, no universe: the runtime is parked after each finalize and left at exit.
/// A group kept from an earlier epoch is refused after re-init, naming both epochs.
fn sessions_only() -> R {
    let mut kept: Option<ibdyn::Group> = None;
    for round in 1..=3u64 {
        let mut s = ok("init", Session::init(opts()))?;
        expect(s.epoch() == round, "epoch of a session-only process")?;
        if let Some(old) = &kept {
            for (what, r) in [
                ("create_comm", old.create_comm("app.round").map(|_| ())),
                (
                    "intercomm_from_groups",
                    intercomm_from_groups(old, 0, old, 0, "app.round").map(|_| ()),
                ),
            ] {
                match r {
                    Err(CommError::StaleSession { epoch, live })
                        if epoch == round - 1 && live == format!("epoch {round}") => {}
                    Err(e) => return Err(format!("stale group ({what}) gave {e}")),
                    Ok(()) => return Err(format!("a stale group made a communicator ({what})")),
                }
            }
        }
        kept = Some(ok("kept group", s.group_from_pset(PSET_WORLD))?);
        queries(&s, 4)?;
        let c = ok(
            "create_comm",
            ok("group", s.group_from_pset(PSET_WORLD))?.create_comm("app.round"),
        )?;
        expect(sum_of_ranks(&c, "allreduce")? == 6, "session-only sum")?;
        drop(c);
        ok("finalize", s.finalize())?;
    }
    Ok(())
}

/// Run with 2 processes. Rank 1 fails to create a communicator (rank 0 is not there yet:
/// a short timeout), finalizes and re-initialises (epoch 2); rank 0 (still in epoch 1)
/// then creates the same communicator and must refuse rank 1's stale part, naming its
/// epoch, instead of making a communicator rank 1 does not have.
fn stale_peer() -> R {
    let short = SessionOptions {
        group_timeout: Duration::from_secs(1),
    };
    let first = ok("init", Session::init(opts()))?;
    let wg = ok("group", first.group_from_pset(PSET_WORLD))?;
    let me = ok("group SELF", first.group_from_pset(PSET_SELF))?.members()[0];
    let rank = wg.rank_of(me).ok_or("I am not in WORLD")?;
    expect(wg.size() == 2, "run with -n 2")?;
    let s = if rank == 1 {
        let mut s = first;
        let mut quick = ok("init short", Session::init(short))?;
        match ok("group", quick.group_from_pset(PSET_WORLD))?.create_comm("app.stale") {
            Err(CommError::GroupMismatch { detail, .. })
                if detail.contains("did not take part") => {}
            Err(e) => return Err(format!("lone create_comm gave {e}")),
            Ok(_) => return Err("a communicator without rank 0".into()),
        }
        ok("finalize short", quick.finalize())?;
        ok("finalize", s.finalize())?;
        s = ok("re-init", Session::init(opts()))?;
        expect(s.epoch() == 3, "re-init epoch")?;
        s
    } else {
        first
    };
    // Both meet here: rank 1's withdrawn part is at rank 0 by now.
    let sync = ok(
        "create_comm sync",
        ok("group", s.group_from_pset(PSET_WORLD))?.create_comm("app.sync"),
    )?;
    if rank == 0 {
        match ok("group", s.group_from_pset(PSET_WORLD))?.create_comm("app.stale") {
            Err(CommError::StalePeer {
                epoch: 2,
                seq: 0,
                peer,
                ..
            }) if peer.contains("rank 1") => {}
            Err(e) => return Err(format!("stale part gave {e}")),
            Ok(_) => return Err("a communicator from a withdrawn (stale) part".into()),
        }
    }
    ok("barrier", sync.barrier())?;
    Ok(())
}

/// Run with 4 processes. Many communicators from groups with one tag (every subset of two
/// or more processes, twice, and intercommunicators between the halves): a message sent on
/// each reaches that communicator only. All messages go out before any is received, and
/// they are received in the opposite order, so a shared context would deliver one
/// communicator's message to another.
fn same_tag() -> R {
    const TAG: &str = "app.same";
    let s = ok("init", Session::init(opts()))?;
    let wg = ok("group", s.group_from_pset(PSET_WORLD))?;
    let me = ok("group SELF", s.group_from_pset(PSET_SELF))?.members()[0];
    let rank = wg.rank_of(me).ok_or("I am not in WORLD")? as i64;
    expect(wg.size() == 4, "run with -n 4")?;
    let mut intra = Vec::new();
    let mut index = 0i64;
    for _round in 0..2 {
        for mask in 1u32..16 {
            if mask.count_ones() < 2 {
                continue;
            }
            let ranks: Vec<i64> = (0..4).filter(|r| mask >> r & 1 == 1).collect();
            if ranks.contains(&rank) {
                let g = ok("incl", wg.incl(&ranks))?;
                intra.push((index, ok("create_comm", g.create_comm(TAG))?));
            }
            index += 1;
        }
    }
    let (lo, hi) = (ok("lo", wg.incl(&[0, 1]))?, ok("hi", wg.incl(&[2, 3]))?);
    let (local, remote) = if rank < 2 { (&lo, &hi) } else { (&hi, &lo) };
    let mut inter = Vec::new();
    for _ in 0..2 {
        inter.push((
            index,
            ok("intercomm", intercomm_from_groups(local, 0, remote, 0, TAG))?,
        ));
        index += 1;
    }
    for (i, c) in &intra {
        for d in (0..c.size()).filter(|&d| d != c.rank()) {
            ok("send", c.process_at_rank(d).send(&[*i, rank][..]))?;
        }
    }
    for (i, c) in &inter {
        for d in 0..c.remote_size() {
            ok("inter send", c.process_at_rank(d).send(&[*i, rank][..]))?;
        }
    }
    for (i, c) in inter.iter().rev() {
        for src in (0..c.remote_size()).rev() {
            let mut got = [0i64; 2];
            ok(
                "inter recv",
                c.process_at_rank(src).receive_into(&mut got[..]),
            )?;
            expect(
                got[0] == *i,
                &format!("intercomm #{i} got #{}'s message", got[0]),
            )?;
        }
    }
    for (i, c) in intra.iter().rev() {
        for src in (0..c.size()).rev().filter(|&d| d != c.rank()) {
            let mut got = [0i64; 2];
            ok("recv", c.process_at_rank(src).receive_into(&mut got[..]))?;
            expect(
                got[0] == *i,
                &format!("communicator #{i} got #{}'s message", got[0]),
            )?;
            let want = c.group().members()[src as usize];
            expect(
                wg.rank_of(want) == Some(got[1] as usize),
                &format!("communicator #{i}: the sender"),
            )?;
        }
        // The collective context too.
        let n = c.size() as i64;
        expect(
            sum_of_ranks(c, "allreduce")? == n * (n - 1) / 2,
            &format!("communicator #{i}: allreduce"),
        )?;
    }
    Ok(())
}

fn main() {
    let r = match std::env::args().nth(1).as_deref() {
        Some("sessions-only") => sessions_only(),
        Some("launcher-sets") => launcher_sets(),
        Some("stale-peer") => stale_peer(),
        Some("same-tag") => same_tag(),
        _ => run(),
    };
    match r {
        Ok(()) => println!("sessions_check: all passed"),
        Err(e) => {
            eprintln!("sessions_check: {e}");
            std::process::exit(1);
        }
    }
}
