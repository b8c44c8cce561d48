//! The picture of a `spawn-latency` table (`--plot FILE.png`): spawn time against children
//! per spawn, one line per parent count, beside the fork+exec+exit floor of the same run
//! (x: children per spawn on a log2 axis, y: ms with a grey line every ms; ibdyn's lines are
//! coloured with round marks, the floor black with square marks, the target of each children
//! count a red cross). Axis labels and the legend need a font (`plot_text`).

use crate::plot_text::{self, FAMILY};
use plotters::prelude::*;
use std::path::Path;

/// One line (one parent count, coloured in order: blue, green, orange, purple): ms per
/// children count, in increasing children order.
pub struct Line {
    /// The legend's words, e.g. `parents=1`.
    pub label: String,
    pub points: Vec<(usize, f64)>,
}

/// What one run measured.
pub struct SpawnPlot {
    pub lines: Vec<Line>,
    /// The floor per children count.
    pub floor: Vec<(usize, f64)>,
    /// The target per children count (a multiple of its floor).
    pub target: Vec<(usize, f64)>,
}

const COLOURS: [RGBColor; 4] = [
    RGBColor(31, 119, 180),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
];

fn x_of(children: usize) -> f64 {
    (children.max(1) as f64).log2()
}

pub fn draw(path: &Path, p: &SpawnPlot) -> Result<(), String> {
    let e = |e: &dyn std::fmt::Display| format!("drawing {}: {e}", path.display());
    let all = p
        .lines
        .iter()
        .flat_map(|l| l.points.iter())
        .chain(&p.floor)
        .chain(&p.target);
    let (x_max, y_max) = all.fold((0.0f64, 0.0f64), |(x, y), &(c, ms)| {
        (x.max(x_of(c)), y.max(ms))
    });
    if y_max <= 0.0 || !y_max.is_finite() {
        return Err("nothing to plot".into());
    }
    let (x_max, y_top) = (x_max + 0.3, (y_max * 1.1).ceil());
    let root = BitMapBackend::new(path, (900, 480)).into_drawing_area();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let text = plot_text::available();
    let mut builder = ChartBuilder::on(&root);
    builder.margin(20);
    if text {
        builder
            .caption(
                "spawn latency against the fork+exec+exit floor",
                (FAMILY, 20),
            )
            .x_label_area_size(40)
            .y_label_area_size(50);
    }
    let mut chart = builder
        .build_cartesian_2d(-0.3..x_max, 0.0..y_top)
        .map_err(|x| e(&x))?;
    if text {
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc("children per spawn")
            .y_desc("ms")
            .x_label_formatter(&plot_text::pow2_label)
            .label_style((FAMILY, 14))
            .draw()
            .map_err(|x| e(&x))?;
    }
    let grey = RGBColor(225, 225, 225);
    for ms in 1..=y_top as u32 {
        let y = f64::from(ms);
        chart
            .draw_series(LineSeries::new([(-0.3, y), (x_max, y)], grey))
            .map_err(|x| e(&x))?;
    }
    let ticks = p.floor.iter().map(|&(c, _)| x_of(c));
    for x in ticks {
        chart
            .draw_series(LineSeries::new([(x, 0.0), (x, y_top)], grey))
            .map_err(|x| e(&x))?;
    }
    let pts = |v: &[(usize, f64)]| v.iter().map(|&(c, ms)| (x_of(c), ms)).collect::<Vec<_>>();
    let floor = pts(&p.floor);
    chart
        .draw_series(LineSeries::new(floor.clone(), BLACK.stroke_width(2)))
        .map_err(|x| e(&x))?
        .label("floor: N x fork+exec+exit")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(2)));
    chart
        .draw_series(floor.iter().map(|&(x, y)| {
            Rectangle::new(
                [(x - 0.04, y - y_top / 100.0), (x + 0.04, y + y_top / 100.0)],
                BLACK.filled(),
            )
        }))
        .map_err(|x| e(&x))?;
    chart
        .draw_series(
            pts(&p.target)
                .into_iter()
                .map(|c| Cross::new(c, 8, RED.stroke_width(2))),
        )
        .map_err(|x| e(&x))?
        .label("target")
        .legend(|(x, y)| Cross::new((x + 10, y), 6, RED.stroke_width(2)));
    for (i, l) in p.lines.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let v = pts(&l.points);
        chart
            .draw_series(LineSeries::new(v.clone(), colour.stroke_width(3)))
            .map_err(|x| e(&x))?
            .label(format!("ibdyn, {}", l.label))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(3))
            });
        chart
            .draw_series(v.into_iter().map(|c| Circle::new(c, 6, colour.filled())))
            .map_err(|x| e(&x))?;
    }
    if text {
        plot_text::draw_legend(&mut chart, 14)?;
    }
    root.present().map_err(|x| e(&x))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_draws_and_an_empty_one_is_an_error() {
        let p = SpawnPlot {
            lines: vec![Line {
                label: "parents=1".into(),
                points: vec![(1, 1.2), (2, 1.6), (8, 4.0)],
            }],
            floor: vec![(1, 0.5), (2, 0.6), (8, 1.5)],
            target: vec![(1, 0.75), (8, 3.0)],
        };
        crate::plot_text::drawn_png("spawnplot", |file| draw(file, &p));
        let empty = SpawnPlot {
            lines: vec![],
            floor: vec![],
            target: vec![],
        };
        let file = std::env::temp_dir().join(format!("ibdyn-spawnplot-{}.png", std::process::id()));
        assert!(draw(&file, &empty).is_err());
        assert!(!file.exists());
    }
}
