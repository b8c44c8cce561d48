//! Command line of the `raytrace` program.

use std::path::PathBuf;

use clap::Parser;

use crate::error::{Error, Result};
use crate::scene_file::{RenderOverrides, SceneSource};

#[derive(Parser, Debug, Clone)]
#[command(
    name = "raytrace",
    about = "Master/worker ray tracer for ibdyn (renders a glass chess board by default)"
)]
pub struct Args {
    /// Render in this process (the default when no other mode is given).
    #[arg(long)]
    pub local: bool,
    /// Master: spawn this many workers over ibdyn and hand them tiles.
    #[arg(long, value_name = "N")]
    pub workers: Option<u32>,
    /// Run as one of a static set of processes (`ibdyn run -n P raytrace --static`).
    #[arg(long = "static")]
    pub static_mode: bool,
    /// Master: have the node daemons keep this many workers started ahead, so that spawning
    /// one (at start and on --grow-at) skips its exec (spawn info key `ibdyn_prestart`).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub prestart: u32,
    /// Spawn more workers when this share of tiles is done, e.g. `25%:+4` (repeatable).
    #[arg(long = "grow-at", value_name = "P%:+N", value_parser = parse_grow)]
    pub grow_at: Vec<Resize>,
    /// Release workers when this share of tiles is done, e.g. `60%:-2` (repeatable).
    #[arg(long = "shrink-at", value_name = "P%:-N", value_parser = parse_shrink)]
    pub shrink_at: Vec<Resize>,
    /// Follow the job's resource changes (`ibdyn run -n P raytrace --elastic`, then
    /// `ibdyn resize --grow N` / `--shrink N`): rank 0 is the master, the rest workers.
    #[arg(long)]
    pub elastic: bool,
    /// Test hook for --elastic: when this share of tiles is done, wait for a resize, e.g.
    /// `30%` (repeatable).
    #[arg(long, hide = true, value_name = "P%", value_parser = parse_share)]
    pub await_resize_at: Vec<f64>,
    /// Scene file (TOML); the built-in chess board when absent.
    #[arg(long, value_name = "FILE")]
    pub scene: Option<PathBuf>,
    /// Image width in pixels (overrides the scene).
    #[arg(long)]
    pub width: Option<u32>,
    /// Image height in pixels (overrides the scene).
    #[arg(long)]
    pub height: Option<u32>,
    /// Samples per pixel (overrides the scene).
    #[arg(long)]
    pub spp: Option<u32>,
    /// Maximum reflection/refraction depth (overrides the scene).
    #[arg(long)]
    pub max_depth: Option<u32>,
    /// Tile side in pixels.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub tile: u32,
    /// Threads for --local (the image is the same for any number).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: u16,
    /// Output PNG file.
    #[arg(short = 'o', long, default_value = "raytrace.png")]
    pub output: PathBuf,
    /// No progress output.
    #[arg(short, long)]
    pub quiet: bool,
    /// Internal: run as a spawned worker.
    #[arg(long, hide = true)]
    pub worker: bool,
    /// Test hook: the worker dies after rendering this many tiles.
    #[arg(long, hide = true)]
    pub crash_after: Option<usize>,
    /// Test hook for the master: worker W (0-based spawn order) dies after K tiles, `W:K`.
    #[arg(long, hide = true, value_name = "W:K", value_parser = parse_crash)]
    pub crash_worker: Option<(usize, usize)>,
}

fn parse_crash(s: &str) -> std::result::Result<(usize, usize), String> {
    let (w, k) = s.split_once(':').ok_or("expected W:K")?;
    Ok((
        w.parse().map_err(|_| "bad worker number")?,
        k.parse().map_err(|_| "bad tile count")?,
    ))
}

/// A change of the worker set once `at` (0..=1) of the tiles are done.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Resize {
    pub at: f64,
    /// Workers to add (grow) or release (shrink).
    pub count: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    Local {
        threads: usize,
    },
    Master {
        workers: u32,
        grow: Vec<Resize>,
        shrink: Vec<Resize>,
    },
    Static,
    /// Follow the job's resource changes.
    Elastic {
        await_at: Vec<f64>,
    },
    /// A spawned worker.
    Worker,
}

impl Args {
    pub fn overrides(&self) -> RenderOverrides {
        RenderOverrides {
            width: self.width,
            height: self.height,
            spp: self.spp,
            max_depth: self.max_depth,
        }
    }

    pub fn scene_source(&self) -> Result<SceneSource> {
        match &self.scene {
            Some(path) => SceneSource::from_file(path, self.overrides()),
            None => Ok(SceneSource::default_chess(self.overrides())),
        }
    }

    /// Which way to run, checking that the options fit together.
    pub fn mode(&self) -> Result<Mode> {
        if self.worker {
            return Ok(Mode::Worker);
        }
        let chosen = [
            self.local,
            self.workers.is_some(),
            self.static_mode,
            self.elastic,
        ]
        .iter()
        .filter(|&&b| b)
        .count();
        if chosen > 1 {
            return Err(Error::Usage(
                "choose one of --local, --workers N, --static and --elastic".into(),
            ));
        }
        if !self.await_resize_at.is_empty() && !self.elastic {
            return Err(Error::Usage("--await-resize-at is for --elastic".into()));
        }
        let resizes = !self.grow_at.is_empty() || !self.shrink_at.is_empty();
        if resizes && self.workers.is_none() {
            return Err(Error::Usage(
                "--grow-at and --shrink-at need --workers N".into(),
            ));
        }
        if self.threads != 1 && (self.workers.is_some() || self.static_mode || self.elastic) {
            return Err(Error::Usage("--threads is for --local only".into()));
        }
        Ok(match self.workers {
            Some(0) => return Err(Error::Usage("--workers must be at least 1".into())),
            Some(n) => Mode::Master {
                workers: n,
                grow: self.grow_at.clone(),
                shrink: self.shrink_at.clone(),
            },
            None if self.static_mode => Mode::Static,
            None if self.elastic => Mode::Elastic {
                await_at: self.await_resize_at.clone(),
            },
            None => Mode::Local {
                threads: usize::from(self.threads),
            },
        })
    }
}

/// Parse `P%` as a share in 0..=1.
fn parse_share(s: &str) -> std::result::Result<f64, String> {
    let p: f64 = s
        .strip_suffix('%')
        .and_then(|p| p.parse().ok())
        .ok_or_else(|| format!("expected PERCENT% like 30%, got {s:?}"))?;
    if !(0.0..=100.0).contains(&p) {
        return Err(format!("{s}: the share is between 0% and 100%"));
    }
    Ok(p / 100.0)
}

/// Parse `P%:N` where `sign` is the only sign allowed before N.
fn parse_resize(s: &str, sign: char) -> std::result::Result<Resize, String> {
    let example = if sign == '+' { "25%:+4" } else { "60%:-2" };
    let bad = || format!("expected PERCENT%:{sign}COUNT like {example}, got {s:?}");
    let (pct, count) = s.split_once(':').ok_or_else(bad)?;
    let pct: f64 = pct
        .strip_suffix('%')
        .ok_or_else(bad)?
        .trim()
        .parse()
        .map_err(|_| bad())?;
    if !(0.0..=100.0).contains(&pct) {
        return Err(format!("percentage must be 0..=100, got {pct} in {s:?}"));
    }
    let count = count.trim();
    let count = count.strip_prefix(sign).unwrap_or(count);
    if !count.starts_with(|c: char| c.is_ascii_digit()) {
        return Err(bad());
    }
    let count: u32 = count.parse().map_err(|_| bad())?;
    if count == 0 {
        return Err(format!("count must be at least 1 in {s:?}"));
    }
    Ok(Resize {
        at: pct / 100.0,
        count,
    })
}

fn parse_grow(s: &str) -> std::result::Result<Resize, String> {
    parse_resize(s, '+')
}

fn parse_shrink(s: &str) -> std::result::Result<Resize, String> {
    parse_resize(s, '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> std::result::Result<Args, clap::Error> {
        Args::try_parse_from(std::iter::once("raytrace").chain(list.iter().copied()))
    }

    #[test]
    fn resize_specs() {
        assert_eq!(parse_grow("25%:+4"), Ok(Resize { at: 0.25, count: 4 }));
        assert_eq!(parse_grow("50%:3"), Ok(Resize { at: 0.5, count: 3 }));
        assert_eq!(parse_shrink("60%:-2"), Ok(Resize { at: 0.6, count: 2 }));
        assert!(parse_grow("25%:-4").is_err());
        assert!(parse_shrink("60%:+2").is_err());
        assert!(parse_grow("25:+4").is_err());
        assert!(parse_grow("125%:+4").is_err());
        assert!(parse_grow("25%:+0").is_err());
    }

    #[test]
    fn modes() {
        assert_eq!(
            args(&[]).unwrap().mode().unwrap(),
            Mode::Local { threads: 1 }
        );
        let a = args(&[
            "--workers",
            "4",
            "--grow-at",
            "25%:+4",
            "--shrink-at",
            "60%:-2",
        ])
        .unwrap();
        assert_eq!(
            a.mode().unwrap(),
            Mode::Master {
                workers: 4,
                grow: vec![Resize { at: 0.25, count: 4 }],
                shrink: vec![Resize { at: 0.6, count: 2 }],
            }
        );
        assert_eq!(args(&["--static"]).unwrap().mode().unwrap(), Mode::Static);
        assert!(args(&["--local", "--static"]).unwrap().mode().is_err());
        assert!(args(&["--grow-at", "25%:+4"]).unwrap().mode().is_err());
        assert!(args(&["--workers", "0"]).unwrap().mode().is_err());
        assert!(args(&["--tile", "0"]).is_err());
    }
}
