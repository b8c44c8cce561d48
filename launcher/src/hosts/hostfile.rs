//! Host lists: `--hosts a,b:4,c` and `--hostfile F` (one host a line, optional `slots=N` as
//! Open MPI writes it or `:N` as MPICH does, `#` comments). A host named twice gets the slots of both.

use crate::error::{LaunchError, Result};

/// One host of a job and how many ranks it takes before placement wraps around.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Host {
    pub name: String,
    pub slots: u32,
}

fn check_name(name: &str, context: &str) -> Result<()> {
    let ok = !name.is_empty()
        && !name.starts_with('-')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':' | '@'));
    if ok {
        Ok(())
    } else {
        Err(LaunchError::Usage(format!(
            "{context}: {name:?} is not a host name (letters, digits, `.-_@`)"
        )))
    }
}

fn parse_slots(text: &str, context: &str) -> Result<u32> {
    match text.trim().parse::<u32>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(LaunchError::Usage(format!(
            "{context}: slots {text:?} is not a positive number"
        ))),
    }
}

fn add(hosts: &mut Vec<Host>, h: Host) {
    match hosts.iter_mut().find(|x| x.name == h.name) {
        Some(x) => x.slots += h.slots,
        None => hosts.push(h),
    }
}

/// `b:4`: a host and its slots (1 when no count is given).
fn name_and_slots<'a>(item: &'a str, context: &str) -> Result<(&'a str, u32)> {
    // An IPv6 literal has colons of its own: only a trailing `:digits` is a slot count.
    let (name, slots) = match item.rsplit_once(':') {
        Some((n, s)) if !n.contains(':') => (n, parse_slots(s, context)?),
        _ => (item, 1),
    };
    check_name(name, context)?;
    Ok((name, slots))
}

/// `a,b:4,c`: hosts in order, `:N` slots (default 1).
pub fn parse_list(text: &str) -> Result<Vec<Host>> {
    let mut hosts = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let context = format!("--hosts {text}");
        let (name, slots) = name_and_slots(item, &context)?;
        add(
            &mut hosts,
            Host {
                name: name.to_string(),
                slots,
            },
        );
    }
    if hosts.is_empty() {
        return Err(LaunchError::Usage(format!(
            "--hosts {text:?} names no host"
        )));
    }
    Ok(hosts)
}

/// A host file's text (`path` for messages).
pub fn parse_file(text: &str, path: &str) -> Result<Vec<Host>> {
    let mut hosts = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let context = format!("{path} line {}", i + 1);
        let mut words = line.split_whitespace();
        // Open MPI's `host slots=N` or MPICH's `host:N`.
        let (name, mut slots) = name_and_slots(words.next().unwrap_or_default(), &context)?;
        for w in words {
            match w.split_once('=') {
                Some(("slots", n)) | Some(("max_slots", n)) => slots = parse_slots(n, &context)?,
                _ => {
                    return Err(LaunchError::Usage(format!(
                        "{context}: unknown field {w:?} (expected `slots=N`)"
                    )))
                }
            }
        }
        add(
            &mut hosts,
            Host {
                name: name.to_string(),
                slots,
            },
        );
    }
    if hosts.is_empty() {
        return Err(LaunchError::Usage(format!(
            "host file {path} names no host"
        )));
    }
    Ok(hosts)
}

/// Reads and parses a host file.
pub fn read_file(path: &std::path::Path) -> Result<Vec<Host>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| LaunchError::io(format!("read host file {}", path.display()), e))?;
    parse_file(&text, &path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(name: &str, slots: u32) -> Host {
        Host {
            name: name.into(),
            slots,
        }
    }

    #[test]
    fn lists_with_slots_merge_repeated_hosts() {
        assert_eq!(
            parse_list("a,b:4,c").unwrap(),
            vec![h("a", 1), h("b", 4), h("c", 1)]
        );
        assert_eq!(
            parse_list(" a:2 , a ,10.0.0.1:3").unwrap(),
            vec![h("a", 3), h("10.0.0.1", 3)]
        );
        assert_eq!(parse_list("fe80::1").unwrap(), vec![h("fe80::1", 1)]);
        for bad in ["", ",", "a:0", "a:x", "-oProxyCommand=x", "a b", "a;rm"] {
            assert!(parse_list(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn host_files_take_slots_and_comments() {
        let text = "# cluster\nn1 slots=2\n\n  n2   # spare\nn3 slots=4 # big\nn1\n";
        assert_eq!(
            parse_file(text, "hf").unwrap(),
            vec![h("n1", 3), h("n2", 1), h("n3", 4)]
        );
        let err = parse_file("n1 cpus=4\n", "hf").unwrap_err().to_string();
        assert!(err.contains("hf line 1") && err.contains("cpus=4"), "{err}");
        assert!(parse_file("n1 slots=0\n", "hf").is_err());
        assert!(parse_file("# nothing\n", "hf").is_err());
        // MPICH's form, and an IPv6 literal left whole.
        assert_eq!(
            parse_file("n1:2\nn2:3 # big\nfe80::1\n", "hf").unwrap(),
            vec![h("n1", 2), h("n2", 3), h("fe80::1", 1)]
        );
        assert!(parse_file("n1:0\n", "hf").is_err());
    }
}
