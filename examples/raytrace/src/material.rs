//! Surface materials and textures.

use crate::vec3::{Color, Vec3};

#[derive(Debug, Clone, PartialEq)]
pub enum Texture {
    Solid(Color),
    /// Squares of side `size` in the XZ plane, alternating `a` and `b`; the square whose
    /// lower corner is `origin` has colour `a`.
    Checker {
        a: Color,
        b: Color,
        size: f64,
        origin: Vec3,
    },
}

impl Texture {
    pub fn at(&self, p: Vec3) -> Color {
        match *self {
            Texture::Solid(c) => c,
            Texture::Checker { a, b, size, origin } => {
                let q = (p - origin) / size;
                // Nudge so points on a square's edge fall consistently on one side.
                let i = (q.x + 1e-9).floor() as i64 + (q.z + 1e-9).floor() as i64;
                if i.rem_euclid(2) == 0 {
                    a
                } else {
                    b
                }
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Material {
    /// Lambertian surface, optionally under a clear coat that reflects like a dielectric
    /// with normal-incidence reflectance `coat` (0 = matte), blurred by `roughness`.
    Diffuse {
        color: Texture,
        coat: f64,
        roughness: f64,
    },
    /// Conductor: tinted mirror reflection blurred by `roughness` (0 = perfect mirror).
    Metal { color: Color, roughness: f64 },
    /// Dielectric with index of refraction `ior`; light passing in is filtered by `tint`.
    Glass { ior: f64, tint: Color },
}

impl Material {
    /// Fraction of light passing through one surface on a shadow ray (0 for opaque).
    pub fn shadow_filter(&self) -> Color {
        match *self {
            // A caustic-free approximation: glass casts a lighter, tinted shadow.
            Material::Glass { tint, .. } => {
                Vec3::new(tint.x.sqrt(), tint.y.sqrt(), tint.z.sqrt()) * 0.8
            }
            _ => Vec3::ZERO,
        }
    }
}

/// Schlick's approximation of the Fresnel reflectance; `cos` is the cosine of the angle
/// on the side of the less dense medium, `f0` the reflectance at normal incidence.
pub fn schlick(cos: f64, f0: f64) -> f64 {
    let m = (1.0 - cos).clamp(0.0, 1.0);
    let m2 = m * m;
    f0 + (1.0 - f0) * m2 * m2 * m
}

/// Reflectance at normal incidence between media of index `n1` and `n2`.
pub fn f0_from_ior(n1: f64, n2: f64) -> f64 {
    let r = (n1 - n2) / (n1 + n2);
    r * r
}

/// Refract unit direction `d` through unit normal `n` (facing against `d`) with ratio
/// `eta = n_from / n_to`; `None` on total internal reflection.
pub fn refract(d: Vec3, n: Vec3, eta: f64) -> Option<Vec3> {
    let cos_i = -d.dot(n);
    let sin2_t = eta * eta * (1.0 - cos_i * cos_i);
    if sin2_t > 1.0 {
        return None;
    }
    let cos_t = (1.0 - sin2_t).sqrt();
    Some(d * eta + n * (eta * cos_i - cos_t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checker_alternates() {
        let t = Texture::Checker {
            a: Vec3::ONE,
            b: Vec3::ZERO,
            size: 1.0,
            origin: Vec3::ZERO,
        };
        assert_eq!(t.at(Vec3::new(0.5, 0.0, 0.5)), Vec3::ONE);
        assert_eq!(t.at(Vec3::new(1.5, 0.0, 0.5)), Vec3::ZERO);
        assert_eq!(t.at(Vec3::new(1.5, 0.0, 1.5)), Vec3::ONE);
        assert_eq!(t.at(Vec3::new(-0.5, 0.0, 0.5)), Vec3::ZERO);
    }

    #[test]
    fn schlick_limits() {
        let f0 = f0_from_ior(1.0, 1.5);
        assert!((f0 - 0.04).abs() < 1e-12);
        assert!((schlick(1.0, f0) - f0).abs() < 1e-12);
        assert!((schlick(0.0, f0) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn refraction_bends_toward_normal_and_total_internal_reflection() {
        let d = Vec3::new(1.0, -1.0, 0.0).normalize();
        let t = refract(d, Vec3::Y, 1.0 / 1.5).unwrap();
        // Snell: sin_t = sin_i / 1.5.
        let sin_t = t.x / t.length();
        assert!((sin_t - (0.5f64.sqrt() / 1.5)).abs() < 1e-12);
        // From inside glass at 45 degrees: beyond the critical angle (41.8 degrees).
        assert!(refract(d, Vec3::Y, 1.5).is_none());
    }
}
