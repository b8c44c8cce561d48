//! Rectangular area lights: soft shadows come from sampling points across the rectangle.

use crate::geometry::Ray;
use crate::vec3::{Color, Vec3};

#[derive(Debug, Clone, PartialEq)]
pub struct AreaLight {
    pub corner: Vec3,
    pub edge_u: Vec3,
    pub edge_v: Vec3,
    /// Emitted radiance (colour times intensity), the same from both faces.
    pub radiance: Color,
    normal: Vec3,
    area: f64,
}

/// A point on a light seen from a shaded point.
#[derive(Debug, Clone, Copy)]
pub struct LightSample {
    /// Unit direction from the shaded point toward the light point.
    pub dir: Vec3,
    pub dist: f64,
    /// Irradiance factor: radiance * cos(light) * area / dist^2 (times 1 for the surface cosine,
    /// which the caller applies).
    pub incoming: Color,
}

impl AreaLight {
    /// `None` when the edges are parallel or zero (no area).
    pub fn new(corner: Vec3, edge_u: Vec3, edge_v: Vec3, radiance: Color) -> Option<Self> {
        let cross = edge_u.cross(edge_v);
        let area = cross.length();
        if area.is_nan() || area <= 0.0 {
            return None;
        }
        Some(AreaLight {
            corner,
            edge_u,
            edge_v,
            radiance,
            normal: cross / area,
            area,
        })
    }

    pub fn center(&self) -> Vec3 {
        self.corner + (self.edge_u + self.edge_v) * 0.5
    }

    /// Sample the point at rectangle coordinates `(su, sv)` in [0,1)^2 as seen from `p`.
    pub fn sample(&self, p: Vec3, su: f64, sv: f64) -> Option<LightSample> {
        let q = self.corner + self.edge_u * su + self.edge_v * sv;
        let to = q - p;
        let dist2 = to.length_squared();
        if dist2 <= 0.0 {
            return None;
        }
        let dist = dist2.sqrt();
        let dir = to / dist;
        let cos_l = dir.dot(self.normal).abs();
        Some(LightSample {
            dir,
            dist,
            incoming: self.radiance * (cos_l * self.area / dist2),
        })
    }

    /// Distance along `ray` to the rectangle, if it is hit before `t_max`.
    pub fn hit(&self, ray: &Ray, t_max: f64) -> Option<f64> {
        let denom = ray.dir.dot(self.normal);
        if denom.abs() < 1e-12 {
            return None;
        }
        let t = (self.corner - ray.origin).dot(self.normal) / denom;
        if t <= 1e-6 || t >= t_max {
            return None;
        }
        let rel = ray.at(t) - self.corner;
        let a = rel.dot(self.edge_u) / self.edge_u.length_squared();
        let b = rel.dot(self.edge_v) / self.edge_v.length_squared();
        ((0.0..=1.0).contains(&a) && (0.0..=1.0).contains(&b)).then_some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ceiling_light() -> AreaLight {
        AreaLight::new(
            Vec3::new(-1.0, 4.0, -1.0),
            Vec3::new(2.0, 0.0, 0.0),
            Vec3::new(0.0, 0.0, 2.0),
            Vec3::ONE,
        )
        .unwrap()
    }

    #[test]
    fn hit_inside_and_outside() {
        let l = ceiling_light();
        assert_eq!(l.hit(&Ray::new(Vec3::ZERO, Vec3::Y), 100.0), Some(4.0));
        assert_eq!(
            l.hit(&Ray::new(Vec3::new(3.0, 0.0, 0.0), Vec3::Y), 100.0),
            None
        );
        assert_eq!(l.hit(&Ray::new(Vec3::ZERO, Vec3::Y), 3.0), None);
    }

    #[test]
    fn sample_falls_off_with_distance() {
        let l = ceiling_light();
        let near = l.sample(Vec3::new(0.0, 2.0, 0.0), 0.5, 0.5).unwrap();
        let far = l.sample(Vec3::ZERO, 0.5, 0.5).unwrap();
        assert!((near.incoming.x / far.incoming.x - 4.0).abs() < 1e-9);
        assert!(AreaLight::new(Vec3::ZERO, Vec3::Y, Vec3::Y, Vec3::ONE).is_none());
    }
}
