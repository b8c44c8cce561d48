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
        let (nprocs, rest) = count_of(seg, i + 1)?;
        apps.push(app(nprocs, rest, i + 1)?);
    }
    Ok(apps)
}

/// The applications of an application file (`ibdyn run --app FILE`, Open MPI's appfile,
/// Hydra's `-configfile`): one a line, `-n N PROGRAM ARGS` quoted as a shell would, `#`
/// comments and blank lines skipped; a line may also hold several separated by ` : `.
pub fn from_file(text: &str) -> Result<Vec<AppLine>, String> {
    let mut apps = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let words =
            shlex::split(line).ok_or_else(|| format!("line {}: unbalanced quotes", n + 1))?;
        for seg in words.split(|w| w == SEPARATOR) {
            let (nprocs, rest) = count_of(seg, apps.len() + 1)?;
            let a =
                app(nprocs, rest, apps.len() + 1).map_err(|e| format!("line {}: {e}", n + 1))?;
            apps.push(a);
        }
    }
    if apps.is_empty() {
        return Err("no application in it (one a line: -n N PROGRAM ARGS)".into());
    }
    Ok(apps)
}

/// The `-n N` (also `-np N`, `--np N`; 1 when absent) at the head of an application's words.
fn count_of(seg: &[String], index: usize) -> Result<(u32, &[String]), String> {
    match seg {
        [flag, n, rest @ ..] if matches!(flag.as_str(), "-n" | "-np" | "--np") => {
            let n = n
                .parse::<u32>()
                .map_err(|_| format!("application {index}: {flag} needs a count, not {n:?}"))?;
            Ok((n, rest))
        }
        _ => Ok((1, seg)),
    }
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
    fn an_application_file_has_one_a_line_quoted_as_a_shell_would() {
        let text = "# master and workers\n-n 1 ./master 'in put.dat'\n\n  -np 4 ./worker -v\n\
                    python3 -c \"print(1)\" : --np 2 ./other\n";
        assert_eq!(
            from_file(text),
            Ok(vec![
                line(1, "./master", &["in put.dat"]),
                line(4, "./worker", &["-v"]),
                line(1, "python3", &["-c", "print(1)"]),
                line(2, "./other", &[]),
            ])
        );
        for (bad, why) in [
            ("", "no application"),
            ("# only\n", "no application"),
            ("-n 2 ./a 'open\n", "line 1: unbalanced quotes"),
            ("./a\n-n x ./b\n", "application 2: -n needs a count"),
            ("./a\n--nodes 2 ./b\n", "line 2: unknown option \"--nodes\""),
            ("-n 0 ./a\n", "line 1: application 1: -n must be at least 1"),
        ] {
            let err = from_file(bad).unwrap_err();
            assert!(err.contains(why), "{bad:?}: {err}");
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
