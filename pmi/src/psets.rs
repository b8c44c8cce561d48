//! Process sets named on the launcher: their names and the job-level PMI key that carries
//! their definitions to the ranks (`NAME=RANKS[;NAME=RANKS...]`, RANKS like `0,2,4-6`).

/// The job-level key under which the launcher puts the definitions.
pub const PSETS_KEY: &str = "ibdyn-psets";

/// A malformed set name or definition: the text and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PsetError {
    pub text: String,
    pub why: String,
}

impl std::fmt::Display for PsetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "malformed process set {:?}: {}", self.text, self.why)
    }
}

impl std::error::Error for PsetError {}

/// Checks that `name` is a process-set name: `SCHEME://REST`, both parts non-empty, with no
/// whitespace, `=` or `;`.
pub fn check_name(name: &str) -> Result<(), PsetError> {
    let bad = |why: &str| {
        Err(PsetError {
            text: name.to_string(),
            why: why.to_string(),
        })
    };
    if name
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || c == '=' || c == ';')
    {
        return bad("a set name has no whitespace, '=' or ';'");
    }
    match name.split_once("://") {
        Some((scheme, rest)) if !scheme.is_empty() && !rest.is_empty() => Ok(()),
        _ => bad("a set name looks like SCHEME://NAME, e.g. app://even"),
    }
}

/// Parses the launcher's definitions (`NAME=RANKS[;NAME=RANKS...]`, RANKS like `0,2,4-6`)
/// for a job of `size` processes, in order. Names are checked, unique and not in the
/// reserved `mpi://` scheme.
pub fn parse_defs(text: &str, size: u32) -> Result<Vec<(String, Vec<u32>)>, PsetError> {
    let mut out: Vec<(String, Vec<u32>)> = Vec::new();
    for def in text.split(';').filter(|d| !d.is_empty()) {
        let bad = |why: String| PsetError {
            text: def.to_string(),
            why,
        };
        let (name, ranks) = def
            .split_once('=')
            .ok_or_else(|| bad("expected NAME=RANKS".into()))?;
        check_name(name)?;
        if name.starts_with("mpi://") {
            return Err(bad(
                "the mpi:// scheme is reserved for the predefined sets".into()
            ));
        }
        if out.iter().any(|(n, _)| n == name) {
            return Err(bad(format!("{name} is defined twice")));
        }
        out.push((name.to_string(), parse_ranks(ranks, size).map_err(bad)?));
    }
    Ok(out)
}

/// `0,2,4-6` → [0, 2, 4, 5, 6]; every rank below `size`, none twice, at least one.
fn parse_ranks(text: &str, size: u32) -> std::result::Result<Vec<u32>, String> {
    let num = |s: &str| {
        s.parse::<u32>()
            .map_err(|_| format!("{s:?} is not a rank (a number, or a range like 2-5)"))
    };
    let mut ranks = Vec::new();
    for part in text.split(',') {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => (num(part)?, num(part)?),
        };
        if lo > hi {
            return Err(format!("range {part} runs backwards"));
        }
        for r in lo..=hi {
            if r >= size {
                return Err(format!("rank {r} is out of range for a job of {size}"));
            }
            if ranks.contains(&r) {
                return Err(format!("rank {r} is listed twice"));
            }
            ranks.push(r);
        }
    }
    Ok(ranks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_parse_in_order() {
        let d = parse_defs("app://even=0,2;app://odd=1,3;x://r=0-2", 4).unwrap();
        assert_eq!(
            d,
            vec![
                ("app://even".to_string(), vec![0, 2]),
                ("app://odd".to_string(), vec![1, 3]),
                ("x://r".to_string(), vec![0, 1, 2]),
            ]
        );
        assert!(parse_defs("", 4).unwrap().is_empty());
    }

    #[test]
    fn bad_definitions_are_named() {
        for (text, why) in [
            ("app://a", "NAME=RANKS"),
            ("app://a=0;app://a=1", "twice"),
            ("mpi://WORLD=0", "reserved"),
            ("even=0", "SCHEME://NAME"),
            ("app://a=4", "out of range"),
            ("app://a=1,1", "listed twice"),
            ("app://a=3-1", "backwards"),
            ("app://a=x", "not a rank"),
            ("app://a=", "not a rank"),
        ] {
            let e = parse_defs(text, 4).unwrap_err().to_string();
            assert!(e.contains(why), "{text}: {e}");
        }
    }

    #[test]
    fn names_are_checked() {
        assert!(check_name("app://Even").is_ok());
        for bad in ["", "app://", "://x", "app:/x", "a b://c", "app://a;b"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }
}
