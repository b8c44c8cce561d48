//! A Slurm allocation as a host list: `SLURM_JOB_NODELIST` (`n[1-3,5],gpu07`) with
//! `SLURM_TASKS_PER_NODE` (`2(x3),1`) as slots, read when `SLURM_JOB_ID` is set.

use super::hostfile::Host;
use crate::error::{LaunchError, Result};

pub const JOB_ID: &str = "SLURM_JOB_ID";
pub const NODELIST: &str = "SLURM_JOB_NODELIST";
pub const TASKS_PER_NODE: &str = "SLURM_TASKS_PER_NODE";

fn bad(var: &str, text: &str, why: &str) -> LaunchError {
    LaunchError::Usage(format!("{var}={text:?}: {why}"))
}

/// Splits at commas outside brackets.
fn top_level_items(text: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out.into_iter().filter(|s| !s.is_empty()).collect()
}

/// `1-3,5,07-09` → the numbers as text, keeping a range's zero padding.
fn expand_ranges(inner: &str, whole: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for part in inner.split(',') {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let width = lo.len();
        let (a, b) = match (lo.parse::<u64>(), hi.parse::<u64>()) {
            (Ok(a), Ok(b)) if a <= b && b - a < 100_000 => (a, b),
            _ => {
                return Err(bad(
                    NODELIST,
                    whole,
                    "a bracket range is not `lo-hi` numbers",
                ))
            }
        };
        out.extend((a..=b).map(|n| format!("{n:0width$}")));
    }
    Ok(out)
}

/// One item of a node list, with any number of bracket groups (`r[1-2]n[1-3]`).
fn expand_item(item: &str, whole: &str) -> Result<Vec<String>> {
    let Some(open) = item.find('[') else {
        return Ok(vec![item.to_string()]);
    };
    let close = item[open..]
        .find(']')
        .map(|c| open + c)
        .ok_or_else(|| bad(NODELIST, whole, "a `[` is not closed"))?;
    let (prefix, inner, rest) = (&item[..open], &item[open + 1..close], &item[close + 1..]);
    let tails = expand_item(rest, whole)?;
    let mut out = Vec::new();
    for n in expand_ranges(inner, whole)? {
        for t in &tails {
            out.push(format!("{prefix}{n}{t}"));
        }
    }
    Ok(out)
}

/// Slurm's compressed host list (`n[1-3,5],login`) as host names in order.
pub fn expand_nodelist(text: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for item in top_level_items(text.trim()) {
        out.extend(expand_item(item, text)?);
    }
    if out.is_empty() {
        return Err(bad(NODELIST, text, "names no node"));
    }
    Ok(out)
}

/// `2(x3),1` → `[2, 2, 2, 1]`.
pub fn expand_tasks(text: &str) -> Result<Vec<u32>> {
    let mut out = Vec::new();
    for item in text.trim().split(',').filter(|s| !s.is_empty()) {
        let (n, times) = match item.split_once("(x") {
            Some((n, r)) => (
                n,
                r.strip_suffix(')')
                    .and_then(|t| t.parse::<u32>().ok())
                    .ok_or_else(|| bad(TASKS_PER_NODE, text, "a repeat is not `(xN)`"))?,
            ),
            None => (item, 1),
        };
        let n = n
            .parse::<u32>()
            .map_err(|_| bad(TASKS_PER_NODE, text, "a count is not a number"))?;
        if times > 100_000 {
            return Err(bad(TASKS_PER_NODE, text, "a repeat is too large"));
        }
        out.extend(std::iter::repeat_n(n, times as usize));
    }
    Ok(out)
}

/// The allocation's hosts and slots (`None` outside an allocation).
pub fn from_env() -> Option<Result<Vec<Host>>> {
    std::env::var_os(JOB_ID)?;
    let nodelist = std::env::var(NODELIST).ok()?;
    Some((|| {
        let names = expand_nodelist(&nodelist)?;
        let tasks = match std::env::var(TASKS_PER_NODE) {
            Ok(t) => expand_tasks(&t)?,
            Err(_) => vec![1; names.len()],
        };
        if tasks.len() != names.len() {
            return Err(LaunchError::Usage(format!(
                "{TASKS_PER_NODE} gives {} counts for the {} nodes of {NODELIST}",
                tasks.len(),
                names.len()
            )));
        }
        Ok(names
            .into_iter()
            .zip(tasks)
            .map(|(name, slots)| Host {
                name,
                slots: slots.max(1),
            })
            .collect())
    })())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compressed_node_lists_expand_in_order() {
        assert_eq!(
            expand_nodelist("n[1-3,5]").unwrap(),
            ["n1", "n2", "n3", "n5"]
        );
        assert_eq!(
            expand_nodelist("login,gpu[07-09],x").unwrap(),
            ["login", "gpu07", "gpu08", "gpu09", "x"]
        );
        assert_eq!(
            expand_nodelist("r[1-2]n[1-2]").unwrap(),
            ["r1n1", "r1n2", "r2n1", "r2n2"]
        );
        assert_eq!(expand_nodelist("node-1").unwrap(), ["node-1"]);
        for bad in ["", "n[1-", "n[3-1]", "n[a-b]", "n[1-999999999]"] {
            assert!(expand_nodelist(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn tasks_per_node_repeats_expand() {
        assert_eq!(expand_tasks("2(x3),1").unwrap(), [2, 2, 2, 1]);
        assert_eq!(expand_tasks("4").unwrap(), [4]);
        assert_eq!(expand_tasks("1,3(x2)").unwrap(), [1, 3, 3]);
        for bad in ["x", "2(x", "2(xa)", "2(x3", "1(x9999999)"] {
            assert!(expand_tasks(bad).is_err(), "{bad:?} accepted");
        }
    }
}
