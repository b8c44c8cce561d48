//! `ibdyn run --pset NAME=RANKS`: process sets named on the command line reach the ranks as
//! one job-level key (`ibdyn_pmi::psets::PSETS_KEY`), checked here so a mistake fails at once.

mod held;
mod registry;
mod resize;
mod serve;

pub(crate) use registry::PsetRegistry;
pub use resize::{list, resize, Resize};

use crate::LaunchError;
use ibdyn_pmi::psets::{parse_defs, PSETS_KEY};

/// The job-level keys for `--pset` definitions of a job of `nprocs` ranks (none without).
pub fn preput(defs: &[String], nprocs: u32) -> Result<Vec<(String, String)>, LaunchError> {
    if defs.is_empty() {
        return Ok(Vec::new());
    }
    if let Some(d) = defs.iter().find(|d| d.contains(';')) {
        return Err(LaunchError::Usage(format!(
            "--pset {d}: one set per --pset (repeat the option for more)"
        )));
    }
    let text = defs.join(";");
    parse_defs(&text, nprocs).map_err(|e| LaunchError::Usage(format!("--pset: {e}")))?;
    Ok(vec![(PSETS_KEY.to_string(), text)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_become_one_key_and_mistakes_are_refused() {
        assert!(preput(&[], 4).unwrap().is_empty());
        let p = preput(&["app://even=0,2".into(), "app://odd=1,3".into()], 4).unwrap();
        assert_eq!(
            p,
            vec![(
                PSETS_KEY.to_string(),
                "app://even=0,2;app://odd=1,3".to_string()
            )]
        );
        for (defs, why) in [
            (vec!["app://a=0", "app://a=1"], "twice"),
            (vec!["app://a=4"], "out of range"),
            (vec!["mpi://WORLD=0"], "reserved"),
            (vec!["app://a=0;app://b=1"], "one set per --pset"),
            (vec!["nameonly"], "NAME=RANKS"),
        ] {
            let defs: Vec<String> = defs.into_iter().map(String::from).collect();
            let e = preput(&defs, 4).unwrap_err().to_string();
            assert!(e.contains(why), "{defs:?}: {e}");
        }
    }
}
