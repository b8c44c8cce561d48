//! Turning tiles into pixels: deterministic per pixel sample, so the image is the same
//! whichever process or thread renders which tile, in whatever order.

use crate::error::Result;
use crate::rng::{mix64, sample_seed, Rng};
use crate::scene::Scene;
use crate::tile::{Tile, TileResult};
use crate::tracer::SampleCtx;
use crate::vec3::{Color, Vec3};

/// Per-sample radiance cap: keeps rare very bright paths from leaving white specks.
const FIREFLY_CLAMP: f64 = 8.0;

/// Render one tile: row-major pixels, `tile.width * tile.height` of them. The result depends
/// only on the scene and the tile's coordinates. Pixels outside the image are rendered as
/// if the image went on (check tiles from the wire with [`Tile::check`]).
pub fn render_tile(scene: &Scene, tile: Tile) -> Vec<[u8; 3]> {
    let mut out = Vec::with_capacity(tile.pixel_count());
    for y in tile.y..tile.y.saturating_add(tile.height) {
        for x in tile.x..tile.x.saturating_add(tile.width) {
            out.push(to_srgb8(
                render_pixel(scene, x, y) * scene.settings.exposure,
            ));
        }
    }
    out
}

/// Average linear radiance of pixel `(x, y)`.
pub fn render_pixel(scene: &Scene, x: u32, y: u32) -> Color {
    let s = &scene.settings;
    let grid = (f64::from(s.spp).sqrt().ceil() as u32).max(1);
    let cells = grid * grid;
    // Light strata are the pixel strata transposed and shifted per pixel, so the light
    // sample does not follow the position inside the pixel.
    let h = mix64(s.seed ^ ((u64::from(x) << 32) | u64::from(y)) ^ 0x5bd1_e995);
    let (ox, oy) = (
        (h % u64::from(grid)) as u32,
        ((h >> 32) % u64::from(grid)) as u32,
    );
    let g = f64::from(grid);
    let mut sum = Vec3::ZERO;
    for i in 0..s.spp {
        let mut rng = Rng::new(sample_seed(s.seed, x, y, i));
        let cell = i % cells;
        let (cx, cy) = (cell % grid, cell / grid);
        let jx = (f64::from(cx) + rng.next_f64()) / g;
        let jy = (f64::from(cy) + rng.next_f64()) / g;
        let lu = (f64::from((cy + ox) % grid) + rng.next_f64()) / g;
        let lv = (f64::from((cx + oy) % grid) + rng.next_f64()) / g;
        let (a, b) = (rng.next_f64(), rng.next_f64());
        let ray = scene.camera.ray(
            (f64::from(x) + jx) / f64::from(s.width),
            (f64::from(y) + jy) / f64::from(s.height),
            a,
            b,
        );
        let mut cx = SampleCtx {
            rng,
            light_uv: (lu, lv),
        };
        let c = scene.trace(&ray, 0, 1.0, &mut cx);
        if c.is_finite() {
            sum += c.min(Vec3::splat(FIREFLY_CLAMP));
        }
    }
    sum / f64::from(s.spp)
}

/// Filmic tone curve (Narkowicz's ACES fit) followed by the sRGB transfer function.
fn to_srgb8(c: Color) -> [u8; 3] {
    let map = |v: f64| {
        let v = v.max(0.0);
        let t = (v * (2.51 * v + 0.03)) / (v * (2.43 * v + 0.59) + 0.14);
        let t = t.clamp(0.0, 1.0);
        let s = if t <= 0.003_130_8 {
            12.92 * t
        } else {
            1.055 * t.powf(1.0 / 2.4) - 0.055
        };
        (s * 255.0 + 0.5).clamp(0.0, 255.0) as u8
    };
    [map(c.x), map(c.y), map(c.z)]
}

/// A worker's whole job for one message: decode the tile, check it fits the image, render
/// it and encode the answer ([`TileResult`] bytes).
pub fn render_tile_message(scene: &Scene, tile_bytes: &[u8]) -> Result<Vec<u8>> {
    let tile = Tile::from_bytes(tile_bytes)?;
    tile.check(scene.settings.width, scene.settings.height)?;
    Ok(TileResult::new(tile, &render_tile(scene, tile)).to_bytes())
}
