//! The tables of `spawn-latency` and `spawn-rate`: every measured row next to the floor of
//! the same run and the ratio to it. The floor of a spawn of N children is N fork+exec+exit
//! of /bin/true started at once over the machine's cores, until all are reaped; of a rate,
//! the same started back to back by one thread and reaped at the end.

use crate::floors_proc::{fork_exec_n, fork_exec_spread_floor, TRIVIAL};
use crate::report::Report;
use crate::spawn_plot::{Line, SpawnPlot};
use std::path::Path;

/// One `ROW` line of a rank: its children count, statistic, unit and value.
struct Measured {
    children: usize,
    stat: String,
    unit: String,
    value: f64,
}

fn parse(row: &str) -> Result<Measured, String> {
    let bad = || format!("bad result line: {row}");
    let parts: Vec<&str> = row.split_whitespace().collect();
    let ["ROW", children, stat, unit, value] = parts[..] else {
        return Err(bad());
    };
    Ok(Measured {
        children: children
            .strip_prefix("children=")
            .and_then(|c| c.parse().ok())
            .ok_or_else(bad)?,
        stat: stat.to_string(),
        unit: unit.to_string(),
        value: value.parse().map_err(|_| bad())?,
    })
}

/// One job's leading parameters (its parent count, ...) and rank 0's `ROW` lines.
pub type JobRows<'a> = (Vec<(&'a str, String)>, Vec<String>);

/// The target of a spawn of `children`, as a multiple of its floor (issue 18).
pub fn target_factor(children: usize) -> f64 {
    if children <= 1 {
        1.5
    } else {
        2.0
    }
}

/// The spawn-latency table: for every parent count (`jobs`: its leading parameters and
/// rank 0's rows) and children count, mean/min/max, the floor and mean/floor. Returns what
/// the plot shows.
pub fn latency(
    report: &mut Report,
    jobs: &[JobRows],
    children: &[usize],
) -> Result<SpawnPlot, String> {
    let mut floor = Vec::new();
    for &n in children {
        let d = fork_exec_spread_floor(Path::new(TRIVIAL), n as u32, 21)
            .map_err(|e| format!("fork+exec floor of {n}: {e}"))?;
        floor.push((n, d.as_secs_f64() * 1e3));
    }
    let mut lines = Vec::new();
    for (lead, rows) in jobs {
        let rows = rows
            .iter()
            .map(|r| parse(r))
            .collect::<Result<Vec<_>, _>>()?;
        let mut points = Vec::new();
        for &(n, floor_ms) in &floor {
            let mut params = lead.clone();
            params.push(("children", n.to_string()));
            for m in rows.iter().filter(|m| m.children == n) {
                report.add(&params, &m.stat, &m.unit, m.value);
            }
            report.floor(&params, "fork+exec+exit /bin/true xN", "ms", floor_ms);
            if let Some(mean) = rows.iter().find(|m| m.children == n && m.stat == "mean") {
                report.add(&params, "mean/floor", "x", mean.value / floor_ms);
                points.push((n, mean.value));
            }
            if let Some(med) = rows.iter().find(|m| m.children == n && m.stat == "median") {
                report.add(&params, "median/floor", "x", med.value / floor_ms);
            }
        }
        // Only the parameters that tell the lines apart.
        let label = lead
            .iter()
            .filter(|(k, v)| {
                jobs.iter()
                    .any(|(l, _)| l.iter().any(|(k2, v2)| k2 == k && v2 != v))
            })
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ");
        lines.push(Line { label, points });
    }
    let target = floor
        .iter()
        .map(|&(n, ms)| (n, ms * target_factor(n)))
        .collect();
    Ok(SpawnPlot {
        lines,
        floor,
        target,
    })
}

/// The spawn-rate table: spawns per second per children count, the floor rate (spawns of N
/// /bin/true back to back, reaped at the end) and ibdyn/floor.
pub fn rate(
    report: &mut Report,
    lead: &[(&str, String)],
    rows: &[String],
    children: &[usize],
) -> Result<(), String> {
    let rows = rows
        .iter()
        .map(|r| parse(r))
        .collect::<Result<Vec<_>, _>>()?;
    const SPAWNS: usize = 50;
    for &n in children {
        let d = fork_exec_n(Path::new(TRIVIAL), &[], (SPAWNS * n) as u32)
            .map_err(|e| format!("fork+exec floor of {n}: {e}"))?;
        let floor = SPAWNS as f64 / d.as_secs_f64();
        let mut params = lead.to_vec();
        params.push(("children", n.to_string()));
        for m in rows.iter().filter(|m| m.children == n) {
            report.add(&params, &m.stat, &m.unit, m.value);
            if m.stat != crate::dynamic::TEARDOWN {
                report.floor(&params, "fork+exec+exit /bin/true xN", &m.unit, floor);
                report.add(&params, "ibdyn/floor", "x", m.value / floor);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_parse_and_bad_ones_are_errors() {
        let m = parse("ROW children=8 mean ms 5.25").unwrap();
        assert_eq!(
            (m.children, m.stat.as_str(), m.unit.as_str()),
            (8, "mean", "ms")
        );
        assert_eq!(m.value, 5.25);
        for bad in [
            "ROW children=x mean ms 1",
            "ROW kids=1 mean ms 1",
            "ROW children=1 mean ms",
            "ROW children=1 mean ms nan?",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert_eq!(target_factor(1), 1.5);
        assert_eq!(target_factor(8), 2.0);
    }
}
