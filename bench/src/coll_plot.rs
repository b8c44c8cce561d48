//! `ibdyn-bench plot-intercomm --out PNG --series NAME=FILE ...`: the loop-method table of
//! the intercommunicator collectives as a picture: one panel per operation (bcast, reduce, allreduce / reduce_scatter,
//! allgather, alltoall), message size to the right (8 B, 1 KiB, 64 KiB, 1 MiB), latency
//! upwards on a log scale; one colour per implementation, in the order given (ibdyn blue,
//! then green, red, orange, grey, purple), a filled dot for 1+3 and a hollow one for 2+2.
//! Titles, axis labels and the legend need a font (`plot_text`).
//! The files are the lines `P+C:OP:SIZE US` that `scripts/compare-peers.sh --out` keeps.

use crate::intercomm_loop::{LOOP_OPS, LOOP_SIZES};
use crate::plot_text::{self, FAMILY};
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// The PNG to write.
    #[arg(long)]
    out: PathBuf,
    /// NAME=FILE, repeatable: a column of the comparison (lines `P+C:OP:SIZE US`).
    #[arg(long, required = true)]
    series: Vec<String>,
}

/// (group pair, op, size) -> microseconds.
type Cells = BTreeMap<(String, String, usize), f64>;

const COLOURS: [RGBColor; 6] = [
    RGBColor(31, 90, 200),
    RGBColor(40, 160, 60),
    RGBColor(210, 40, 40),
    RGBColor(240, 150, 20),
    RGBColor(120, 120, 120),
    RGBColor(140, 60, 170),
];

pub fn parse(text: &str) -> Result<Cells, String> {
    let mut cells = Cells::new();
    for l in text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        let bad = || format!("bad line {l:?} (want P+C:OP:SIZE US)");
        let (cell, us) = l.split_once(' ').ok_or_else(bad)?;
        let mut k = cell.split(':');
        let (Some(g), Some(op), Some(size), None) = (k.next(), k.next(), k.next(), k.next()) else {
            return Err(bad());
        };
        let size = size.parse().map_err(|_| bad())?;
        let us: f64 = us.trim().parse().map_err(|_| bad())?;
        cells.insert((g.to_string(), op.to_string(), size), us);
    }
    Ok(cells)
}

pub fn run(a: Args) -> Result<(), String> {
    let mut series = Vec::new();
    for s in &a.series {
        let (name, file) = s
            .split_once('=')
            .ok_or_else(|| format!("--series {s:?}: want NAME=FILE"))?;
        let text = std::fs::read_to_string(file).map_err(|e| format!("reading {file}: {e}"))?;
        series.push((name.to_string(), parse(&text)?));
    }
    draw(&a.out, &series)?;
    println!("wrote {}", a.out.display());
    Ok(())
}

pub fn draw(path: &Path, series: &[(String, Cells)]) -> Result<(), String> {
    let e = |e: &dyn std::fmt::Display| format!("drawing {}: {e}", path.display());
    let ops: Vec<&str> = LOOP_OPS
        .iter()
        .copied()
        .filter(|o| *o != "barrier")
        .collect();
    let root = BitMapBackend::new(path, (1200, 700)).into_drawing_area();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let panels = root.split_evenly((2, 3));
    for (panel, op) in panels.iter().zip(&ops) {
        let values: Vec<f64> = series
            .iter()
            .flat_map(|(_, c)| c.iter().filter(|(k, _)| k.1 == *op).map(|(_, v)| *v))
            .filter(|v| *v > 0.0)
            .collect();
        if values.is_empty() {
            continue;
        }
        let lo = values.iter().cloned().fold(f64::INFINITY, f64::min).log10() - 0.2;
        let hi = values.iter().cloned().fold(0.0, f64::max).log10() + 0.2;
        let text = plot_text::available();
        let mut builder = ChartBuilder::on(panel);
        builder.margin(18);
        if text {
            builder
                .caption(format!("inter {op}, us per call"), (FAMILY, 16))
                .x_label_area_size(28)
                .y_label_area_size(48);
        }
        let mut chart = builder
            .build_cartesian_2d(-0.5..(LOOP_SIZES.len() as f64 - 0.5), lo..hi)
            .map_err(|x| e(&x))?;
        if text {
            chart
                .configure_mesh()
                .disable_mesh()
                .x_labels(LOOP_SIZES.len())
                .x_label_formatter(&size_label)
                .y_label_formatter(&|y| {
                    if (y - y.round()).abs() < 1e-6 {
                        format!("{}", 10f64.powf(y.round()))
                    } else {
                        String::new()
                    }
                })
                .label_style((FAMILY, 12))
                .draw()
                .map_err(|x| e(&x))?;
        }
        // Grey lines at each power of ten, and a frame.
        for d in (lo.ceil() as i32)..=(hi.floor() as i32) {
            let y = f64::from(d);
            chart
                .draw_series(LineSeries::new(
                    [(-0.5, y), (LOOP_SIZES.len() as f64 - 0.5, y)],
                    RGBColor(220, 220, 220),
                ))
                .map_err(|x| e(&x))?;
        }
        let frame = [(-0.5, lo), (3.5, lo), (3.5, hi), (-0.5, hi), (-0.5, lo)];
        chart
            .draw_series(LineSeries::new(frame, BLACK))
            .map_err(|x| e(&x))?;
        for (i, (name, cells)) in series.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            for (g, filled) in [("1+3", true), ("2+2", false)] {
                let pts: Vec<(f64, f64)> = LOOP_SIZES
                    .iter()
                    .enumerate()
                    .filter_map(|(x, s)| {
                        let v = cells.get(&(g.to_string(), op.to_string(), *s))?;
                        (*v > 0.0).then(|| (x as f64, v.log10()))
                    })
                    .collect();
                let line = chart
                    .draw_series(LineSeries::new(pts.clone(), colour.stroke_width(2)))
                    .map_err(|x| e(&x))?;
                if filled {
                    line.label(name.as_str()).legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 16, y)], colour.stroke_width(2))
                    });
                }
                let style = if filled {
                    colour.filled()
                } else {
                    colour.stroke_width(2)
                };
                chart
                    .draw_series(pts.iter().map(|p| Circle::new(*p, 5, style)))
                    .map_err(|x| e(&x))?;
            }
        }
        if text && *op == ops[0] {
            plot_text::draw_legend(&mut chart, 12)?;
        }
    }
    root.present().map_err(|x| e(&x))?;
    Ok(())
}

/// The message size at a whole x position (filled dot 1+3, hollow 2+2).
fn size_label(x: &f64) -> String {
    let i = x.round();
    if (x - i).abs() > 1e-6 || i < 0.0 {
        return String::new();
    }
    match LOOP_SIZES.get(i as usize) {
        Some(&b) if b >= 1 << 20 => format!("{} MiB", b >> 20),
        Some(&b) if b >= 1 << 10 => format!("{} KiB", b >> 10),
        Some(&b) => format!("{b} B"),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_parse_and_draw() {
        let a = parse("# head\n1+3:bcast:8 4.5\n1+3:bcast:1024 6\n2+2:reduce:8 3\n").unwrap();
        assert_eq!(a.len(), 3);
        assert_eq!(a[&("1+3".into(), "bcast".into(), 1024)], 6.0);
        assert!(parse("1+3:bcast 4").is_err());
        assert!(parse("1+3:bcast:8 x").is_err());
        let b = parse("1+3:bcast:8 5\n1+3:bcast:1024 9\n").unwrap();
        crate::plot_text::drawn_png("coll", |file| {
            draw(file, &[("ibdyn".into(), a), ("peer".into(), b)])
        });
    }
}
