//! `ibdyn run --output-filename DIR`: each rank's stdout and stderr in files of their own,
//! `DIR/rank.R/stdout` and `DIR/rank.R/stderr` (`DIR/job.J/rank.R/...` for the ranks of jobs
//! it spawned), as Open MPI's mpirun lays them out under its job number; made at a rank's first
//! output, replacing a file of an earlier run.

use crate::error::LaunchError;
use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

pub(crate) struct RankFiles {
    dir: PathBuf,
    open: HashMap<(u32, u32, u32), File>,
}

impl RankFiles {
    /// Makes DIR (and its parents) if need be.
    pub(crate) fn create(dir: &Path) -> crate::Result<RankFiles> {
        let made = std::fs::create_dir_all(dir).and_then(|()| std::path::absolute(dir));
        Ok(RankFiles {
            dir: made.map_err(|e| {
                LaunchError::io(format!("make the output directory {}", dir.display()), e)
            })?,
            open: HashMap::new(),
        })
    }

    /// The file of stream `fd` (1 or 2) of `rank` of `job`; `submitted` is the job whose ranks
    /// go at the top.
    fn path(&self, job: u32, rank: u32, fd: u32, submitted: Option<u32>) -> PathBuf {
        let base = if Some(job) == submitted {
            self.dir.clone()
        } else {
            self.dir.join(format!("job.{job}"))
        };
        base.join(format!("rank.{rank}"))
            .join(if fd == 2 { "stderr" } else { "stdout" })
    }

    pub(crate) fn write(
        &mut self,
        job: u32,
        rank: u32,
        fd: u32,
        submitted: Option<u32>,
        data: &[u8],
    ) -> std::io::Result<()> {
        let key = (job, rank, fd);
        if !self.open.contains_key(&key) {
            let path = self.path(job, rank, fd, submitted);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            let f = File::create(&path)
                .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
            self.open.insert(key, f);
        }
        match self.open.get_mut(&key) {
            Some(f) => f.write_all(data),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rank_and_stream_has_its_file_spawned_jobs_below_theirs() {
        let dir = std::env::temp_dir().join(format!("ibdyn-rank-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut f = RankFiles::create(&dir.join("out")).unwrap();
        f.write(7, 0, 1, Some(7), b"a\n").unwrap();
        f.write(7, 0, 1, Some(7), b"b\n").unwrap();
        f.write(7, 1, 2, Some(7), b"oops\n").unwrap();
        f.write(9, 0, 1, Some(7), b"child\n").unwrap();
        drop(f);
        let read = |p: &str| std::fs::read_to_string(dir.join("out").join(p)).unwrap();
        assert_eq!(read("rank.0/stdout"), "a\nb\n");
        assert_eq!(read("rank.1/stderr"), "oops\n");
        assert_eq!(read("job.9/rank.0/stdout"), "child\n");
        assert!(!dir.join("out/rank.1/stdout").exists());
        // A second run replaces the files of the first.
        let mut f = RankFiles::create(&dir.join("out")).unwrap();
        f.write(8, 0, 1, Some(8), b"new\n").unwrap();
        drop(f);
        assert_eq!(read("rank.0/stdout"), "new\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
