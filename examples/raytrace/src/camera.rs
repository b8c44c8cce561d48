//! Thin-lens perspective camera.

use crate::geometry::Ray;
use crate::vec3::Vec3;

#[derive(Debug, Clone, PartialEq)]
pub struct Camera {
    origin: Vec3,
    /// Image plane (at the focus distance) corner for the top-left of the image.
    top_left: Vec3,
    horizontal: Vec3,
    vertical: Vec3,
    u: Vec3,
    v: Vec3,
    lens_radius: f64,
}

impl Camera {
    /// `vfov_deg`: vertical field of view; `aperture`: lens diameter (0 = pinhole);
    /// `focus_dist`: distance to the plane in sharp focus. Returns `None` for a degenerate view
    /// (`from == at`, `up` parallel to the view direction).
    pub fn new(
        from: Vec3,
        at: Vec3,
        up: Vec3,
        vfov_deg: f64,
        aspect: f64,
        aperture: f64,
        focus_dist: f64,
    ) -> Option<Self> {
        let w = (from - at).normalize();
        let u = up.cross(w).normalize();
        if w.length_squared() == 0.0 || u.length_squared() == 0.0 || !u.is_finite() {
            return None;
        }
        let v = w.cross(u);
        let half_h = (vfov_deg.to_radians() / 2.0).tan();
        let half_w = aspect * half_h;
        let horizontal = u * (2.0 * half_w * focus_dist);
        let vertical = -v * (2.0 * half_h * focus_dist);
        let top_left = from - w * focus_dist - horizontal * 0.5 - vertical * 0.5;
        Some(Camera {
            origin: from,
            top_left,
            horizontal,
            vertical,
            u,
            v,
            lens_radius: aperture / 2.0,
        })
    }

    /// Ray through image position `(s, t)` in [0,1]^2 (t = 0 at the top), with lens sample
    /// `(a, b)` in [0,1)^2.
    pub fn ray(&self, s: f64, t: f64, a: f64, b: f64) -> Ray {
        let target = self.top_left + self.horizontal * s + self.vertical * t;
        let origin = if self.lens_radius > 0.0 {
            // Uniform point on the lens disc.
            let r = self.lens_radius * a.sqrt();
            let phi = 2.0 * std::f64::consts::PI * b;
            self.origin + self.u * (r * phi.cos()) + self.v * (r * phi.sin())
        } else {
            self.origin
        };
        Ray::new(origin, target - origin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn centre_ray_looks_at_target() {
        let c = Camera::new(
            Vec3::new(0.0, 0.0, -5.0),
            Vec3::ZERO,
            Vec3::Y,
            60.0,
            2.0,
            0.0,
            5.0,
        )
        .unwrap();
        let r = c.ray(0.5, 0.5, 0.0, 0.0);
        assert!((r.dir - Vec3::new(0.0, 0.0, 1.0)).length() < 1e-12);
        // Top of the image looks up.
        assert!(c.ray(0.5, 0.0, 0.0, 0.0).dir.y > 0.0);
        assert!(Camera::new(Vec3::ZERO, Vec3::Y, Vec3::Y, 60.0, 1.0, 0.0, 1.0).is_none());
    }
}
