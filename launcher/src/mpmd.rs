//! Several applications in one job (MPMD), as mpiexec takes them:
//! `ibdyn run -n 1 ./master : -n 4 ./worker ARGS`. They share one MPI_COMM_WORLD, ranks
//! numbered across the applications in order; each rank's `MPI_APPNUM` (`IBDYN_APPNUM`) is
//! the index of its application.

/// One application of the command line: `-n N PROGRAM ARGS`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppLine {
    pub nprocs: u32,
    pub program: String,
    pub args: Vec<String>,
}

use ibdyn_pmi::SpawnCommand;

/// The word that separates applications.
const SEPARATOR: &str = ":";

/// Splits the words after `ibdyn run`'s options into applications. The first application's
/// process count is `first_nprocs` (`-n` before the program); each later one may start with
/// its own `-n N` (also `-np N`, `--np N`; 1 when absent).
pub fn split(first_nprocs: u32, words: Vec<String>) -> Result<Vec<AppLine>, String> {
    let mut apps = Vec::new();
    let mut segments = words.split(|w| w == SEPARATOR).enumerate();
    let (_, first) = segments.next().unwrap_or((0, &[]));
    apps.push(app(first_nprocs, first, 1)?);
    for (i, seg) in segments {
        let (nprocs, rest) = match seg {
            [flag, n, rest @ ..] if matches!(flag.as_str(), "-n" | "-np" | "--np") => {
                let n = n.parse::<u32>().map_err(|_| {
                    format!("application {}: {flag} needs a count, not {n:?}", i + 1)
                })?;
                (n, rest)
            }
            _ => (1, seg),
        };
        apps.push(app(nprocs, rest, i + 1)?);
    }
    Ok(apps)
}

fn app(nprocs: u32, words: &[String], index: usize) -> Result<AppLine, String> {
    let Some((program, args)) = words.split_first() else {
        return Err(format!(
            "application {index} has no program (applications are separated by ' : ', \
             each `-n N PROGRAM ARGS`)"
        ));
    };
    if program.starts_with('-') {
        return Err(format!(
            "unknown option {program:?} in application {index} (the program comes after \
             the options; after ' : ' only -n N; `ibdyn run --help` lists them)"
        ));
    }
    if nprocs == 0 {
        return Err(format!("application {index}: -n must be at least 1"));
    }
    Ok(AppLine {
        nprocs,
        program: program.clone(),
        args: args.to_vec(),
    })
}

/// The total process count of the job.
pub fn total(apps: &[AppLine]) -> Result<u32, String> {
    apps.iter()
        .try_fold(0u32, |t, a| t.checked_add(a.nprocs))
        .ok_or_else(|| "too many processes in all".to_string())
}

/// The job's commands: each application's program found (as execvp would) and checked, with
/// the info keys every command gets (`ibdyn_prestart`). A program built with Open MPI is
/// warned about (`foreign_mpi`).
pub(crate) fn spawn_commands(
    apps: &[AppLine],
    info: &[(String, String)],
) -> crate::Result<Vec<SpawnCommand>> {
    apps.iter()
        .map(|a| {
            let path = crate::run::resolve_program(&a.program)?;
            if let Some(w) = crate::foreign_mpi::warning(&a.program, &path) {
                say!("ibdyn run: warning: {w}");
            }
            Ok(SpawnCommand {
                program: path.display().to_string(),
                args: a.args.clone(),
                nprocs: a.nprocs,
                info: info.to_vec(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn line(nprocs: u32, program: &str, args: &[&str]) -> AppLine {
        AppLine {
            nprocs,
            program: program.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
        }
    }

    #[test]
    fn one_application_is_the_program_and_its_arguments() {
        assert_eq!(
            split(4, words("prog -x 1")).unwrap(),
            [line(4, "prog", &["-x", "1"])]
        );
    }

    #[test]
    fn applications_are_separated_by_a_colon_each_with_its_count() {
        let apps = split(
            1,
            words("master a : -n 3 worker -v : --np 2 w2 : -np 5 w3 : tail"),
        )
        .unwrap();
        assert_eq!(
            apps,
            [
                line(1, "master", &["a"]),
                line(3, "worker", &["-v"]),
                line(2, "w2", &[]),
                line(5, "w3", &[]),
                line(1, "tail", &[]),
            ]
        );
        assert_eq!(total(&apps), Ok(12));
        // A colon inside a word is the program's.
        assert_eq!(
            split(1, words("prog a:b")).unwrap(),
            [line(1, "prog", &["a:b"])]
        );
    }

    #[test]
    fn a_bad_application_is_named() {
        for (line, why) in [
            ("a : ", "application 2 has no program"),
            ("a : : b", "application 2 has no program"),
            (": b", "application 1 has no program"),
            ("a : -n x b", "application 2: -n needs a count, not \"x\""),
            ("a : -n 0 b", "application 2: -n must be at least 1"),
            ("a : -n", "unknown option \"-n\" in application 2"),
            (
                "a : --map-by node b",
                "unknown option \"--map-by\" in application 2",
            ),
        ] {
            let e = split(1, words(line)).unwrap_err();
            assert!(e.contains(why), "{line:?}: {e}");
        }
        assert!(total(&[line(u32::MAX, "a", &[]), line(1, "b", &[])]).is_err());
    }
}
