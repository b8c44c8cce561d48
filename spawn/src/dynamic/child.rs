//! The children's side of a spawn: at start-up, find the parent and build the parent
//! intercommunicator.

use super::spawn::root_pair;
use super::wire::{gpids, unhex, Hello, ParentInfo, Welcome, Wireup, PARENT_KEY};
use super::{bcast_vec, env_secs, DEFAULT_SPAWN_TIMEOUT};
use ibdyn_intercomm::{AddressCard, CommError, Communicator, Group, Result, Universe, ANY_TAG};
use ibdyn_pmi::PmiClient;
use std::time::{Duration, Instant};

/// If this job was spawned, connects to the parent job and records the parent
/// intercommunicator in `universe` (`universe.parent()`). Collective over the world.
/// Completes the start-up of a universe made with `Universe::init_deferred`: the child root
/// greets the parent root first, then reads the process manager's start-up answers.
/// Test knob: the spawned rank named in it fails its start-up once it has greeted the
/// parents (before the welcome is passed on), as a failed wait for the parent root would.
const FAIL_ATTACH_ENV: &str = "IBDYN_TEST_FAIL_ATTACH";

fn fail_attach_here(rank: i32) -> Result<()> {
    match std::env::var(FAIL_ATTACH_ENV) {
        Ok(v) if v.trim().parse::<i32>().ok() == Some(rank) => Err(CommError::InvalidArgument(
            format!("{FAIL_ATTACH_ENV}={rank}: rank {rank} fails its start-up on purpose"),
        )),
        _ => Ok(()),
    }
}

pub fn attach_parent(universe: &Universe) -> Result<()> {
    let world = universe.world();
    let rt = world.runtime();
    if !rt.with_pmi(|p| p.spawned()) || world.rank() != 0 {
        universe.finish_startup()?;
    }
    if !rt.with_pmi(|p| p.spawned()) {
        return Ok(());
    }
    let timeout = env_secs("IBDYN_SPAWN_TIMEOUT", DEFAULT_SPAWN_TIMEOUT);
    let welcome = if world.rank() == 0 {
        let info = rt.with_pmi(|p| p.get(PARENT_KEY))?;
        let info = ParentInfo::decode(&unhex(&info)?)?;
        let me = rt.me();
        let hello = Hello {
            spawn_id: info.spawn_id,
            job: me.job,
            size: world.size() as u32,
            root: rt.card(),
        }
        .encode();
        rt.learn_cards([info.root.clone()]);
        match info.wireup {
            Wireup::Ud => {
                let to = AddressCard::from_bytes(&info.root.fabric)?;
                rt.control_send(&to, &hello)?;
                universe.finish_startup()?;
                let id = info.spawn_id;
                rt.await_control(
                    timeout,
                    "the parent root's answer",
                    Some(&to),
                    |d| Welcome::is(d, id),
                    |_| Ok(()),
                )?
                .1
            }
            Wireup::Rc => {
                let pair = root_pair(&rt, info.spawn_id, info.root.gpid)?;
                pair.send(&hello, 0, 0)?;
                universe.finish_startup()?;
                let mut buf = Vec::new();
                recv_bounded(&pair, &mut buf, timeout, |_| Ok(()))?;
                buf
            }
        }
    } else {
        Vec::new()
    };
    fail_attach_here(world.rank())?;
    let welcome = Welcome::decode(&bcast_vec(&world, 0, welcome)?)?;
    let parents = Group::new(gpids(&welcome.group));
    rt.learn_cards(welcome.group);
    let parent = rt.make_communicator(welcome.ctx, world.group().clone(), Some(parents))?;
    universe.set_parent(parent);
    Ok(())
}

/// Receives one message of any size from rank 0 of `comm` within `timeout`, calling `check`
/// now and then to give up early (e.g. when the other side has died).
pub(crate) fn recv_bounded(
    comm: &Communicator,
    out: &mut Vec<u8>,
    timeout: Duration,
    mut check: impl FnMut(&mut PmiClient) -> Result<()>,
) -> Result<()> {
    let deadline = Instant::now() + timeout;
    let rt = comm.runtime();
    let mut last_check = Instant::now();
    loop {
        if let Some(st) = comm.iprobe(0, ANY_TAG)? {
            out.resize(st.count, 0);
            comm.recv(out, 0, st.tag)?;
            return Ok(());
        }
        if last_check.elapsed() > Duration::from_millis(20) {
            rt.with_pmi(&mut check)?;
            last_check = Instant::now();
        }
        if Instant::now() > deadline {
            return Err(CommError::Timeout {
                what: "the other root".into(),
                secs: timeout.as_secs(),
            });
        }
        std::thread::sleep(Duration::from_micros(50));
    }
}
