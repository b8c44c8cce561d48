//! What a spawned job takes from the job of the rank that spawned it: the environment
//! variables and the working directory given to all of that job's applications (`ibdyn run
//! -x`, `--wdir`, a spawn's own `env` and `wdir` keys). Users expect `-x OMP_NUM_THREADS=4`
//! to reach the workers a master spawns, as it reaches the master. The spawn's own keys win.

use super::ranks::App;
use ibdyn_pmi::wire::{env_info, wdir_info};
use ibdyn_pmi::SpawnRequest;

/// The info keys the jobs spawned by a job of these applications inherit: the environment
/// entries every application has with the same value (not the `ibdyn_*` settings) and, if all
/// have the same, the working directory.
pub(crate) fn inherited_info(apps: &[App]) -> Vec<(String, String)> {
    let Some((first, rest)) = apps.split_first() else {
        return Vec::new();
    };
    let mut info: Vec<(String, String)> = first
        .env
        .iter()
        .filter(|(k, _)| !k.starts_with(ibdyn_pmi::env::INFO_PREFIX))
        .filter(|e| rest.iter().all(|a| a.env.contains(e)))
        .map(|(k, v)| env_info(k, v))
        .collect();
    if let Some(w) = &first.wdir {
        if rest.iter().all(|a| a.wdir.as_ref() == Some(w)) {
            info.push(wdir_info(w));
        }
    }
    info
}

/// `req` with `inherited` put before each command's own keys (later entries win), the
/// directory only where the command names none.
pub(crate) fn add_inherited(req: &mut SpawnRequest, inherited: &[(String, String)]) {
    if inherited.is_empty() {
        return;
    }
    for c in &mut req.commands {
        let has_wdir = c.info.iter().any(|(k, _)| k == "wdir" || k == "wdir_hex");
        let mut info: Vec<(String, String)> = inherited
            .iter()
            .filter(|(k, _)| !(has_wdir && (k == "wdir" || k == "wdir_hex")))
            .cloned()
            .collect();
        info.append(&mut c.info);
        c.info = info;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ibdyn_pmi::SpawnCommand;

    fn app(env: &[(&str, &str)], wdir: Option<&str>) -> App {
        App {
            program: "p".into(),
            args: vec![],
            nprocs: 1,
            appnum: 0,
            wdir: wdir.map(String::from),
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            bind: Default::default(),
            report_bindings: false,
        }
    }

    #[test]
    fn a_job_passes_on_what_all_its_applications_share() {
        let one = [app(
            &[("A", "1"), ("B", "two words"), ("IBDYN_INFO_PRESTART", "2")],
            Some("w d"),
        )];
        assert_eq!(
            inherited_info(&one),
            [
                ("env".to_string(), "A=1".to_string()),
                ("env_hex".into(), "B=74776f20776f726473".into()),
                ("wdir_hex".into(), "772064".into()),
            ]
        );
        let two = [
            app(&[("A", "1"), ("B", "x")], Some("w")),
            app(&[("A", "1"), ("B", "y")], None),
        ];
        assert_eq!(inherited_info(&two), [("env".into(), "A=1".into())]);
        assert!(inherited_info(&[]).is_empty());
    }

    #[test]
    fn a_spawns_own_keys_come_after_and_its_directory_wins() {
        let cmd = |info: &[(&str, &str)]| SpawnCommand {
            program: "c".into(),
            args: vec![],
            nprocs: 1,
            info: info
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        let mut req = SpawnRequest {
            commands: vec![cmd(&[("env", "A=own")]), cmd(&[("wdir", "mine")])],
            preput: vec![],
        };
        let inherited = [
            ("env".to_string(), "A=1".to_string()),
            ("wdir".into(), "theirs".into()),
        ];
        add_inherited(&mut req, &inherited);
        let keys = |i: usize| {
            req.commands[i]
                .info
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
        };
        assert_eq!(keys(0), ["env=A=1", "wdir=theirs", "env=A=own"]);
        assert_eq!(keys(1), ["env=A=1", "wdir=mine"]);
    }
}
