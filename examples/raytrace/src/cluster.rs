//! Master/worker over ibdyn. The master hands tiles from a [`TileQueue`] to workers (two in
//! flight each, so a worker never waits), pastes the answers, grows the worker set by
//! spawning and shrinks it by releasing workers, and re-queues the tiles of a worker that
//! dies. Workers are either spawned (each one a job of its own, so a released worker can leave
//! at once) or the other ranks of a static job.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::{Duration, Instant};

use ibdyn::traits::*;
use ibdyn::{InterCommunicator, IntraCommunicator, Status, Universe, ANY_TAG};

use crate::error::{Error, Result};
use crate::image::Image;
use crate::local::PIPELINE;
use crate::render::render_tile_message;
use crate::scene_file::SceneSource;
use crate::schedule::{Completion, ResizeEvent, ResizePlan, TileQueue, WorkerId};
use crate::tile::{tiles, TileResult};

/// Message tags between master and workers.
const TAG_SCENE: i32 = 1;
const TAG_TILE: i32 = 2;
const TAG_RESULT: i32 = 3;
const TAG_STOP: i32 = 4;

/// How often the master asks the process manager whether a spawned worker has died.
const HEALTH_EVERY: Duration = Duration::from_millis(100);

/// How the master reaches a worker: the world (static workers) or the intercommunicator to
/// the worker's own job (spawned workers).
enum Link {
    World(IntraCommunicator),
    Spawned(InterCommunicator),
}

impl Link {
    fn send(&self, buf: &[u8], rank: i32, tag: i32) -> ibdyn::Result<()> {
        match self {
            Link::World(c) => c.send(buf, rank, tag),
            Link::Spawned(c) => c.send(buf, rank, tag),
        }
    }
    fn recv(&self, buf: &mut [u8], rank: i32, tag: i32) -> ibdyn::Result<Status> {
        match self {
            Link::World(c) => c.recv(buf, rank, tag),
            Link::Spawned(c) => c.recv(buf, rank, tag),
        }
    }
    fn iprobe(&self, rank: i32, tag: i32) -> ibdyn::Result<Option<Status>> {
        match self {
            Link::World(c) => c.iprobe(rank, tag),
            Link::Spawned(c) => c.iprobe(rank, tag),
        }
    }
}

/// One worker as the master sees it: where it is, and what it is doing.
struct Worker {
    id: WorkerId,
    comm: Link,
    rank: i32,
    /// The worker's job, for spawned workers (to ask the process manager if it died).
    job: Option<u32>,
    /// The worker's process, for elastic workers (a shrink names the ones to release).
    gpid: Option<ibdyn::Gpid>,
    releasing: bool,
    gone: bool,
}

/// What the master did, for the summary.
pub struct MasterReport {
    pub image: Image,
    pub per_worker: BTreeMap<WorkerId, usize>,
    pub lost: Vec<WorkerId>,
    pub spawned: usize,
    pub released: usize,
    pub seconds: f64,
}

/// How the master gets its workers.
pub enum Workers {
    /// Spawn this many (each one a job of its own), growing and shrinking as planned.
    Spawn {
        count: u32,
        grow: Vec<crate::cli::Resize>,
        shrink: Vec<crate::cli::Resize>,
        extra_args: Vec<Vec<String>>,
        /// Copies of the worker the node daemons keep started ahead (`ibdyn_prestart`).
        prestart: u32,
    },
    /// Ranks 1.. of the world.
    Static,
    /// Follow the job's resource changes (`--elastic`): the first workers, then those the
    /// changes bring.
    Elastic(
        Box<crate::elastic::Elastic>,
        Vec<(ibdyn::Gpid, IntraCommunicator)>,
    ),
}

/// Runs the master: renders `source` with `workers`, printing progress unless `quiet`.
pub fn master(
    universe: Option<&Universe>,
    source: &SceneSource,
    tile: u32,
    workers: Workers,
    quiet: bool,
) -> Result<MasterReport> {
    let t0 = Instant::now();
    let scene = source.build()?;
    let s = scene.settings;
    let scene_bytes = source.to_bytes();
    let mut queue = TileQueue::new(tiles(s.width, s.height, tile));
    let mut image = Image::new(s.width, s.height);
    // The spawned and static modes run under MPI_Init; the elastic one under a session.
    let world = || {
        universe
            .map(Universe::world)
            .ok_or_else(|| Error::Usage("this mode needs ibdyn::initialize".into()))
    };
    let mut pool: Vec<Worker> = Vec::new();
    let mut lost = Vec::new();
    let mut spawned = 0usize;
    let mut released = 0usize;
    let mut plan = ResizePlan::new(&[], &[]);
    let mut extra: Vec<Vec<String>> = Vec::new();
    let mut keep = 0;
    let mut elastic: Option<Box<crate::elastic::Elastic>> = None;
    let add = |pool: &mut Vec<Worker>, comm: Link, rank: i32, job: Option<u32>| -> Result<()> {
        let id = pool.len() as WorkerId;
        comm.send(&scene_bytes, rank, TAG_SCENE)?;
        pool.push(Worker {
            id,
            comm,
            rank,
            job,
            gpid: None,
            releasing: false,
            gone: false,
        });
        Ok(())
    };
    match workers {
        Workers::Static => {
            let world = world()?;
            for r in 1..world.size() {
                add(&mut pool, Link::World(world.clone()), r, None)?;
            }
        }
        Workers::Elastic(el, first) => {
            elastic = Some(el);
            for (g, comm) in first {
                add(&mut pool, Link::World(comm), 1, None)?;
                pool.last_mut().expect("just added").gpid = Some(g);
            }
        }
        Workers::Spawn {
            count,
            grow,
            shrink,
            extra_args,
            prestart,
        } => {
            plan = ResizePlan::new(&grow, &shrink);
            extra = extra_args;
            keep = prestart;
            for _ in 0..count {
                let args = extra.get(spawned).cloned().unwrap_or_default();
                let (comm, job) = spawn_worker(&world()?, args, keep)?;
                spawned += 1;
                add(&mut pool, Link::Spawned(comm), 0, Some(job))?;
            }
        }
    }
    if pool.is_empty() {
        return Err(Error::Usage(
            "no workers: use --workers N, or run --static with more than one process".into(),
        ));
    }
    let feed = |w: &Worker, queue: &mut TileQueue| -> Result<bool> {
        match queue.assign(w.id) {
            Some(t) => {
                w.comm.send(&t.to_bytes(), w.rank, TAG_TILE)?;
                Ok(true)
            }
            None => Ok(false),
        }
    };
    for w in &pool {
        for _ in 0..PIPELINE {
            feed(w, &mut queue)?;
        }
    }
    let mut last_health = Instant::now();
    let mut last_shown = usize::MAX;
    while !queue.is_complete() {
        let mut got_any = false;
        #[allow(clippy::needless_range_loop)]
        // feed() borrows the pool entry; indices keep it simple
        for i in 0..pool.len() {
            if pool[i].gone {
                continue;
            }
            let Some(st) = pool[i].comm.iprobe(pool[i].rank, TAG_RESULT)? else {
                continue;
            };
            got_any = true;
            let mut buf = vec![0u8; st.count];
            pool[i].comm.recv(&mut buf, pool[i].rank, TAG_RESULT)?;
            let result = TileResult::from_bytes(&buf)?;
            if queue.complete(pool[i].id, &result.tile)? == Completion::New {
                image.paste(&result.tile, &result.rgb)?;
            }
            if !pool[i].releasing {
                feed(&pool[i], &mut queue)?;
            } else if queue.held_by(pool[i].id).is_empty() {
                // A released worker has finished its last tile: let it go.
                pool[i].comm.send(&[], pool[i].rank, TAG_STOP)?;
                pool[i].gone = true;
                released += 1;
            }
        }
        if let Some(el) = elastic.as_mut() {
            let share = queue.done() as f64 / queue.total() as f64;
            for ev in el.poll(share, quiet)? {
                match ev {
                    crate::elastic::Event::Join(g, comm) => {
                        add(&mut pool, Link::World(comm), 1, None)?;
                        let w = pool.last_mut().expect("just added");
                        w.gpid = Some(g);
                        for _ in 0..PIPELINE {
                            feed(w, &mut queue)?;
                        }
                    }
                    crate::elastic::Event::Retire(g) => {
                        let Some(w) = pool.iter_mut().find(|w| w.gpid == Some(g)) else {
                            continue;
                        };
                        w.releasing = true;
                        if queue.held_by(w.id).is_empty() && !w.gone {
                            w.comm.send(&[], w.rank, TAG_STOP)?;
                            w.gone = true;
                            released += 1;
                        }
                    }
                }
            }
            el.settle(|g| pool.iter().any(|w| w.gpid == Some(g) && w.gone))?;
        }
        for ev in plan.due(queue.done(), queue.total()) {
            match ev {
                ResizeEvent::Grow(n) => {
                    for _ in 0..n {
                        let args = extra.get(spawned).cloned().unwrap_or_default();
                        let (comm, job) = spawn_worker(&world()?, args, keep)?;
                        spawned += 1;
                        add(&mut pool, Link::Spawned(comm), 0, Some(job))?;
                        let w = pool.last().expect("just added");
                        for _ in 0..PIPELINE {
                            feed(w, &mut queue)?;
                        }
                    }
                }
                ResizeEvent::Shrink(n) => {
                    // Release the newest active workers; keep at least one.
                    let active: Vec<usize> = (0..pool.len())
                        .filter(|&i| !pool[i].gone && !pool[i].releasing)
                        .collect();
                    for &i in active.iter().rev().take(n as usize) {
                        if pool.iter().filter(|w| !w.gone && !w.releasing).count() <= 1 {
                            break;
                        }
                        pool[i].releasing = true;
                        if queue.held_by(pool[i].id).is_empty() {
                            pool[i].comm.send(&[], pool[i].rank, TAG_STOP)?;
                            pool[i].gone = true;
                            released += 1;
                        }
                    }
                }
            }
        }
        if last_health.elapsed() > HEALTH_EVERY {
            last_health = Instant::now();
            for i in 0..pool.len() {
                let Some(universe) = universe else { break };
                if pool[i].gone || !worker_died(universe, &pool[i])? {
                    continue;
                }
                pool[i].gone = true;
                lost.push(pool[i].id);
                let back = queue.requeue_worker(pool[i].id);
                eprintln!(
                    "raytrace: worker {} died; its {} tile(s) go to the others",
                    pool[i].id,
                    back.len()
                );
                // Hand the re-queued tiles to the workers still rendering.
                for w in pool.iter().filter(|w| !w.gone && !w.releasing) {
                    feed(w, &mut queue)?;
                }
            }
            if pool.iter().all(|w| w.gone) && !queue.is_complete() {
                return Err(Error::WorkersGone {
                    missing: queue.total() - queue.done(),
                    total: queue.total(),
                });
            }
        }
        if !quiet && queue.done() * 20 / queue.total() != last_shown {
            last_shown = queue.done() * 20 / queue.total();
            let active = pool.iter().filter(|w| !w.gone).count();
            eprintln!(
                "tiles {}/{} ({:.0}%), workers active {active}",
                queue.done(),
                queue.total(),
                100.0 * queue.done() as f64 / queue.total() as f64
            );
        }
        if !got_any {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
    for w in pool.iter().filter(|w| !w.gone) {
        w.comm.send(&[], w.rank, TAG_STOP)?;
    }
    Ok(MasterReport {
        image,
        per_worker: queue.per_worker().clone(),
        lost,
        spawned,
        released,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

/// Spawns one worker (a job of its own) running this program with `--worker`.
fn spawn_worker(
    world: &IntraCommunicator,
    extra: Vec<String>,
    prestart: u32,
) -> Result<(InterCommunicator, u32)> {
    let exe = std::env::current_exe()
        .map_err(|e| Error::Usage(format!("cannot find this program: {e}")))?;
    let mut cmd = Command::new(exe);
    cmd.arg("--worker").args(extra);
    let mut opts = ibdyn::SpawnOptions::default();
    if prestart > 0 {
        opts.info
            .push(("ibdyn_prestart".into(), prestart.to_string()));
    }
    let ic = world.process_at_rank(0).spawn_with(&cmd, 1, &opts)?;
    let job = ic.gpid_of(0)?.job;
    Ok((ic, job))
}

/// Whether a spawned worker's process has exited (released workers are marked gone before).
fn worker_died(universe: &Universe, w: &Worker) -> Result<bool> {
    let Some(job) = w.job else { return Ok(false) };
    let st = universe
        .with_pmi(|p| p.job_status(job))
        .map_err(ibdyn::CommError::from)?;
    Ok(!st.exited.is_empty())
}

/// A worker: receives the scene, renders tiles until told to stop. `crash_after` (tests)
/// makes it die abruptly after that many tiles. `comm` is the world (static workers) or the
/// parent intercommunicator (spawned ones).
pub fn worker<C: Communicator>(
    comm: &C,
    master_rank: i32,
    crash_after: Option<usize>,
) -> Result<usize> {
    let (scene_bytes, _) = comm.recv_vec(master_rank, TAG_SCENE)?;
    let scene = SceneSource::from_bytes(&scene_bytes)?.build()?;
    let mut done = 0;
    loop {
        let (msg, st) = comm.recv_vec(master_rank, ANY_TAG)?;
        match st.tag {
            TAG_STOP => return Ok(done),
            TAG_TILE => {
                if crash_after == Some(done) {
                    std::process::abort();
                }
                let answer = render_tile_message(&scene, &msg)?;
                comm.send(&answer, master_rank, TAG_RESULT)?;
                done += 1;
            }
            other => {
                return Err(Error::Usage(format!(
                    "worker: unexpected message tag {other}"
                )))
            }
        }
    }
}
