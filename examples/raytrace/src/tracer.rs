//! Recursive ray tracer: direct light from area lights with soft shadows, mirror and blurry
//! reflection, refraction with Fresnel (Schlick) for glass.

use crate::geometry::{Ray, EPSILON};
use crate::material::{f0_from_ior, refract, schlick, Material};
use crate::rng::Rng;
use crate::scene::{Hit, Scene};
use crate::vec3::{Color, Vec3};

/// Paths whose contribution falls below this are not followed.
const MIN_WEIGHT: f64 = 0.004;
/// Offset of secondary ray origins from the surface, relative to scene scale ~1.
const SURFACE_OFFSET: f64 = 1e-5;

/// Per-sample state: the random stream and the stratified point on the lights.
pub struct SampleCtx {
    pub rng: Rng,
    pub light_uv: (f64, f64),
}

impl Scene {
    /// Radiance arriving along `ray`; `weight` is how much it still matters to the pixel.
    pub fn trace(&self, ray: &Ray, depth: u32, weight: f64, cx: &mut SampleCtx) -> Color {
        let hit = self.intersect(ray, f64::INFINITY);
        let t_obj = hit.map_or(f64::INFINITY, |h| h.t);
        // Lights are visible in the image and in reflections (highlights).
        for l in &self.lights {
            if l.hit(ray, t_obj).is_some() {
                return l.radiance;
            }
        }
        let Some(hit) = hit else {
            return self.sky(ray.dir);
        };
        match self.materials[hit.material as usize] {
            Material::Diffuse {
                ref color,
                coat,
                roughness,
            } => {
                let n = facing(hit.normal, ray.dir);
                let albedo = color.at(hit.point);
                let mut c = albedo.mul_elem(self.direct(&hit, n, cx) + self.ambient(n));
                if coat > 0.0 && depth < self.settings.max_depth {
                    let f = schlick(-ray.dir.dot(n), coat);
                    if weight * f > MIN_WEIGHT {
                        let dir = glossy(ray.dir.reflect(n), n, roughness, &mut cx.rng);
                        let r =
                            self.trace(&offset_ray(hit.point, n, dir), depth + 1, weight * f, cx);
                        c = c * (1.0 - f) + r * f;
                    }
                }
                c
            }
            Material::Metal { color, roughness } => {
                if depth >= self.settings.max_depth {
                    return color.mul_elem(self.ambient(hit.normal));
                }
                let n = facing(hit.normal, ray.dir);
                // Metals reflect more and more white toward grazing angles.
                let cos = -ray.dir.dot(n);
                let tint = color + (Vec3::ONE - color) * schlick(cos, 0.0);
                let dir = glossy(ray.dir.reflect(n), n, roughness, &mut cx.rng);
                let w = weight * tint.max_component();
                tint.mul_elem(self.trace(&offset_ray(hit.point, n, dir), depth + 1, w, cx))
            }
            Material::Glass { ior, tint } => {
                if depth >= self.settings.max_depth {
                    return tint.mul_elem(self.sky(ray.dir));
                }
                self.glass(ray, &hit, ior, tint, depth, weight, cx)
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn glass(
        &self,
        ray: &Ray,
        hit: &Hit,
        ior: f64,
        tint: Color,
        depth: u32,
        weight: f64,
        cx: &mut SampleCtx,
    ) -> Color {
        let entering = ray.dir.dot(hit.normal) < 0.0;
        let n = facing(hit.normal, ray.dir);
        let eta = if entering { 1.0 / ior } else { ior };
        let f0 = f0_from_ior(1.0, ior);
        let reflect_dir = ray.dir.reflect(n);
        let (fresnel, refracted) = match refract(ray.dir, n, eta) {
            None => (1.0, None),
            Some(t) => {
                // Schlick uses the angle on the air side.
                let cos = if entering { -ray.dir.dot(n) } else { -t.dot(n) };
                (schlick(cos, f0), Some(t))
            }
        };
        let mut c = Vec3::ZERO;
        if weight * fresnel > MIN_WEIGHT {
            let r = offset_ray(hit.point, n, reflect_dir);
            c += self.trace(&r, depth + 1, weight * fresnel, cx) * fresnel;
        }
        if let Some(t) = refracted {
            let k = 1.0 - fresnel;
            let filter = if entering { tint } else { Vec3::ONE };
            let w = weight * k * filter.max_component();
            if w > MIN_WEIGHT {
                let r = offset_ray(hit.point, -n, t);
                c += filter.mul_elem(self.trace(&r, depth + 1, w, cx)) * k;
            }
        }
        c
    }

    /// Light arriving directly from the area lights at a surface point with normal `n`,
    /// already divided by pi (Lambertian).
    fn direct(&self, hit: &Hit, n: Vec3, cx: &mut SampleCtx) -> Color {
        let mut sum = Vec3::ZERO;
        let (su, sv) = cx.light_uv;
        for l in &self.lights {
            let Some(s) = l.sample(hit.point, su, sv) else {
                continue;
            };
            let cos = s.dir.dot(n);
            if cos <= 0.0 {
                continue;
            }
            let shadow = offset_ray(hit.point, n, s.dir);
            let through = self.transmittance(&shadow, s.dist - 2.0 * SURFACE_OFFSET);
            if through.max_component() > 0.0 {
                sum += s.incoming.mul_elem(through) * (cos * std::f64::consts::FRAC_1_PI);
            }
        }
        sum
    }

    fn ambient(&self, n: Vec3) -> Color {
        // Brighter from above, as if lit by the room.
        self.background.ambient * (0.6 + 0.4 * n.y.max(-1.0))
    }
}

/// The normal turned to face the incoming ray.
fn facing(n: Vec3, dir: Vec3) -> Vec3 {
    if n.dot(dir) > 0.0 {
        -n
    } else {
        n
    }
}

fn offset_ray(p: Vec3, side: Vec3, dir: Vec3) -> Ray {
    Ray::new(p + side * SURFACE_OFFSET.max(EPSILON), dir)
}

/// Perturb the mirror direction `r` by `roughness`, staying above the surface.
fn glossy(r: Vec3, n: Vec3, roughness: f64, rng: &mut Rng) -> Vec3 {
    if roughness <= 0.0 {
        return r;
    }
    for _ in 0..4 {
        let d = (r + random_in_unit_sphere(rng) * roughness).normalize();
        if d.dot(n) > 0.0 {
            return d;
        }
    }
    r
}

fn random_in_unit_sphere(rng: &mut Rng) -> Vec3 {
    // Uniform in the ball via direction and cube-root radius (a fixed number of draws keeps
    // the random stream's consumption independent of rejection).
    let z = 2.0 * rng.next_f64() - 1.0;
    let phi = 2.0 * std::f64::consts::PI * rng.next_f64();
    let r = rng.next_f64().cbrt();
    let s = (1.0 - z * z).max(0.0).sqrt();
    Vec3::new(s * phi.cos(), s * phi.sin(), z) * r
}
