//! The picture of a resize timeline: processes of the job over time, a step line, with a
//! green mark where it grew and a red one where it shrank (time in ms to the right, processes
//! upwards, one grey line per process count; axis labels need a font, see `plot_text`).

use crate::plot_text::{self, FAMILY};
use plotters::prelude::*;
use std::path::Path;

/// (ms since the job's loop started, processes from then on), from `ROW procs=N at ms T`.
pub fn parse(rows: &[String]) -> Result<Vec<(f64, u32)>, String> {
    rows.iter()
        .map(|r| {
            let parts: Vec<&str> = r.split_whitespace().collect();
            let [_, procs, "at", "ms", t] = parts[..] else {
                return Err(format!("bad timeline line: {r}"));
            };
            let n = procs
                .strip_prefix("procs=")
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| format!("bad process count in: {r}"))?;
            let t = t.parse().map_err(|_| format!("bad time in: {r}"))?;
            Ok((t, n))
        })
        .collect()
}

pub fn draw(path: &Path, points: &[(f64, u32)]) -> Result<(), String> {
    let e = |e: &dyn std::fmt::Display| format!("drawing {}: {e}", path.display());
    let Some(&(t_end, _)) = points.last() else {
        return Err("no timeline points".into());
    };
    let t_max = (t_end * 1.1).max(1.0);
    let y_max = points.iter().map(|p| p.1).max().unwrap_or(1) + 1;
    let root = BitMapBackend::new(path, (900, 420)).into_drawing_area();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let text = plot_text::available();
    let mut builder = ChartBuilder::on(&root);
    builder.margin(20);
    if text {
        builder
            .caption("processes of the job while it resizes", (FAMILY, 20))
            .x_label_area_size(40)
            .y_label_area_size(40);
    }
    let mut chart = builder
        .build_cartesian_2d(0.0..t_max, 0.0..f64::from(y_max))
        .map_err(|x| e(&x))?;
    if text {
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc("ms since the loop started")
            .y_desc("processes")
            .y_label_formatter(&|y| {
                if y.fract() == 0.0 {
                    format!("{y:.0}")
                } else {
                    String::new()
                }
            })
            .label_style((FAMILY, 14))
            .draw()
            .map_err(|x| e(&x))?;
    }
    for y in 1..=y_max {
        let y = f64::from(y);
        chart
            .draw_series(LineSeries::new(
                [(0.0, y), (t_max, y)],
                RGBColor(225, 225, 225),
            ))
            .map_err(|x| e(&x))?;
    }
    let mut steps = Vec::new();
    for w in points.windows(2) {
        steps.push((w[0].0, f64::from(w[0].1)));
        steps.push((w[1].0, f64::from(w[0].1)));
    }
    steps.push((t_end, f64::from(points[points.len() - 1].1)));
    steps.push((t_max, f64::from(points[points.len() - 1].1)));
    chart
        .draw_series(LineSeries::new(steps, BLUE.stroke_width(3)))
        .map_err(|x| e(&x))?;
    for w in points.windows(2) {
        let (t, n) = (w[1].0, f64::from(w[1].1));
        let color = if w[1].1 > w[0].1 { GREEN } else { RED };
        chart
            .draw_series([Circle::new((t, n), 6, color.filled())])
            .map_err(|x| e(&x))?;
    }
    root.present().map_err(|x| e(&x))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeline_parses_and_draws() {
        let rows: Vec<String> = [
            "ROW procs=2 at ms 0",
            "ROW procs=4 at ms 12.5",
            "ROW procs=3 at ms 30",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let p = parse(&rows).unwrap();
        assert_eq!(p, vec![(0.0, 2), (12.5, 4), (30.0, 3)]);
        assert!(parse(&["ROW x".to_string()]).is_err());
        crate::plot_text::drawn_png("timeline", |file| draw(file, &p));
    }
}
