//! A small deterministic ray tracer for the ibdyn master/worker example.
//!
//! A master splits the image into [`Tile`]s ([`tiles`]), sends each worker the scene
//! ([`SceneSource::to_bytes`]) and then tiles ([`Tile::to_bytes`]); a worker answers with
//! [`TileResult::to_bytes`] from [`render_tile`]; the master pastes results into an
//! [`Image`] and writes it with [`Image::write_png`]. Every pixel depends only on the scene
//! and its coordinates, so the image is bit-identical however tiles are distributed.

pub mod bvh;
pub mod camera;
pub mod cli;
pub mod cluster;
pub mod elastic;
pub mod error;
pub mod geometry;
pub mod image;
pub mod light;
pub mod local;
pub mod material;
pub mod render;
pub mod rng;
pub mod scene;
pub mod scene_file;
pub mod schedule;
pub mod tile;
pub mod tracer;
pub mod vec3;

pub use error::{Error, Result};
pub use image::Image;
pub use local::{render_local, render_local_report, LocalReport};
pub use render::{render_pixel, render_tile, render_tile_message};
pub use scene::{RenderSettings, Scene};
pub use scene_file::{parse_scene, RenderOverrides, SceneSource, DEFAULT_SCENE};
pub use schedule::{Completion, ResizeEvent, ResizePlan, TileQueue, WorkerId};
pub use tile::{pixels_to_bytes, tiles, Tile, TileResult};
