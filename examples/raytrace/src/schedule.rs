//! The master's bookkeeping, independent of how workers are reached: which tile is waiting,
//! with which worker, or done; when to grow or shrink the worker set.
//!
//! Guarantees: every tile is handed out until someone returns it; a result is pasted once
//! (a late duplicate from a worker thought lost is recognised and dropped); the tiles of a
//! lost worker go back to the front of the queue.

use std::collections::{BTreeMap, VecDeque};

use crate::cli::Resize;
use crate::error::{Error, Result};
use crate::tile::Tile;

/// Whatever the transport uses to name a worker (an ibdyn rank, a thread number).
pub type WorkerId = u32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TileState {
    Pending,
    InFlight(WorkerId),
    Done(WorkerId),
}

#[derive(Debug, Clone)]
pub struct TileQueue {
    tiles: Vec<Tile>,
    state: Vec<TileState>,
    pending: VecDeque<u32>,
    done: usize,
    per_worker: BTreeMap<WorkerId, usize>,
}

/// What a returned tile meant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completion {
    /// First result for this tile: paste it.
    New,
    /// The tile was already done (re-issued after a worker was given up on): drop it.
    Duplicate,
}

impl TileQueue {
    /// Tiles must be numbered 0..n in order, as [`crate::tiles`] makes them.
    pub fn new(tiles: Vec<Tile>) -> TileQueue {
        let n = tiles.len();
        TileQueue {
            tiles,
            state: vec![TileState::Pending; n],
            pending: (0..n as u32).collect(),
            done: 0,
            per_worker: BTreeMap::new(),
        }
    }

    pub fn total(&self) -> usize {
        self.tiles.len()
    }

    pub fn done(&self) -> usize {
        self.done
    }

    pub fn is_complete(&self) -> bool {
        self.done == self.tiles.len()
    }

    /// Tiles handed out and not yet returned.
    pub fn in_flight(&self) -> usize {
        self.state
            .iter()
            .filter(|s| matches!(s, TileState::InFlight(_)))
            .count()
    }

    /// Tiles held by `worker`.
    pub fn held_by(&self, worker: WorkerId) -> Vec<Tile> {
        self.state
            .iter()
            .zip(&self.tiles)
            .filter(|(s, _)| **s == TileState::InFlight(worker))
            .map(|(_, t)| *t)
            .collect()
    }

    /// Next waiting tile, now in flight with `worker`; `None` when nothing waits.
    pub fn assign(&mut self, worker: WorkerId) -> Option<Tile> {
        while let Some(i) = self.pending.pop_front() {
            // A re-queued tile may have been completed meanwhile by its late first worker.
            if self.state[i as usize] == TileState::Pending {
                self.state[i as usize] = TileState::InFlight(worker);
                return Some(self.tiles[i as usize]);
            }
        }
        None
    }

    /// Record that `worker` returned `tile`. Errors when the tile is not one of ours.
    pub fn complete(&mut self, worker: WorkerId, tile: &Tile) -> Result<Completion> {
        let i = tile.index as usize;
        if self.tiles.get(i) != Some(tile) {
            return Err(Error::TileMessage(format!(
                "worker {worker} returned tile {} ({},{} {}x{}) which is not in this render",
                tile.index, tile.x, tile.y, tile.width, tile.height
            )));
        }
        if let TileState::Done(_) = self.state[i] {
            return Ok(Completion::Duplicate);
        }
        self.state[i] = TileState::Done(worker);
        self.done += 1;
        *self.per_worker.entry(worker).or_default() += 1;
        Ok(Completion::New)
    }

    /// Give up on `worker`: its tiles in flight go back to the front of the queue.
    pub fn requeue_worker(&mut self, worker: WorkerId) -> Vec<Tile> {
        let lost = self.held_by(worker);
        for t in lost.iter().rev() {
            self.state[t.index as usize] = TileState::Pending;
            self.pending.push_front(t.index);
        }
        lost
    }

    /// Tiles completed by each worker.
    pub fn per_worker(&self) -> &BTreeMap<WorkerId, usize> {
        &self.per_worker
    }
}

/// A change of the worker set that has come due.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ResizeEvent {
    Grow(u32),
    Shrink(u32),
}

/// The `--grow-at` / `--shrink-at` schedule; each entry fires once.
#[derive(Debug, Clone, Default)]
pub struct ResizePlan {
    events: Vec<(f64, ResizeEvent, bool)>,
}

impl ResizePlan {
    pub fn new(grow: &[Resize], shrink: &[Resize]) -> ResizePlan {
        let mut events: Vec<_> = grow
            .iter()
            .map(|r| (r.at, ResizeEvent::Grow(r.count), false))
            .chain(
                shrink
                    .iter()
                    .map(|r| (r.at, ResizeEvent::Shrink(r.count), false)),
            )
            .collect();
        events.sort_by(|a, b| a.0.total_cmp(&b.0));
        ResizePlan { events }
    }

    /// Events whose threshold `done / total` has reached, not yet returned before.
    pub fn due(&mut self, done: usize, total: usize) -> Vec<ResizeEvent> {
        let frac = if total == 0 {
            1.0
        } else {
            done as f64 / total as f64
        };
        let mut out = Vec::new();
        for (at, ev, fired) in &mut self.events {
            if !*fired && frac >= *at {
                *fired = true;
                out.push(*ev);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tile::tiles;

    #[test]
    fn every_tile_once_with_a_lost_worker() {
        let mut q = TileQueue::new(tiles(64, 64, 16));
        assert_eq!(q.total(), 16);
        let a = q.assign(1).unwrap();
        let b = q.assign(2).unwrap();
        let c = q.assign(2).unwrap();
        assert_eq!(q.in_flight(), 3);
        assert_eq!(q.complete(1, &a).unwrap(), Completion::New);
        // Worker 2 dies holding b and c: they come back first.
        assert_eq!(q.requeue_worker(2), vec![b, c]);
        assert_eq!(q.assign(1), Some(b));
        // The "dead" worker was only slow: its late result counts once.
        assert_eq!(q.complete(2, &c).unwrap(), Completion::New);
        assert_eq!(q.complete(1, &b).unwrap(), Completion::New);
        assert_eq!(q.complete(1, &b).unwrap(), Completion::Duplicate);
        // c is not handed out again.
        let mut rest = Vec::new();
        while let Some(t) = q.assign(3) {
            rest.push(t);
        }
        assert_eq!(rest.len(), 13);
        assert!(!rest.contains(&c));
        for t in &rest {
            q.complete(3, t).unwrap();
        }
        assert!(q.is_complete());
        assert_eq!(q.per_worker().get(&3), Some(&13));
        assert_eq!(q.per_worker().values().sum::<usize>(), 16);
    }

    #[test]
    fn foreign_tiles_are_rejected() {
        let mut q = TileQueue::new(tiles(32, 32, 16));
        let mut t = q.assign(1).unwrap();
        t.width = 3;
        assert!(q.complete(1, &t).is_err());
        t.index = 99;
        assert!(q.complete(1, &t).is_err());
    }

    #[test]
    fn resize_plan_fires_once_in_order() {
        let grow = [Resize { at: 0.25, count: 4 }];
        let shrink = [Resize { at: 0.6, count: 2 }];
        let mut p = ResizePlan::new(&grow, &shrink);
        assert!(p.due(10, 100).is_empty());
        assert_eq!(p.due(30, 100), vec![ResizeEvent::Grow(4)]);
        assert!(p.due(31, 100).is_empty());
        assert_eq!(p.due(100, 100), vec![ResizeEvent::Shrink(2)]);
        let mut both = ResizePlan::new(&grow, &shrink);
        assert_eq!(
            both.due(70, 100),
            vec![ResizeEvent::Grow(4), ResizeEvent::Shrink(2)]
        );
    }
}
