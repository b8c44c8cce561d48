//! Scene description files (TOML) and their translation into a [`Scene`].
//!
//! ```toml
//! [render]      # width, height, spp, max_depth, seed, exposure
//! [camera]      # from, at, up, fov (vertical, degrees), aperture, focus
//! [background]  # top, bottom, ambient
//! [[light]]     # rectangle: corner, u, v (edges), color, intensity
//! [materials.NAME]  # kind = "diffuse" (color or checker, coat, roughness)
//!                   #      | "metal" (color, roughness) | "glass" (ior, tint)
//! [[object]]    # shape = "sphere" | "ellipsoid" | "plane" | "box" | "cylinder" | "cone", material
//! [prefab.NAME] # parts = [ shapes in local coordinates, material optional ]
//! [[instance]]  # prefab, at, yaw (degrees), scale, material, merge (default true)
//! ```
//! A merged instance renders as one solid: inner faces where its parts overlap are hidden,
//! which matters for glass.

use std::collections::BTreeMap;
use std::ops::Range;

use serde::Deserialize;
use toml::Spanned;

use crate::camera::Camera;
use crate::error::{Error, Result};
use crate::geometry::Shape;
use crate::light::AreaLight;
use crate::material::{Material, Texture};
use crate::scene::{Background, Primitive, RenderSettings, Scene};
use crate::vec3::Vec3;

/// The glass-and-metal chess board shipped with the program.
pub const DEFAULT_SCENE: &str = include_str!("../scenes/chess.toml");

const MAX_SIDE: u32 = 1 << 14;
const MAX_SPP: u32 = 1 << 16;
const MAX_DEPTH: u32 = 64;

type V3 = [f64; 3];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SceneFile {
    render: Spanned<RenderSpec>,
    camera: Spanned<CameraSpec>,
    #[serde(default)]
    background: Option<Spanned<BackgroundSpec>>,
    #[serde(default, rename = "light")]
    lights: Vec<Spanned<LightSpec>>,
    #[serde(default)]
    materials: BTreeMap<String, Spanned<MaterialSpec>>,
    #[serde(default, rename = "object")]
    objects: Vec<Spanned<ObjectSpec>>,
    #[serde(default)]
    prefab: BTreeMap<String, Spanned<PrefabSpec>>,
    #[serde(default, rename = "instance")]
    instances: Vec<Spanned<InstanceSpec>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RenderSpec {
    width: u32,
    height: u32,
    #[serde(default = "default_spp")]
    spp: u32,
    #[serde(default = "default_depth")]
    max_depth: u32,
    #[serde(default)]
    seed: u64,
    #[serde(default = "one")]
    exposure: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CameraSpec {
    from: V3,
    at: V3,
    #[serde(default = "up")]
    up: V3,
    #[serde(default = "default_fov")]
    fov: f64,
    #[serde(default)]
    aperture: f64,
    focus: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BackgroundSpec {
    top: V3,
    bottom: V3,
    #[serde(default)]
    ambient: V3,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LightSpec {
    corner: V3,
    u: V3,
    v: V3,
    #[serde(default = "white")]
    color: V3,
    #[serde(default = "one")]
    intensity: f64,
}

#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
enum MaterialSpec {
    Diffuse {
        color: Option<V3>,
        checker: Option<CheckerSpec>,
        #[serde(default)]
        coat: f64,
        #[serde(default)]
        roughness: f64,
    },
    Metal {
        color: V3,
        #[serde(default)]
        roughness: f64,
    },
    Glass {
        #[serde(default = "default_ior")]
        ior: f64,
        #[serde(default = "white")]
        tint: V3,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckerSpec {
    a: V3,
    b: V3,
    #[serde(default = "one")]
    size: f64,
    #[serde(default)]
    origin: V3,
}

/// A shape plus (for objects, required; for prefab parts, optional) its material name.
#[derive(Deserialize)]
struct ObjectSpec {
    material: Option<String>,
    #[serde(flatten)]
    shape: ShapeSpec,
}

#[derive(Deserialize)]
#[serde(tag = "shape", rename_all = "lowercase", deny_unknown_fields)]
enum ShapeSpec {
    Sphere {
        center: V3,
        radius: f64,
    },
    Ellipsoid {
        center: V3,
        radii: V3,
        #[serde(default)]
        yaw: f64,
    },
    Plane {
        point: V3,
        normal: V3,
    },
    Box {
        min: V3,
        max: V3,
        #[serde(default)]
        yaw: f64,
    },
    Cylinder {
        base: V3,
        top: V3,
        radius: f64,
    },
    Cone {
        base: V3,
        top: V3,
        base_radius: f64,
        #[serde(default)]
        top_radius: f64,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PrefabSpec {
    parts: Vec<Spanned<ObjectSpec>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InstanceSpec {
    prefab: String,
    at: V3,
    #[serde(default)]
    yaw: f64,
    #[serde(default = "one")]
    scale: f64,
    material: String,
    #[serde(default = "yes")]
    merge: bool,
}

fn default_spp() -> u32 {
    16
}
fn default_depth() -> u32 {
    8
}
fn default_fov() -> f64 {
    45.0
}
fn default_ior() -> f64 {
    1.5
}
fn one() -> f64 {
    1.0
}
fn yes() -> bool {
    true
}
fn up() -> V3 {
    [0.0, 1.0, 0.0]
}
fn white() -> V3 {
    [1.0, 1.0, 1.0]
}

/// Values given on the command line that replace the scene file's `[render]` section.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RenderOverrides {
    pub width: Option<u32>,
    pub height: Option<u32>,
    pub spp: Option<u32>,
    pub max_depth: Option<u32>,
}

/// Everything needed to build a scene: its text, a name for error messages and the
/// command-line overrides. This is what a master sends its workers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SceneSource {
    pub origin: String,
    pub text: String,
    pub overrides: RenderOverrides,
}

const SCENE_MAGIC: &[u8; 4] = b"RTS1";

impl SceneSource {
    pub fn default_chess(overrides: RenderOverrides) -> SceneSource {
        SceneSource {
            origin: "chess.toml (built in)".into(),
            text: DEFAULT_SCENE.into(),
            overrides,
        }
    }

    pub fn from_file(path: &std::path::Path, overrides: RenderOverrides) -> Result<SceneSource> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::ReadScene {
            path: path.into(),
            source,
        })?;
        Ok(SceneSource {
            origin: path.display().to_string(),
            text,
            overrides,
        })
    }

    /// Parse and check the scene.
    pub fn build(&self) -> Result<Scene> {
        parse_scene(&self.origin, &self.text, &self.overrides)
    }

    /// A 64-bit digest of the wire form: master and workers can compare it to make sure
    /// they render the same scene at the same settings.
    pub fn fingerprint(&self) -> u64 {
        self.to_bytes()
            .chunks(8)
            .fold(0x6a09_e667_f3bc_c908, |h, c| {
                let mut w = [0u8; 8];
                w[..c.len()].copy_from_slice(c);
                crate::rng::mix64(h ^ u64::from_le_bytes(w)).wrapping_add(c.len() as u64)
            })
    }

    /// Wire form: magic, four override words (0 = not given), origin length, origin, text.
    pub fn to_bytes(&self) -> Vec<u8> {
        let o = &self.overrides;
        let mut out = Vec::with_capacity(28 + self.origin.len() + self.text.len());
        out.extend_from_slice(SCENE_MAGIC);
        for v in [o.width, o.height, o.spp, o.max_depth] {
            out.extend_from_slice(&v.unwrap_or(0).to_le_bytes());
        }
        out.extend_from_slice(&(self.origin.len() as u32).to_le_bytes());
        out.extend_from_slice(self.origin.as_bytes());
        out.extend_from_slice(self.text.as_bytes());
        out
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<SceneSource> {
        let bad = |m: &str| Error::SceneMessage(m.to_string());
        if bytes.len() < 24 || &bytes[..4] != SCENE_MAGIC {
            return Err(bad("too short or wrong magic"));
        }
        let word =
            |i: usize| u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
        let opt = |v: u32| (v != 0).then_some(v);
        let overrides = RenderOverrides {
            width: opt(word(4)),
            height: opt(word(8)),
            spp: opt(word(12)),
            max_depth: opt(word(16)),
        };
        let origin_len = word(20) as usize;
        let rest = &bytes[24..];
        if origin_len > rest.len() {
            return Err(bad("origin length past the end"));
        }
        let origin =
            std::str::from_utf8(&rest[..origin_len]).map_err(|_| bad("origin is not UTF-8"))?;
        let text =
            std::str::from_utf8(&rest[origin_len..]).map_err(|_| bad("text is not UTF-8"))?;
        Ok(SceneSource {
            origin: origin.into(),
            text: text.into(),
            overrides,
        })
    }
}

/// Builds errors that point at a line of the scene text.
struct Ctx<'a> {
    origin: &'a str,
    text: &'a str,
}

impl Ctx<'_> {
    fn err(
        &self,
        span: Range<usize>,
        item: impl Into<String>,
        message: impl Into<String>,
    ) -> Error {
        let end = span.start.min(self.text.len());
        Error::SceneInvalid {
            origin: self.origin.to_string(),
            line: self.text[..end].matches('\n').count() + 1,
            item: item.into(),
            message: message.into(),
        }
    }
}

fn finite(v: V3) -> bool {
    v.iter().all(|x| x.is_finite())
}

fn color(v: V3, what: &str) -> std::result::Result<Vec3, String> {
    if !finite(v) || v.iter().any(|&x| x < 0.0) {
        return Err(format!("{what} must be finite and non-negative, got {v:?}"));
    }
    Ok(v.into())
}

fn point(v: V3, what: &str) -> std::result::Result<Vec3, String> {
    if !finite(v) {
        return Err(format!("{what} must be finite, got {v:?}"));
    }
    Ok(v.into())
}

fn positive(x: f64, what: &str) -> std::result::Result<f64, String> {
    if !(x.is_finite() && x > 0.0) {
        return Err(format!("{what} must be > 0, got {x}"));
    }
    Ok(x)
}

fn unit_interval(x: f64, what: &str) -> std::result::Result<f64, String> {
    if !(0.0..=1.0).contains(&x) {
        return Err(format!("{what} must be in [0, 1], got {x}"));
    }
    Ok(x)
}

/// Parse scene text (`origin` names it in errors).
pub fn parse_scene(origin: &str, text: &str, overrides: &RenderOverrides) -> Result<Scene> {
    let file: SceneFile = toml::from_str(text).map_err(|e| Error::SceneSyntax {
        origin: origin.to_string(),
        message: e.to_string().trim_end().to_string(),
    })?;
    let cx = Ctx { origin, text };

    let settings = render_settings(&cx, &file.render, overrides)?;
    let camera = camera(&cx, &file.camera, &settings)?;
    let background = match &file.background {
        None => Background {
            top: Vec3::splat(0.5),
            bottom: Vec3::splat(0.1),
            ambient: Vec3::splat(0.05),
        },
        Some(b) => {
            let e = |m: String| cx.err(b.span(), "[background]", m);
            let bg = b.get_ref();
            Background {
                top: color(bg.top, "top").map_err(e)?,
                bottom: color(bg.bottom, "bottom").map_err(e)?,
                ambient: color(bg.ambient, "ambient").map_err(e)?,
            }
        }
    };

    let mut lights = Vec::new();
    for (i, l) in file.lights.iter().enumerate() {
        let item = format!("light {}", i + 1);
        let e = |m: String| cx.err(l.span(), &item, m);
        let s = l.get_ref();
        let radiance =
            color(s.color, "color").map_err(e)? * positive(s.intensity, "intensity").map_err(e)?;
        let light = AreaLight::new(
            point(s.corner, "corner").map_err(e)?,
            point(s.u, "u").map_err(e)?,
            point(s.v, "v").map_err(e)?,
            radiance,
        )
        .ok_or_else(|| e("edges u and v must be non-zero and not parallel".into()))?;
        lights.push(light);
    }

    let mut materials = Vec::new();
    let mut material_index = BTreeMap::new();
    for (name, m) in &file.materials {
        let item = format!("material {name:?}");
        let built = material(m.get_ref()).map_err(|msg| cx.err(m.span(), &item, msg))?;
        material_index.insert(name.as_str(), materials.len() as u32);
        materials.push(built);
    }
    let known = || {
        file.materials
            .keys()
            .cloned()
            .collect::<Vec<_>>()
            .join(", ")
    };
    let lookup = |name: &str| -> std::result::Result<u32, String> {
        material_index
            .get(name)
            .copied()
            .ok_or_else(|| format!("unknown material {name:?} (known: {})", known()))
    };

    let mut primitives = Vec::new();
    for (i, o) in file.objects.iter().enumerate() {
        let item = format!("object {} ({})", i + 1, o.get_ref().shape.name());
        let e = |m: String| cx.err(o.span(), &item, m);
        let name = o
            .get_ref()
            .material
            .as_deref()
            .ok_or_else(|| e("missing field `material`".into()))?;
        primitives.push(Primitive {
            shape: o.get_ref().shape.build(1.0).map_err(e)?,
            material: lookup(name).map_err(e)?,
            union: None,
        });
    }

    let mut prefabs = BTreeMap::new();
    for (name, p) in &file.prefab {
        let mut parts = Vec::new();
        for (j, part) in p.get_ref().parts.iter().enumerate() {
            let item = format!(
                "prefab {name:?} part {} ({})",
                j + 1,
                part.get_ref().shape.name()
            );
            let e = |m: String| cx.err(part.span(), &item, m);
            let own = match part.get_ref().material.as_deref() {
                Some(m) => Some(lookup(m).map_err(e)?),
                None => None,
            };
            // Build once at unit scale to check the values.
            part.get_ref().shape.build(1.0).map_err(e)?;
            parts.push((&part.get_ref().shape, own));
        }
        if parts.is_empty() {
            return Err(cx.err(p.span(), format!("prefab {name:?}"), "has no parts"));
        }
        prefabs.insert(name.as_str(), parts);
    }

    let mut unions = Vec::new();
    for (i, inst) in file.instances.iter().enumerate() {
        let s = inst.get_ref();
        let item = format!("instance {} ({})", i + 1, s.prefab);
        let e = |m: String| cx.err(inst.span(), &item, m);
        let parts = prefabs.get(s.prefab.as_str()).ok_or_else(|| {
            e(format!(
                "unknown prefab {:?} (known: {})",
                s.prefab,
                file.prefab.keys().cloned().collect::<Vec<_>>().join(", ")
            ))
        })?;
        let material = lookup(&s.material).map_err(e)?;
        let scale = positive(s.scale, "scale").map_err(e)?;
        let at = point(s.at, "at").map_err(e)?;
        if !s.yaw.is_finite() {
            return Err(e(format!("yaw must be finite, got {}", s.yaw)));
        }
        let union = (s.merge && parts.len() > 1).then_some(unions.len() as u32);
        let mut members = Vec::new();
        for (shape, own) in parts {
            let local = shape.build(scale).map_err(e)?;
            members.push(primitives.len() as u32);
            primitives.push(Primitive {
                shape: local.placed(s.yaw.to_radians(), Vec3::ZERO, at),
                material: own.unwrap_or(material),
                union,
            });
        }
        if union.is_some() {
            unions.push(members);
        }
    }

    Ok(Scene::new(
        settings, camera, background, lights, materials, primitives, unions,
    ))
}

fn render_settings(
    cx: &Ctx,
    spec: &Spanned<RenderSpec>,
    o: &RenderOverrides,
) -> Result<RenderSettings> {
    let r = spec.get_ref();
    let s = RenderSettings {
        width: o.width.unwrap_or(r.width),
        height: o.height.unwrap_or(r.height),
        spp: o.spp.unwrap_or(r.spp),
        max_depth: o.max_depth.unwrap_or(r.max_depth),
        seed: r.seed,
        exposure: r.exposure,
    };
    let e = |m: String| cx.err(spec.span(), "[render]", m);
    if s.width == 0 || s.height == 0 || s.width > MAX_SIDE || s.height > MAX_SIDE {
        return Err(e(format!(
            "image size must be 1..={MAX_SIDE} on each side, got {}x{}",
            s.width, s.height
        )));
    }
    if s.spp == 0 || s.spp > MAX_SPP {
        return Err(e(format!("spp must be 1..={MAX_SPP}, got {}", s.spp)));
    }
    if s.max_depth > MAX_DEPTH {
        return Err(e(format!(
            "max_depth must be at most {MAX_DEPTH}, got {}",
            s.max_depth
        )));
    }
    positive(s.exposure, "exposure").map_err(e)?;
    Ok(s)
}

fn camera(cx: &Ctx, spec: &Spanned<CameraSpec>, s: &RenderSettings) -> Result<Camera> {
    let c = spec.get_ref();
    let e = |m: String| cx.err(spec.span(), "[camera]", m);
    let from = point(c.from, "from").map_err(e)?;
    let at = point(c.at, "at").map_err(e)?;
    let up = point(c.up, "up").map_err(e)?;
    if !(c.fov > 0.0 && c.fov < 180.0) {
        return Err(e(format!(
            "fov must be between 0 and 180 degrees, got {}",
            c.fov
        )));
    }
    if !(c.aperture.is_finite() && c.aperture >= 0.0) {
        return Err(e(format!("aperture must be >= 0, got {}", c.aperture)));
    }
    let focus = match c.focus {
        Some(f) => positive(f, "focus").map_err(e)?,
        None => (from - at).length(),
    };
    let aspect = f64::from(s.width) / f64::from(s.height);
    Camera::new(from, at, up, c.fov, aspect, c.aperture, focus)
        .ok_or_else(|| e("degenerate view: from equals at, or up is parallel to the view".into()))
}

fn material(m: &MaterialSpec) -> std::result::Result<Material, String> {
    Ok(match *m {
        MaterialSpec::Diffuse {
            color: c,
            ref checker,
            coat,
            roughness,
        } => {
            let texture = match (c, checker) {
                (Some(c), None) => Texture::Solid(color(c, "color")?),
                (None, Some(ch)) => Texture::Checker {
                    a: color(ch.a, "checker.a")?,
                    b: color(ch.b, "checker.b")?,
                    size: positive(ch.size, "checker.size")?,
                    origin: point(ch.origin, "checker.origin")?,
                },
                _ => return Err("give exactly one of `color` and `checker`".into()),
            };
            Material::Diffuse {
                color: texture,
                coat: unit_interval(coat, "coat")?,
                roughness: unit_interval(roughness, "roughness")?,
            }
        }
        MaterialSpec::Metal {
            color: c,
            roughness,
        } => Material::Metal {
            color: color(c, "color")?,
            roughness: unit_interval(roughness, "roughness")?,
        },
        MaterialSpec::Glass { ior, tint } => {
            if !(ior.is_finite() && ior >= 1.0) {
                return Err(format!("ior must be >= 1, got {ior}"));
            }
            Material::Glass {
                ior,
                tint: color(tint, "tint")?,
            }
        }
    })
}

impl ShapeSpec {
    fn name(&self) -> &'static str {
        match self {
            ShapeSpec::Sphere { .. } => "sphere",
            ShapeSpec::Ellipsoid { .. } => "ellipsoid",
            ShapeSpec::Plane { .. } => "plane",
            ShapeSpec::Box { .. } => "box",
            ShapeSpec::Cylinder { .. } => "cylinder",
            ShapeSpec::Cone { .. } => "cone",
        }
    }

    /// The shape with every length multiplied by `k`.
    fn build(&self, k: f64) -> std::result::Result<Shape, String> {
        let p = |v: V3, what: &str| point(v, what).map(|v| v * k);
        Ok(match *self {
            ShapeSpec::Sphere { center, radius } => Shape::Sphere {
                center: p(center, "center")?,
                radius: positive(radius, "radius")? * k,
            },
            ShapeSpec::Ellipsoid { center, radii, yaw } => {
                let r = p(radii, "radii")?;
                if r.x <= 0.0 || r.y <= 0.0 || r.z <= 0.0 {
                    return Err(format!("radii must all be > 0, got {radii:?}"));
                }
                Shape::Ellipsoid {
                    center: p(center, "center")?,
                    radii: r,
                    yaw: yaw.to_radians(),
                }
            }
            ShapeSpec::Plane { point: pt, normal } => {
                let n = point(normal, "normal")?;
                if n.length() == 0.0 {
                    return Err("normal must be non-zero".into());
                }
                Shape::Plane {
                    point: p(pt, "point")?,
                    normal: n.normalize(),
                }
            }
            ShapeSpec::Box { min, max, yaw } => {
                let (lo, hi) = (p(min, "min")?, p(max, "max")?);
                if !(lo.x < hi.x && lo.y < hi.y && lo.z < hi.z) {
                    return Err(format!(
                        "min must be below max on every axis, got {min:?} and {max:?}"
                    ));
                }
                Shape::Cuboid {
                    center: (lo + hi) * 0.5,
                    half: (hi - lo) * 0.5,
                    yaw: yaw.to_radians(),
                }
            }
            ShapeSpec::Cylinder { base, top, radius } => {
                let r = positive(radius, "radius")? * k;
                frustum(p(base, "base")?, p(top, "top")?, r, r)?
            }
            ShapeSpec::Cone {
                base,
                top,
                base_radius,
                top_radius,
            } => {
                let valid = base_radius >= 0.0
                    && top_radius >= 0.0
                    && base_radius + top_radius > 0.0
                    && (base_radius + top_radius).is_finite();
                if !valid {
                    return Err(format!(
                        "radii must be >= 0 and not both 0, got {base_radius} and {top_radius}"
                    ));
                }
                frustum(
                    p(base, "base")?,
                    p(top, "top")?,
                    base_radius * k,
                    top_radius * k,
                )?
            }
        })
    }
}

fn frustum(base: Vec3, top: Vec3, r0: f64, r1: f64) -> std::result::Result<Shape, String> {
    if (top - base).length() == 0.0 {
        return Err("base and top must differ".into());
    }
    Ok(Shape::Frustum { base, top, r0, r1 })
}
