//! Text in the benchmark plots. plotters draws glyphs only from a font registered at run time
//! (its `ab_glyph` feature: no system library at build time), so a TrueType file is taken from
//! `IBDYN_PLOT_FONT` or the usual Debian places; without one a plot is drawn without text.

use plotters::style::FontStyle;
use std::path::PathBuf;
use std::sync::OnceLock;

pub const FAMILY: &str = "sans-serif";

const KNOWN: [&str; 3] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/truetype/freefont/FreeSans.ttf",
];

/// Whether plots can carry text; the first call registers the font.
pub fn available() -> bool {
    static READY: OnceLock<bool> = OnceLock::new();
    *READY.get_or_init(|| {
        let chosen = std::env::var_os("IBDYN_PLOT_FONT").map(PathBuf::from);
        for path in chosen.into_iter().chain(KNOWN.iter().map(PathBuf::from)) {
            let Ok(bytes) = std::fs::read(&path) else {
                continue;
            };
            // plotters keeps fonts for the life of the process.
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            if plotters::style::register_font(FAMILY, FontStyle::Normal, bytes).is_ok() {
                return true;
            }
            eprintln!("note: {} is not a usable TrueType font", path.display());
        }
        eprintln!(
            "note: no font found (apt-get install fonts-dejavu-core, or set \
             IBDYN_PLOT_FONT=/path/to/font.ttf): the plot is drawn without text"
        );
        false
    })
}

/// An x label for a log2 axis: the power of two at whole positions, nothing between them.
pub fn pow2_label(x: &f64) -> String {
    if *x >= 0.0 && (x - x.round()).abs() < 1e-6 {
        format!("{}", 1u64 << (x.round() as u32).min(63))
    } else {
        String::new()
    }
}

/// The legend of a chart whose series carry labels, in its upper left corner.
pub fn draw_legend<'a, DB, CT>(
    chart: &mut plotters::chart::ChartContext<'a, DB, CT>,
    size: u32,
) -> Result<(), String>
where
    DB: plotters::prelude::DrawingBackend + 'a,
    CT: plotters::coord::CoordTranslate,
{
    use plotters::prelude::*;
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font((FAMILY, size))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|x| format!("drawing the legend: {x}"))
}

/// Tests: what `draw` writes to a scratch file, checked to be a PNG; the file is removed.
#[cfg(test)]
pub fn drawn_png(name: &str, draw: impl FnOnce(&std::path::Path) -> Result<(), String>) {
    let file = std::env::temp_dir().join(format!("ibdyn-{name}-{}.png", std::process::id()));
    draw(&file).unwrap();
    let bytes = std::fs::read(&file).unwrap();
    std::fs::remove_file(&file).unwrap();
    assert_eq!(&bytes[1..4], b"PNG");
}
