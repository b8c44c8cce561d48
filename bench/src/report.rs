//! One way to print results for every benchmark: an OSU-style table by default,
//! JSON Lines (one object per measured row) with `--json`.

use std::fmt::Write as _;

/// One measured value.
#[derive(Clone, Debug)]
pub struct Row {
    /// Parameters of the row, e.g. `[("size", "8"), ("n", "4")]`.
    pub params: Vec<(String, String)>,
    /// The statistic, e.g. "mean", "min", "max", "latency".
    pub stat: String,
    pub unit: String,
    pub value: f64,
    /// A physical limit measured in the same run, not the system under test.
    pub floor: bool,
    /// Another runtime measured in the same run (e.g. MPICH's launcher), not ibdyn.
    pub peer: Option<String>,
}

/// Collects rows of one benchmark and prints them.
pub struct Report {
    bench: String,
    json: bool,
    rows: Vec<Row>,
}

impl Report {
    pub fn new(bench: &str, json: bool) -> Report {
        Report {
            bench: bench.to_string(),
            json,
            rows: Vec::new(),
        }
    }

    /// The rows so far.
    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// Adds a measured row and, in JSON mode, prints it at once.
    pub fn add(&mut self, params: &[(&str, String)], stat: &str, unit: &str, value: f64) {
        self.push(params, stat, unit, value, false);
    }

    /// Adds a floor row (a limit measured in the same run).
    pub fn floor(&mut self, params: &[(&str, String)], stat: &str, unit: &str, value: f64) {
        self.push(params, stat, unit, value, true);
    }

    /// Adds a row measured on another runtime (`who`) in the same run.
    pub fn peer(
        &mut self,
        who: &str,
        params: &[(&str, String)],
        stat: &str,
        unit: &str,
        value: f64,
    ) {
        self.push_row(params, stat, unit, value, false, Some(who.to_string()));
    }

    fn push(&mut self, params: &[(&str, String)], stat: &str, unit: &str, value: f64, floor: bool) {
        self.push_row(params, stat, unit, value, floor, None);
    }

    fn push_row(
        &mut self,
        params: &[(&str, String)],
        stat: &str,
        unit: &str,
        value: f64,
        floor: bool,
        peer: Option<String>,
    ) {
        let row = Row {
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
            stat: stat.to_string(),
            unit: unit.to_string(),
            value,
            floor,
            peer,
        };
        if self.json {
            println!("{}", self.json_line(&row));
        }
        self.rows.push(row);
    }

    fn json_line(&self, row: &Row) -> String {
        let mut s = format!("{{\"bench\":{}", json_str(&self.bench));
        for (k, v) in &row.params {
            match v.parse::<f64>() {
                Ok(n) if n.is_finite() => write!(s, ",{}:{}", json_str(k), v).unwrap(),
                _ => write!(s, ",{}:{}", json_str(k), json_str(v)).unwrap(),
            }
        }
        write!(
            s,
            ",\"stat\":{},\"unit\":{},\"value\":{},\"floor\":{}",
            json_str(&row.stat),
            json_str(&row.unit),
            if row.value.is_finite() {
                format!("{}", row.value)
            } else {
                "null".into()
            },
            row.floor
        )
        .unwrap();
        if let Some(who) = &row.peer {
            write!(s, ",\"peer\":{}", json_str(who)).unwrap();
        }
        s.push('}');
        s
    }

    /// Prints the table (no-op in JSON mode, where rows were printed as they came).
    pub fn finish(&self) {
        if self.json || self.rows.is_empty() {
            return;
        }
        println!("# ibdyn-bench {}", self.bench);
        let mut header: Vec<String> = self.rows[0].params.iter().map(|(k, _)| k.clone()).collect();
        header.extend(["stat".into(), "value".into(), "unit".into(), "kind".into()]);
        let mut lines = vec![header];
        for r in &self.rows {
            let mut l: Vec<String> = r.params.iter().map(|(_, v)| v.clone()).collect();
            l.push(r.stat.clone());
            l.push(format_value(r.value));
            l.push(r.unit.clone());
            l.push(match (&r.peer, r.floor) {
                (Some(who), _) => who.clone(),
                (None, true) => "floor".into(),
                (None, false) => "ibdyn".into(),
            });
            lines.push(l);
        }
        let cols = lines.iter().map(|l| l.len()).max().unwrap_or(0);
        let widths: Vec<usize> = (0..cols)
            .map(|c| {
                lines
                    .iter()
                    .filter_map(|l| l.get(c))
                    .map(|s| s.len())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        for l in &lines {
            let cells: Vec<String> = l
                .iter()
                .enumerate()
                .map(|(i, s)| format!("{:>w$}", s, w = widths[i]))
                .collect();
            println!("{}", cells.join("  "));
        }
    }
}

fn format_value(v: f64) -> String {
    if !v.is_finite() {
        "n/a".into()
    } else if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => write!(out, "\\u{:04x}", c as u32).unwrap(),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
