//! Benchmarks that measure the runtime run as a job: the outer `ibdyn-bench` process starts
//! `ibdyn run -n N <itself> ...`; the ranks measure and rank 0 prints result lines, which the
//! outer process turns into report rows next to the floors it measures itself.

use crate::report::Report;
use std::path::PathBuf;
use std::process::Command;

/// Whether this process is a rank of a job (started by `ibdyn run`).
pub fn in_job() -> bool {
    std::env::var_os("IBDYN_PMI_SOCK").is_some() || std::env::var_os("PMI_FD").is_some()
}

/// The `ibdyn` launcher: `IBDYN_BIN`, else next to this binary, else on PATH.
pub fn ibdyn_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("IBDYN_BIN") {
        return p.into();
    }
    if let Ok(me) = std::env::current_exe() {
        let p = me.with_file_name("ibdyn");
        if p.exists() {
            return p;
        }
    }
    PathBuf::from("ibdyn")
}

/// Runs `ibdyn run -n n --nodes nodes [extra] <this binary> args...` (no `--nodes` with
/// `--dvm`) and returns rank 0's result lines (those starting with `ROW `).
pub fn run_job(
    n: usize,
    nodes: usize,
    extra: &[&str],
    envs: &[(&str, &str)],
    args: &[String],
) -> Result<Vec<String>, String> {
    let me = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
    let mut cmd = Command::new(ibdyn_bin());
    cmd.arg("run").arg("-n").arg(n.to_string());
    // A DVM job runs on the daemons `ibdyn dvm start --nodes` made.
    if !extra.contains(&"--dvm") {
        cmd.arg("--nodes").arg(nodes.to_string());
    }
    cmd.args(extra).arg(me).args(args);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = cmd
        .output()
        .map_err(|e| format!("cannot start {}: {e}", ibdyn_bin().display()))?;
    if !out.status.success() {
        return Err(format!(
            "job failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .take(20)
                .collect::<Vec<_>>()
                .join("\n")
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("ROW "))
        .map(str::to_string)
        .collect())
}

/// Prints one result row from inside a job: `ROW k=v k=v ... stat unit value`.
pub fn emit(params: &[(&str, String)], stat: &str, unit: &str, value: f64) {
    let p: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    println!("ROW {} {stat} {unit} {value}", p.join(" "));
}

/// Emits the average, minimum and maximum of `us` over the ranks of `w` (at rank 0).
pub fn emit_over_ranks(
    w: &ibdyn::IntraCommunicator,
    params: &[(&str, String)],
    us: f64,
) -> ibdyn::Result<()> {
    use ibdyn::traits::*;
    use ibdyn::SystemOperation;
    let (mut lo, mut hi, mut sum) = ([0.0f64], [0.0f64], [0.0f64]);
    w.all_reduce_into(&[us], &mut lo, SystemOperation::min())?;
    w.all_reduce_into(&[us], &mut hi, SystemOperation::max())?;
    w.all_reduce_into(&[us], &mut sum, SystemOperation::sum())?;
    if w.rank() == 0 {
        emit(params, "avg", "us", sum[0] / w.size() as f64);
        emit(params, "min", "us", lo[0]);
        emit(params, "max", "us", hi[0]);
    }
    Ok(())
}

/// Adds rows printed by `emit` to a report, with extra leading parameters.
pub fn add_rows(
    report: &mut Report,
    lead: &[(&str, String)],
    rows: &[String],
) -> Result<(), String> {
    for row in rows {
        let parts: Vec<&str> = row.split_whitespace().skip(1).collect();
        if parts.len() < 3 {
            return Err(format!("bad result line: {row}"));
        }
        let (kv, tail) = parts.split_at(parts.len() - 3);
        let value: f64 = tail[2]
            .parse()
            .map_err(|_| format!("bad value in: {row}"))?;
        let mut params: Vec<(&str, String)> = lead.to_vec();
        for p in kv {
            let (k, v) = p
                .split_once('=')
                .ok_or_else(|| format!("bad parameter in: {row}"))?;
            params.push((k, v.to_string()));
        }
        report.add(&params, tail[0], tail[1], value);
    }
    Ok(())
}

/// Powers of two from `lo` to `hi` inclusive.
pub fn sizes(lo: usize, hi: usize) -> Vec<usize> {
    let mut v = Vec::new();
    let mut s = lo.max(1);
    while s <= hi {
        v.push(s);
        s *= 2;
    }
    v
}

/// Iterations for a message size, OSU-like: many for small messages, fewer for large.
pub fn iters_for(size: usize, base: usize) -> usize {
    if size <= 8192 {
        base
    } else {
        (base * 8192 / size).max(20)
    }
}

/// How a cost grows with N between two measurements: the exponent k of t ~ N^k fitted
/// through (n0, t0) and (n1, t1) (1 = linear, 2 = quadratic; NaN when undefined).
pub fn growth_exponent((n0, t0): (usize, f64), (n1, t1): (usize, f64)) -> f64 {
    if n0 == n1 || t0 <= 0.0 || t1 <= 0.0 {
        return f64::NAN;
    }
    (t1 / t0).ln() / (n1 as f64 / n0 as f64).ln()
}

/// Adds `value` for `n` under `key` and, if `key` was measured at a smaller N before, a
/// growth row: `t(N) / t(previous N)` and the exponent k of t ~ N^k between the two.
pub fn add_with_growth(
    report: &mut Report,
    prev: &mut std::collections::HashMap<String, (usize, f64)>,
    key: &str,
    params: &[(&str, String)],
    (stat, unit): (&str, &str),
    n: usize,
    value: f64,
) {
    report.add(params, stat, unit, value);
    if let Some(&(n0, v0)) = prev.get(key) {
        if n0 < n {
            report.add(params, &format!("{stat} x vs N={n0}"), "ratio", value / v0);
            report.add(
                params,
                &format!("{stat} k (t~N^k)"),
                "exp",
                growth_exponent((n0, v0), (n, value)),
            );
        }
    }
    prev.insert(key.to_string(), (n, value));
}

/// The two groups of the loop benchmarks: a rank of the `ibdyn run` job spawns `children`
/// copies of this benchmark with its own arguments (`true`: a parent); a copy finds its parent.
pub fn spawn_self_or_parent(
    u: &ibdyn::Universe,
    children: usize,
) -> Result<(ibdyn::InterCommunicator, bool), String> {
    use ibdyn::traits::*;
    let e = |err: ibdyn::CommError| err.to_string();
    if let Some(p) = u.parent() {
        return Ok((p, false));
    }
    let me = std::env::current_exe().map_err(|x| x.to_string())?;
    let mut cmd = Command::new(me);
    cmd.args(std::env::args_os().skip(1));
    let ic = u
        .world()
        .process_at_rank(0)
        .spawn(&cmd, children as u32)
        .map_err(e)?;
    Ok((ic, true))
}

#[cfg(test)]
mod tests {
    #[test]
    fn growth_exponent_of_linear_and_quadratic_costs() {
        assert!((super::growth_exponent((8, 2.0), (16, 4.0)) - 1.0).abs() < 1e-12);
        assert!((super::growth_exponent((64, 1.0), (256, 16.0)) - 2.0).abs() < 1e-12);
        assert!(super::growth_exponent((8, 0.0), (16, 1.0)).is_nan());
    }
}
