//! The output image: tiles are pasted in, the result is written as PNG.

use std::io::BufWriter;
use std::path::Path;

use crate::error::{Error, Result};
use crate::tile::Tile;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    pub width: u32,
    pub height: u32,
    /// Row-major RGB8.
    pub rgb: Vec<u8>,
}

impl Image {
    /// A black image.
    pub fn new(width: u32, height: u32) -> Image {
        Image {
            width,
            height,
            rgb: vec![0; width as usize * height as usize * 3],
        }
    }

    pub fn pixel(&self, x: u32, y: u32) -> [u8; 3] {
        let i = (y as usize * self.width as usize + x as usize) * 3;
        [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
    }

    /// Copy a tile's row-major RGB bytes into place; checks bounds and size.
    pub fn paste(&mut self, tile: &Tile, rgb: &[u8]) -> Result<()> {
        tile.check(self.width, self.height)?;
        let expected = tile.pixel_count() * 3;
        if rgb.len() != expected {
            return Err(Error::TilePixels {
                index: tile.index,
                expected,
                got: rgb.len(),
            });
        }
        let row = tile.width as usize * 3;
        for (r, src) in rgb.chunks_exact(row).enumerate() {
            let start = ((tile.y as usize + r) * self.width as usize + tile.x as usize) * 3;
            self.rgb[start..start + row].copy_from_slice(src);
        }
        Ok(())
    }

    /// Copy pixels as returned by [`crate::render_tile`].
    pub fn paste_pixels(&mut self, tile: &Tile, pixels: &[[u8; 3]]) -> Result<()> {
        self.paste(tile, &crate::tile::pixels_to_bytes(pixels))
    }

    /// Encode as an 8-bit RGB PNG.
    pub fn to_png(&self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.encode(&mut out)?;
        Ok(out)
    }

    fn encode<W: std::io::Write>(&self, w: W) -> Result<()> {
        let mut enc = png::Encoder::new(w, self.width, self.height);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_source_srgb(png::SrgbRenderingIntent::Perceptual);
        let mut writer = enc.write_header()?;
        writer.write_image_data(&self.rgb)?;
        writer.finish()?;
        Ok(())
    }

    pub fn write_png(&self, path: &Path) -> Result<()> {
        let file = std::fs::File::create(path).map_err(|source| Error::WritePng {
            path: path.into(),
            source,
        })?;
        self.encode(BufWriter::new(file)).map_err(|e| match e {
            Error::EncodePng(png::EncodingError::IoError(source)) => Error::WritePng {
                path: path.into(),
                source,
            },
            other => other,
        })
    }

    /// Decode an 8-bit RGB PNG (as written by [`Image::to_png`]).
    pub fn from_png(bytes: &[u8]) -> Result<Image> {
        let decoder = png::Decoder::new(bytes);
        let mut reader = decoder.read_info()?;
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf)?;
        if info.color_type != png::ColorType::Rgb || info.bit_depth != png::BitDepth::Eight {
            return Err(Error::UnsupportedPng(format!(
                "expected an 8-bit RGB PNG, got {:?} {:?}",
                info.color_type, info.bit_depth
            )));
        }
        buf.truncate(info.buffer_size());
        Ok(Image {
            width: info.width,
            height: info.height,
            rgb: buf,
        })
    }
}
