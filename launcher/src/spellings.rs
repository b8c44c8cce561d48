//! What mpirun and mpiexec users type that clap alone would not take: `ibdyn run -np 4`,
//! `-host a,b`, `-wdir DIR`, `-genv NAME VALUE`, rewritten among `run`'s options before clap
//! reads them.

use std::ffi::OsString;

/// Single-dash long options of mpiexec (the MPI standard names `-n`, `-host` and `-wdir`),
/// MPICH's Hydra and Open MPI's mpirun, and the options of ours they are. Clap would read
/// `-np` as `-n p`, or take any of them for the program.
const SPELLINGS: &[(&str, &str)] = &[
    ("-np", "--np"),
    ("-ppn", "--ppn"),
    ("-npernode", "--npernode"),
    ("-host", "--hosts"),
    ("-hosts", "--hosts"),
    ("-H", "--hosts"),
    ("-wdir", "--wdir"),
    ("-f", "--hostfile"),
    ("-hostfile", "--hostfile"),
    ("-machinefile", "--hostfile"),
    ("--machinefile", "--hostfile"),
    ("-configfile", "--app"),
];

/// `ibdyn run -np 4 -host a,b -genv A 1 ...`, as mpirun and mpiexec take them: the
/// `SPELLINGS` among `run`'s options (before the program) become ours, and `-genv NAME
/// VALUE` becomes `-x NAME=VALUE`. (Hydra's `-env` is per application: not taken.)
pub(crate) fn spelt_out(mut args: Vec<OsString>, run: &clap::Command) -> Vec<OsString> {
    // `ibdyn` has no options of its own: the subcommand is the first word.
    if args.get(1).is_none_or(|a| a != "run") {
        return args;
    }
    let takes_value = |word: &str| {
        run.get_arguments().any(|a| {
            let named = match word.strip_prefix("--") {
                Some(long) => {
                    a.get_long() == Some(long)
                        || a.get_all_aliases().is_some_and(|v| v.contains(&long))
                }
                None => word.len() == 2 && a.get_short() == word.chars().nth(1),
            };
            named && a.get_action().takes_values()
        })
    };
    let mut i = 2;
    while i < args.len() {
        let Some(word) = args[i].to_str().map(str::to_string) else {
            break;
        };
        if let Some((_, ours)) = SPELLINGS.iter().find(|(theirs, _)| *theirs == word) {
            args[i] = ours.into();
            i += 2;
        } else if let Some((ours, taken)) = placement_words(&word, args.get(i + 1)) {
            let n = ours.len();
            args.splice(i..i + taken, ours.into_iter().map(OsString::from));
            i += n;
        } else if word == "-genv" && i + 2 < args.len() {
            let mut setting = args.remove(i + 1);
            setting.push("=");
            setting.push(&args[i + 1]);
            args[i] = "-x".into();
            args[i + 1] = setting;
            i += 2;
        } else if word.starts_with('-') && word != "-" && word != "--" {
            i += if !word.contains('=') && takes_value(&word) {
                2
            } else {
                1
            };
        } else {
            break;
        }
    }
    args
}

/// Open MPI's and Hydra's placement values that carry more than a mapping or a unit, as our
/// options, and how many words they took: `--map-by ppr:N:node` is `--ppn N`; `--map-by
/// slot:PE=N` (Open MPI) and `--bind-to core:N` (Hydra's `-bind-to core:N`) add
/// `--cpus-per-rank N`. The value may be joined (`--map-by=...`) or the next word.
fn placement_words(word: &str, next: Option<&OsString>) -> Option<(Vec<String>, usize)> {
    let (opt, joined) = match word.split_once('=') {
        Some((o, v)) => (o, Some(v)),
        None => (word, None),
    };
    if !matches!(opt, "--map-by" | "--bind-to" | "-bind-to") {
        return None;
    }
    let (value, taken) = match joined {
        Some(v) => (v, 1),
        None => (next?.to_str()?, 2),
    };
    let ours = |o: &str, v: &str| vec![o.to_string(), v.to_string()];
    let per_rank = |n: &str| ours("--cpus-per-rank", n);
    let words = if opt == "--map-by" {
        if let Some(n) = value
            .strip_prefix("ppr:")
            .and_then(|v| v.strip_suffix(":node"))
        {
            ours("--ppn", n)
        } else {
            let at = value.to_ascii_lowercase().find(":pe=")?;
            [ours(opt, &value[..at]), per_rank(&value[at + 4..])].concat()
        }
    } else {
        match value.split_once(':') {
            Some((unit, n)) => [ours("--bind-to", unit), per_rank(n)].concat(),
            None if opt == "-bind-to" => ours("--bind-to", value),
            None => return None,
        }
    };
    Some((words, taken))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `run` with some of `ibdyn run`'s options: a flag, valued ones, an alias.
    fn run_command() -> clap::Command {
        use clap::{Arg, ArgAction};
        clap::Command::new("run")
            .arg(Arg::new("np").short('n').long("np"))
            .arg(Arg::new("ppn").long("ppn"))
            .arg(Arg::new("nodes").long("nodes"))
            .arg(Arg::new("map_by").long("map-by"))
            .arg(Arg::new("bind_to").long("bind-to"))
            .arg(Arg::new("cpus").long("cpus-per-rank"))
            .arg(Arg::new("launcher_exec").long("launcher-exec"))
            .arg(Arg::new("hosts").long("hosts").visible_alias("host"))
            .arg(Arg::new("hostfile").long("hostfile"))
            .arg(Arg::new("wdir").long("wdir"))
            .arg(Arg::new("x").short('x').action(ArgAction::Append))
            .arg(
                Arg::new("tag")
                    .long("tag-output")
                    .action(ArgAction::SetTrue),
            )
    }

    fn spelt(line: &str) -> String {
        let args: Vec<OsString> = line.split(' ').map(OsString::from).collect();
        let out: Vec<String> = spelt_out(args, &run_command())
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect();
        out.join(" ")
    }

    #[test]
    fn np_before_the_program_is_an_option_of_ours_and_after_it_the_programs() {
        assert_eq!(spelt("ibdyn run -np 4 prog"), "ibdyn run --np 4 prog");
        assert_eq!(
            spelt("ibdyn run -np 4 -ppn 2 prog"),
            "ibdyn run --np 4 --ppn 2 prog"
        );
        assert_eq!(
            spelt("ibdyn run --nodes 2 --tag-output -np 4 prog -np 3"),
            "ibdyn run --nodes 2 --tag-output --np 4 prog -np 3"
        );
        assert_eq!(
            spelt("ibdyn run --map-by=node -np 2 prog"),
            "ibdyn run --map-by=node --np 2 prog"
        );
        // A value that looks like -np is a value.
        assert_eq!(
            spelt("ibdyn run --launcher-exec -np -n 1 prog"),
            "ibdyn run --launcher-exec -np -n 1 prog"
        );
        assert_eq!(spelt("ibdyn info -np"), "ibdyn info -np");
        assert_eq!(spelt("ibdyn cc run -np"), "ibdyn cc run -np");
        assert_eq!(spelt("ibdyn run prog -np 2"), "ibdyn run prog -np 2");
        assert_eq!(
            spelt("ibdyn run -genv A 1 -x B -np 2 prog -genv C 3"),
            "ibdyn run -x A=1 -x B --np 2 prog -genv C 3"
        );
        assert_eq!(
            spelt("ibdyn run --host a,b -np 2 prog"),
            "ibdyn run --host a,b --np 2 prog"
        );
        // The standard's mpiexec, Hydra's and mpirun's spellings of hosts and directory.
        assert_eq!(
            spelt("ibdyn run -n 2 -host a,b -wdir /w prog -host c"),
            "ibdyn run -n 2 --hosts a,b --wdir /w prog -host c"
        );
        assert_eq!(
            spelt("ibdyn run -f hf -npernode 1 prog"),
            "ibdyn run --hostfile hf --npernode 1 prog"
        );
        for theirs in ["-hostfile", "-machinefile", "--machinefile"] {
            assert_eq!(
                spelt(&format!("ibdyn run {theirs} hf prog")),
                "ibdyn run --hostfile hf prog"
            );
        }
        assert_eq!(spelt("ibdyn run -H a:2 prog"), "ibdyn run --hosts a:2 prog");
        assert_eq!(
            spelt("ibdyn run -configfile f --tag-output"),
            "ibdyn run --app f --tag-output"
        );
        assert_eq!(
            spelt("ibdyn run --map-by ppr:2:node -np 4 prog --map-by ppr:1:node"),
            "ibdyn run --ppn 2 --np 4 prog --map-by ppr:1:node"
        );
        assert_eq!(
            spelt("ibdyn run --map-by=ppr:3:node prog"),
            "ibdyn run --ppn 3 prog"
        );
        assert_eq!(
            spelt("ibdyn run --map-by node prog"),
            "ibdyn run --map-by node prog"
        );
        // Cores per rank, as Open MPI and Hydra write it.
        assert_eq!(
            spelt("ibdyn run --map-by slot:PE=4 --bind-to core prog"),
            "ibdyn run --map-by slot --cpus-per-rank 4 --bind-to core prog"
        );
        assert_eq!(
            spelt("ibdyn run --map-by=node:pe=2 prog"),
            "ibdyn run --map-by node --cpus-per-rank 2 prog"
        );
        assert_eq!(
            spelt("ibdyn run -bind-to core:4 -np 2 prog"),
            "ibdyn run --bind-to core --cpus-per-rank 4 --np 2 prog"
        );
        assert_eq!(
            spelt("ibdyn run -bind-to hwthread prog --bind-to core:2"),
            "ibdyn run --bind-to hwthread prog --bind-to core:2"
        );
    }
}
