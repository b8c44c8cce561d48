//! A scene ready to render: camera, lights, materials and primitives with their BVH.

use crate::bvh::Bvh;
use crate::camera::Camera;
use crate::geometry::{Ray, Shape, EPSILON};
use crate::light::AreaLight;
use crate::material::Material;
use crate::vec3::{Color, Vec3};

/// How far outside a face we look for another member of its union: a face with another member
/// just outside it is inside the union (this also hides faces where two parts touch).
const UNION_PROBE: f64 = 1e-6;

/// Image size and quality; part of the scene so a tile's pixels depend on the scene alone.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RenderSettings {
    pub width: u32,
    pub height: u32,
    /// Samples per pixel (anti-aliasing, soft shadows, blurry reflections).
    pub spp: u32,
    /// Maximum number of reflection/refraction bounces.
    pub max_depth: u32,
    pub seed: u64,
    /// Multiplier applied before tone mapping.
    pub exposure: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Background {
    /// Colour seen looking straight up / straight down, blended by direction.
    pub top: Color,
    pub bottom: Color,
    /// Constant light standing in for indirect illumination on diffuse surfaces.
    pub ambient: Color,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Primitive {
    pub shape: Shape,
    pub material: u32,
    /// Index into `Scene::unions` when the primitive is part of a merged union.
    pub union: Option<u32>,
}

/// Nearest surface hit.
#[derive(Debug, Clone, Copy)]
pub struct Hit {
    pub t: f64,
    pub point: Vec3,
    /// Outward surface normal (unit).
    pub normal: Vec3,
    pub material: u32,
}

#[derive(Debug, Clone)]
pub struct Scene {
    pub settings: RenderSettings,
    pub camera: Camera,
    pub background: Background,
    pub lights: Vec<AreaLight>,
    pub materials: Vec<Material>,
    pub primitives: Vec<Primitive>,
    /// Members (primitive indices) of each union.
    pub unions: Vec<Vec<u32>>,
    bvh: Bvh,
    unbounded: Vec<u32>,
}

impl Scene {
    /// Assemble a scene; materials referenced by primitives must exist (the parser checks).
    pub fn new(
        settings: RenderSettings,
        camera: Camera,
        background: Background,
        lights: Vec<AreaLight>,
        materials: Vec<Material>,
        primitives: Vec<Primitive>,
        unions: Vec<Vec<u32>>,
    ) -> Scene {
        let mut bounded = Vec::new();
        let mut unbounded = Vec::new();
        for (i, p) in primitives.iter().enumerate() {
            match p.shape.bounds() {
                Some(b) => bounded.push((i as u32, b)),
                None => unbounded.push(i as u32),
            }
        }
        Scene {
            settings,
            camera,
            background,
            lights,
            materials,
            primitives,
            unions,
            bvh: Bvh::build(&bounded),
            unbounded,
        }
    }

    /// Surface crossings of primitive `idx` along `ray` within `(EPSILON, t_max)`, as up to
    /// two `(t, outward normal)` pairs, skipping those buried inside another union member.
    fn crossings(&self, idx: u32, ray: &Ray, t_max: f64) -> [Option<(f64, Vec3)>; 2] {
        let prim = &self.primitives[idx as usize];
        let Some(span) = prim.shape.span(ray) else {
            return [None, None];
        };
        let keep = |t: f64, n: Vec3| -> bool {
            if !(t > EPSILON && t < t_max) {
                return false;
            }
            match prim.union {
                None => true,
                Some(u) => {
                    let outside = ray.at(t) + n * UNION_PROBE;
                    !self.unions[u as usize].iter().any(|&o| {
                        o != idx && self.primitives[o as usize].shape.contains(outside, 0.0)
                    })
                }
            }
        };
        [
            keep(span.t0, span.n0).then_some((span.t0, span.n0)),
            keep(span.t1, span.n1).then_some((span.t1, span.n1)),
        ]
    }

    /// Nearest surface along `ray` before `t_max`.
    pub fn intersect(&self, ray: &Ray, t_max: f64) -> Option<Hit> {
        let best = std::cell::Cell::new((t_max, None::<(Vec3, u32)>));
        let mut consider = |idx: u32| {
            // Ties go to the lower index, so the BVH's visiting order never shows.
            let bound = best.get().0 * (1.0 + 1e-15) + f64::MIN_POSITIVE;
            for (t, n) in self.crossings(idx, ray, bound).into_iter().flatten() {
                let (bt, bh) = best.get();
                let wins = match bh {
                    None => t < bt,
                    Some((_, bi)) => t < bt || (t == bt && idx < bi),
                };
                if wins {
                    best.set((t, Some((n, idx))));
                }
            }
            true
        };
        for &i in &self.unbounded {
            consider(i);
        }
        self.bvh
            .walk(ray.origin, ray.dir, || best.get().0, &mut consider);
        let (t, found) = best.get();
        found.map(|(normal, idx)| Hit {
            t,
            point: ray.at(t),
            normal,
            material: self.primitives[idx as usize].material,
        })
    }

    /// Fraction of light reaching the end of a shadow ray of length `dist`: zero behind an
    /// opaque surface, filtered by every glass surface crossed.
    pub fn transmittance(&self, ray: &Ray, dist: f64) -> Color {
        let filter = std::cell::Cell::new(Vec3::ONE);
        let mut consider = |idx: u32| {
            let material = &self.materials[self.primitives[idx as usize].material as usize];
            for _ in self.crossings(idx, ray, dist).into_iter().flatten() {
                filter.set(filter.get().mul_elem(material.shadow_filter()));
            }
            filter.get().max_component() > 0.0
        };
        for &i in &self.unbounded {
            if !consider(i) {
                return Vec3::ZERO;
            }
        }
        self.bvh.walk(ray.origin, ray.dir, || dist, &mut consider);
        filter.get()
    }

    pub fn sky(&self, dir: Vec3) -> Color {
        let t = 0.5 * (dir.y + 1.0);
        self.background.bottom * (1.0 - t) + self.background.top * t
    }
}
