//! Rectangular pieces of the image: the unit of work handed to a worker, and the messages that
//! carry tiles and their pixels.

use crate::error::{Error, Result};

/// A rectangle of pixels; `index` is its position in [`tiles`] order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tile {
    pub index: u32,
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
}

/// Size of [`Tile::to_bytes`].
pub const TILE_BYTES: usize = 20;

impl Tile {
    pub fn pixel_count(&self) -> usize {
        self.width as usize * self.height as usize
    }

    /// Is the tile non-empty and inside a `width` x `height` image?
    pub fn check(&self, width: u32, height: u32) -> Result<()> {
        let fits = self.width > 0
            && self.height > 0
            && u64::from(self.x) + u64::from(self.width) <= u64::from(width)
            && u64::from(self.y) + u64::from(self.height) <= u64::from(height);
        if fits {
            Ok(())
        } else {
            Err(Error::TileOutOfBounds {
                index: self.index,
                x: self.x,
                y: self.y,
                width: self.width,
                height: self.height,
                image_width: width,
                image_height: height,
            })
        }
    }

    /// Five little-endian u32: index, x, y, width, height.
    pub fn to_bytes(&self) -> [u8; TILE_BYTES] {
        let mut out = [0u8; TILE_BYTES];
        for (i, v) in [self.index, self.x, self.y, self.width, self.height]
            .into_iter()
            .enumerate()
        {
            out[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
        }
        out
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Tile> {
        if bytes.len() != TILE_BYTES {
            return Err(Error::TileMessage(format!(
                "a tile is {TILE_BYTES} bytes, got {}",
                bytes.len()
            )));
        }
        let w = |i: usize| {
            u32::from_le_bytes([
                bytes[4 * i],
                bytes[4 * i + 1],
                bytes[4 * i + 2],
                bytes[4 * i + 3],
            ])
        };
        Ok(Tile {
            index: w(0),
            x: w(1),
            y: w(2),
            width: w(3),
            height: w(4),
        })
    }
}

/// Cover a `width` x `height` image with tiles of at most `tile_size` square, row by row.
/// Returns no tiles when any argument is zero.
pub fn tiles(width: u32, height: u32, tile_size: u32) -> Vec<Tile> {
    let mut out = Vec::new();
    if tile_size == 0 {
        return out;
    }
    let mut y = 0;
    while y < height {
        let h = tile_size.min(height - y);
        let mut x = 0;
        while x < width {
            let w = tile_size.min(width - x);
            out.push(Tile {
                index: out.len() as u32,
                x,
                y,
                width: w,
                height: h,
            });
            x += w;
        }
        y += h;
    }
    out
}

/// Flatten pixels to RGB bytes.
pub fn pixels_to_bytes(pixels: &[[u8; 3]]) -> Vec<u8> {
    pixels.iter().flatten().copied().collect()
}

/// A rendered tile as a message: the tile header followed by its RGB bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TileResult {
    pub tile: Tile,
    /// Row-major RGB, 3 bytes per pixel.
    pub rgb: Vec<u8>,
}

impl TileResult {
    pub fn new(tile: Tile, pixels: &[[u8; 3]]) -> TileResult {
        TileResult {
            tile,
            rgb: pixels_to_bytes(pixels),
        }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(TILE_BYTES + self.rgb.len());
        out.extend_from_slice(&self.tile.to_bytes());
        out.extend_from_slice(&self.rgb);
        out
    }

    /// Parse and check that the pixel count matches the tile.
    pub fn from_bytes(bytes: &[u8]) -> Result<TileResult> {
        if bytes.len() < TILE_BYTES {
            return Err(Error::TileMessage(format!(
                "a tile result is at least {TILE_BYTES} bytes, got {}",
                bytes.len()
            )));
        }
        let tile = Tile::from_bytes(&bytes[..TILE_BYTES])?;
        let rgb = bytes[TILE_BYTES..].to_vec();
        let expected = tile.pixel_count() * 3;
        if rgb.len() != expected {
            return Err(Error::TilePixels {
                index: tile.index,
                expected,
                got: rgb.len(),
            });
        }
        Ok(TileResult { tile, rgb })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_cover_image_once() {
        let ts = tiles(50, 30, 16);
        assert_eq!(ts.len(), 4 * 2);
        let mut covered = vec![0u8; 50 * 30];
        for t in &ts {
            t.check(50, 30).unwrap();
            for y in t.y..t.y + t.height {
                for x in t.x..t.x + t.width {
                    covered[(y * 50 + x) as usize] += 1;
                }
            }
        }
        assert!(covered.iter().all(|&c| c == 1));
        assert_eq!(
            ts[7],
            Tile {
                index: 7,
                x: 48,
                y: 16,
                width: 2,
                height: 14
            }
        );
        assert!(tiles(10, 10, 0).is_empty());
    }

    #[test]
    fn tile_bytes_round_trip_and_errors() {
        let t = Tile {
            index: 3,
            x: 64,
            y: 32,
            width: 16,
            height: 8,
        };
        assert_eq!(Tile::from_bytes(&t.to_bytes()).unwrap(), t);
        assert!(matches!(
            Tile::from_bytes(&[0; 7]),
            Err(Error::TileMessage(_))
        ));
        assert!(t.check(70, 40).is_err());
        let r = TileResult::new(t, &vec![[1, 2, 3]; 128]);
        assert_eq!(TileResult::from_bytes(&r.to_bytes()).unwrap(), r);
        let mut short = r.to_bytes();
        short.pop();
        assert!(matches!(
            TileResult::from_bytes(&short),
            Err(Error::TilePixels { .. })
        ));
    }
}
