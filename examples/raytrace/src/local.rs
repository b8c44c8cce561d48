//! In-process master/worker render: threads stand in for worker processes and talk in the
//! same byte messages ([`Tile`] out, [`TileResult`] back) that travel over ibdyn, driven by
//! the same [`TileQueue`]. A thread that ends without answering counts as a crashed worker.

use std::collections::BTreeMap;
use std::time::Duration;

use crossbeam_channel::{bounded, unbounded, Receiver, Select, Sender};

use crate::error::{Error, Result};
use crate::image::Image;
use crate::render::render_tile_message;
use crate::scene::Scene;
use crate::schedule::{Completion, TileQueue, WorkerId};
use crate::tile::{tiles, TileResult};

/// Tiles kept in flight per worker, so a worker never waits for the master's next message.
pub const PIPELINE: usize = 2;

/// Longest wait for any worker's answer before the master gives up.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(3600);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalReport {
    pub image: Image,
    /// Tiles completed by each worker.
    pub per_worker: BTreeMap<WorkerId, usize>,
    /// Workers that stopped answering; their tiles were rendered by others.
    pub lost: Vec<WorkerId>,
}

/// The master's ends of a worker thread's channels: tiles out (`None` = stop), answers in.
type WorkerLink = (WorkerId, Sender<Option<Vec<u8>>>, Receiver<Vec<u8>>);

/// Test hook: worker `worker` ends silently after answering `after` tiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InjectedCrash {
    pub worker: WorkerId,
    pub after: usize,
}

/// Render the whole image in this process with `threads` worker threads and tiles of
/// `tile_size`. `on_tile(done, total)` is called as tiles arrive.
pub fn render_local(
    scene: &Scene,
    tile_size: u32,
    threads: usize,
    on_tile: &(dyn Fn(usize, usize) + Sync),
) -> Result<Image> {
    render_local_report(scene, tile_size, threads, None, on_tile).map(|r| r.image)
}

/// [`render_local`] with the per-worker summary, optionally crashing one worker.
pub fn render_local_report(
    scene: &Scene,
    tile_size: u32,
    threads: usize,
    crash: Option<InjectedCrash>,
    on_tile: &(dyn Fn(usize, usize) + Sync),
) -> Result<LocalReport> {
    let s = &scene.settings;
    let mut queue = TileQueue::new(tiles(s.width, s.height, tile_size));
    let mut image = Image::new(s.width, s.height);
    let mut lost = Vec::new();
    std::thread::scope(|scope| -> Result<()> {
        // Per worker: a channel for tiles (None = stop) and one for answers; a dropped
        // answer channel is how the master learns the worker is gone.
        let mut workers: Vec<WorkerLink> = Vec::new();
        for id in 0..threads.max(1) as WorkerId {
            let (tile_tx, tile_rx) = unbounded::<Option<Vec<u8>>>();
            let (res_tx, res_rx) = bounded::<Vec<u8>>(PIPELINE);
            let crash_after = crash.filter(|c| c.worker == id).map(|c| c.after);
            scope.spawn(move || worker_loop(scene, tile_rx, res_tx, crash_after));
            workers.push((id, tile_tx, res_rx));
        }
        let mut idle: Vec<usize> = Vec::new();
        for (slot, (id, tx, _)) in workers.iter().enumerate() {
            for _ in 0..PIPELINE {
                match queue.assign(*id) {
                    Some(t) => {
                        let _ = tx.send(Some(t.to_bytes().to_vec()));
                    }
                    None => idle.push(slot),
                }
            }
        }
        let mut alive: Vec<bool> = vec![true; workers.len()];
        while !queue.is_complete() {
            let active: Vec<usize> = (0..workers.len()).filter(|&i| alive[i]).collect();
            if active.is_empty() {
                return Err(Error::WorkersGone {
                    missing: queue.total() - queue.done(),
                    total: queue.total(),
                });
            }
            let mut sel = Select::new();
            for &i in &active {
                sel.recv(&workers[i].2);
            }
            let op = sel
                .select_timeout(ANSWER_TIMEOUT)
                .map_err(|_| Error::NoAnswer(ANSWER_TIMEOUT))?;
            let slot = active[op.index()];
            let (id, ref tx, ref rx) = workers[slot];
            match op.recv(rx) {
                Ok(bytes) => {
                    let result = TileResult::from_bytes(&bytes)?;
                    if queue.complete(id, &result.tile)? == Completion::New {
                        image.paste(&result.tile, &result.rgb)?;
                        on_tile(queue.done(), queue.total());
                    }
                    match queue.assign(id) {
                        Some(t) => {
                            let _ = tx.send(Some(t.to_bytes().to_vec()));
                        }
                        None => idle.push(slot),
                    }
                }
                Err(_) => {
                    alive[slot] = false;
                    lost.push(id);
                    let back = queue.requeue_worker(id);
                    tracing::warn!(
                        worker = id,
                        tiles = back.len(),
                        "worker lost; re-queued its tiles"
                    );
                    // Hand re-queued tiles to workers that ran out of work.
                    idle.retain(|&i| alive[i]);
                    while let Some(&i) = idle.last() {
                        let Some(t) = queue.assign(workers[i].0) else {
                            break;
                        };
                        idle.pop();
                        let _ = workers[i].1.send(Some(t.to_bytes().to_vec()));
                    }
                }
            }
        }
        for (_, tx, _) in &workers {
            let _ = tx.send(None);
        }
        Ok(())
    })?;
    Ok(LocalReport {
        image,
        per_worker: queue.per_worker().clone(),
        lost,
    })
}

fn worker_loop(
    scene: &Scene,
    tiles_in: Receiver<Option<Vec<u8>>>,
    results: Sender<Vec<u8>>,
    crash_after: Option<usize>,
) {
    let mut answered = 0;
    while let Ok(Some(msg)) = tiles_in.recv() {
        if crash_after == Some(answered) {
            return;
        }
        match render_tile_message(scene, &msg) {
            Ok(answer) => {
                if results.send(answer).is_err() {
                    return;
                }
                answered += 1;
            }
            Err(e) => {
                tracing::error!("worker: {e}");
                return;
            }
        }
    }
}
