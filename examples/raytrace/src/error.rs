//! The crate's error type.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("reading scene file {path}: {source}")]
    ReadScene {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The scene text is not valid TOML or does not have the expected fields; `message`
    /// names the line and column.
    #[error("scene {origin}: {message}")]
    SceneSyntax { origin: String, message: String },
    /// A well-formed scene with a bad value.
    #[error("scene {origin}, line {line}: {item}: {message}")]
    SceneInvalid {
        origin: String,
        line: usize,
        item: String,
        message: String,
    },
    #[error("malformed scene message: {0}")]
    SceneMessage(String),
    #[error("malformed tile message: {0}")]
    TileMessage(String),
    #[error("tile {index} ({x},{y} {width}x{height}) does not fit the {image_width}x{image_height} image")]
    TileOutOfBounds {
        index: u32,
        x: u32,
        y: u32,
        width: u32,
        height: u32,
        image_width: u32,
        image_height: u32,
    },
    #[error("tile {index}: expected {expected} pixel bytes, got {got}")]
    TilePixels {
        index: u32,
        expected: usize,
        got: usize,
    },
    #[error("writing PNG {path}: {source}")]
    WritePng {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("encoding PNG: {0}")]
    EncodePng(#[from] png::EncodingError),
    #[error("decoding PNG: {0}")]
    DecodePng(#[from] png::DecodingError),
    #[error("unsupported PNG: {0}")]
    UnsupportedPng(String),
    #[error("all workers are gone with {missing} of {total} tiles missing")]
    WorkersGone { missing: usize, total: usize },
    #[error("no worker answered within {0:?}")]
    NoAnswer(std::time::Duration),
    #[error("{0}")]
    Usage(String),
    #[error("communication: {0}")]
    Comm(#[from] ibdyn::CommError),
}

pub type Result<T> = std::result::Result<T, Error>;
