//! Convex solids and their ray intersections.
//!
//! Every bounded shape is convex, so a ray crosses it along one interval: it enters at `t0`
//! and leaves at `t1`. Unions of solids ("merge" in POV-Ray terms) are made by the scene from
//! these intervals: a surface point inside another member of the same union is not a surface.

use crate::vec3::Vec3;

/// Offset used to keep secondary rays from hitting the surface they start on.
pub const EPSILON: f64 = 1e-6;

#[derive(Debug, Clone, Copy)]
pub struct Ray {
    pub origin: Vec3,
    /// Unit length.
    pub dir: Vec3,
}

impl Ray {
    pub fn new(origin: Vec3, dir: Vec3) -> Self {
        Ray {
            origin,
            dir: dir.normalize(),
        }
    }

    pub fn at(&self, t: f64) -> Vec3 {
        self.origin + self.dir * t
    }
}

/// Where a ray crosses a solid: entering at `t0` with outward normal `n0`, leaving at `t1`
/// with outward normal `n1`. `t0` may be `-inf` (ray starts inside an unbounded solid).
#[derive(Debug, Clone, Copy)]
pub struct Span {
    pub t0: f64,
    pub n0: Vec3,
    pub t1: f64,
    pub n1: Vec3,
}

/// Axis-aligned bounding box.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Aabb {
    pub min: Vec3,
    pub max: Vec3,
}

impl Aabb {
    pub const EMPTY: Aabb = Aabb {
        min: Vec3::splat(f64::INFINITY),
        max: Vec3::splat(f64::NEG_INFINITY),
    };

    pub fn union(self, o: Aabb) -> Aabb {
        Aabb {
            min: self.min.min(o.min),
            max: self.max.max(o.max),
        }
    }

    pub fn grow(self, p: Vec3) -> Aabb {
        Aabb {
            min: self.min.min(p),
            max: self.max.max(p),
        }
    }

    pub fn area(self) -> f64 {
        let d = self.max - self.min;
        2.0 * (d.x * d.y + d.y * d.z + d.z * d.x)
    }

    pub fn centroid(self) -> Vec3 {
        (self.min + self.max) * 0.5
    }

    /// Does the ray (with precomputed `inv_dir`) meet the box within `(0, t_max)`?
    pub fn hit(&self, origin: Vec3, inv_dir: Vec3, t_max: f64) -> bool {
        let slab = |min: f64, max: f64, o: f64, inv: f64| {
            let a = (min - o) * inv;
            let b = (max - o) * inv;
            if a < b {
                (a, b)
            } else {
                (b, a)
            }
        };
        let (x0, x1) = slab(self.min.x, self.max.x, origin.x, inv_dir.x);
        let (y0, y1) = slab(self.min.y, self.max.y, origin.y, inv_dir.y);
        let (z0, z1) = slab(self.min.z, self.max.z, origin.z, inv_dir.z);
        // Plain comparisons: a NaN bound (0 * inf) compares false and is skipped, and they
        // compile to single instructions where f64::max/min do not.
        let mut t0 = 0.0;
        for v in [x0, y0, z0] {
            if v > t0 {
                t0 = v;
            }
        }
        let mut t1 = t_max;
        for v in [x1, y1, z1] {
            if v < t1 {
                t1 = v;
            }
        }
        t0 <= t1
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    Sphere {
        center: Vec3,
        radius: f64,
    },
    /// Axis-scaled sphere, turned by `yaw` radians about +Y.
    Ellipsoid {
        center: Vec3,
        radii: Vec3,
        yaw: f64,
    },
    /// The half-space below a plane; its surface is the plane, `normal` points out (unit).
    Plane {
        point: Vec3,
        normal: Vec3,
    },
    /// Box with half extents `half`, turned by `yaw` radians about +Y around its centre.
    Cuboid {
        center: Vec3,
        half: Vec3,
        yaw: f64,
    },
    /// Capped cone frustum from `base` (radius `r0`) to `top` (radius `r1`); a cylinder when
    /// `r0 == r1`, a cone when one radius is zero.
    Frustum {
        base: Vec3,
        top: Vec3,
        r0: f64,
        r1: f64,
    },
}

impl Shape {
    /// The interval along `ray` inside the solid, if the ray's line meets it at all.
    pub fn span(&self, ray: &Ray) -> Option<Span> {
        match *self {
            Shape::Sphere { center, radius } => sphere_span(ray, center, radius),
            Shape::Ellipsoid { center, radii, yaw } => ellipsoid_span(ray, center, radii, yaw),
            Shape::Plane { point, normal } => plane_span(ray, point, normal),
            Shape::Cuboid { center, half, yaw } => cuboid_span(ray, center, half, yaw),
            Shape::Frustum { base, top, r0, r1 } => frustum_span(ray, base, top, r0, r1),
        }
    }

    /// Is `p` inside the solid by more than `margin`?
    pub fn contains(&self, p: Vec3, margin: f64) -> bool {
        match *self {
            Shape::Sphere { center, radius } => (p - center).length() < radius - margin,
            Shape::Ellipsoid { center, radii, yaw } => {
                let q = (p - center).rotate_y(yaw.cos(), -yaw.sin());
                let m = margin / radii.min_component_abs();
                q.div_elem(radii).length() < 1.0 - m
            }
            Shape::Plane { point, normal } => (p - point).dot(normal) < -margin,
            Shape::Cuboid { center, half, yaw } => {
                let q = (p - center).rotate_y(yaw.cos(), -yaw.sin());
                q.x.abs() < half.x - margin
                    && q.y.abs() < half.y - margin
                    && q.z.abs() < half.z - margin
            }
            Shape::Frustum { base, top, r0, r1 } => {
                let axis = top - base;
                let h = axis.length();
                let a = axis / h;
                let t = (p - base).dot(a);
                if t <= margin || t >= h - margin {
                    return false;
                }
                let radial = (p - base) - a * t;
                radial.length() < r0 + (r1 - r0) * t / h - margin
            }
        }
    }

    /// Bounding box; `None` for unbounded shapes.
    pub fn bounds(&self) -> Option<Aabb> {
        match *self {
            Shape::Sphere { center, radius } => Some(Aabb {
                min: center - Vec3::splat(radius),
                max: center + Vec3::splat(radius),
            }),
            Shape::Ellipsoid { center, radii, yaw } => Some(turned_box_bounds(center, radii, yaw)),
            Shape::Plane { .. } => None,
            Shape::Cuboid { center, half, yaw } => Some(turned_box_bounds(center, half, yaw)),
            Shape::Frustum { base, top, r0, r1 } => {
                let a = (top - base).normalize();
                let ext = |r: f64| {
                    Vec3::new(
                        r * (1.0 - a.x * a.x).max(0.0).sqrt(),
                        r * (1.0 - a.y * a.y).max(0.0).sqrt(),
                        r * (1.0 - a.z * a.z).max(0.0).sqrt(),
                    )
                };
                let b = Aabb {
                    min: base - ext(r0),
                    max: base + ext(r0),
                };
                Some(b.union(Aabb {
                    min: top - ext(r1),
                    max: top + ext(r1),
                }))
            }
        }
    }

    /// Move by `offset` and then turn by `yaw` radians about the vertical line through `pivot`.
    pub fn placed(&self, yaw: f64, pivot: Vec3, offset: Vec3) -> Shape {
        let (c, s) = (yaw.cos(), yaw.sin());
        let move_point = |p: Vec3| (p - pivot).rotate_y(c, s) + pivot + offset;
        match *self {
            Shape::Sphere { center, radius } => Shape::Sphere {
                center: move_point(center),
                radius,
            },
            Shape::Ellipsoid {
                center,
                radii,
                yaw: y,
            } => Shape::Ellipsoid {
                center: move_point(center),
                radii,
                yaw: y + yaw,
            },
            Shape::Plane { point, normal } => Shape::Plane {
                point: move_point(point),
                normal: normal.rotate_y(c, s),
            },
            Shape::Cuboid {
                center,
                half,
                yaw: y,
            } => Shape::Cuboid {
                center: move_point(center),
                half,
                yaw: y + yaw,
            },
            Shape::Frustum { base, top, r0, r1 } => Shape::Frustum {
                base: move_point(base),
                top: move_point(top),
                r0,
                r1,
            },
        }
    }
}

impl Vec3 {
    fn min_component_abs(self) -> f64 {
        self.x.abs().min(self.y.abs()).min(self.z.abs())
    }
}

fn turned_box_bounds(center: Vec3, half: Vec3, yaw: f64) -> Aabb {
    let (c, s) = (yaw.cos(), yaw.sin());
    let mut b = Aabb::EMPTY;
    for sx in [-1.0, 1.0] {
        for sz in [-1.0, 1.0] {
            let corner = Vec3::new(sx * half.x, half.y, sz * half.z).rotate_y(c, s);
            b = b.grow(center + corner);
            b = b.grow(center + Vec3::new(corner.x, -half.y, corner.z));
        }
    }
    b
}

/// Roots of a*t^2 + 2*b*t + c = 0 in increasing order, when real.
fn solve_quadratic(a: f64, b: f64, c: f64) -> Option<(f64, f64)> {
    let disc = b * b - a * c;
    if disc < 0.0 || a == 0.0 {
        return None;
    }
    let sq = disc.sqrt();
    // Numerically stable form avoiding cancellation.
    let q = if b > 0.0 { -(b + sq) } else { -b + sq };
    let (r0, r1) = if q == 0.0 { (0.0, 0.0) } else { (q / a, c / q) };
    Some((r0.min(r1), r0.max(r1)))
}

fn sphere_span(ray: &Ray, center: Vec3, radius: f64) -> Option<Span> {
    let oc = ray.origin - center;
    let (t0, t1) = solve_quadratic(1.0, oc.dot(ray.dir), oc.length_squared() - radius * radius)?;
    Some(Span {
        t0,
        n0: (ray.at(t0) - center) / radius,
        t1,
        n1: (ray.at(t1) - center) / radius,
    })
}

fn ellipsoid_span(ray: &Ray, center: Vec3, radii: Vec3, yaw: f64) -> Option<Span> {
    let (c, s) = (yaw.cos(), yaw.sin());
    let o = (ray.origin - center).rotate_y(c, -s).div_elem(radii);
    let d = ray.dir.rotate_y(c, -s).div_elem(radii);
    let (t0, t1) = solve_quadratic(d.length_squared(), o.dot(d), o.length_squared() - 1.0)?;
    let normal = |t: f64| {
        let local = (o + d * t).div_elem(radii);
        local.rotate_y(c, s).normalize()
    };
    Some(Span {
        t0,
        n0: normal(t0),
        t1,
        n1: normal(t1),
    })
}

fn plane_span(ray: &Ray, point: Vec3, normal: Vec3) -> Option<Span> {
    let denom = ray.dir.dot(normal);
    let dist = (ray.origin - point).dot(normal);
    if denom.abs() < 1e-12 {
        // Parallel: entirely inside or outside, never crossing the surface.
        return None;
    }
    let t = -dist / denom;
    if denom < 0.0 {
        Some(Span {
            t0: t,
            n0: normal,
            t1: f64::INFINITY,
            n1: normal,
        })
    } else {
        Some(Span {
            t0: f64::NEG_INFINITY,
            n0: normal,
            t1: t,
            n1: normal,
        })
    }
}

fn cuboid_span(ray: &Ray, center: Vec3, half: Vec3, yaw: f64) -> Option<Span> {
    let (c, s) = (yaw.cos(), yaw.sin());
    let o = (ray.origin - center).rotate_y(c, -s);
    let d = ray.dir.rotate_y(c, -s);
    let mut t0 = f64::NEG_INFINITY;
    let mut t1 = f64::INFINITY;
    let mut n0 = Vec3::ZERO;
    let mut n1 = Vec3::ZERO;
    for axis in 0..3 {
        let (oa, da, ha) = (o[axis], d[axis], half[axis]);
        let unit = |sign: f64| match axis {
            0 => Vec3::new(sign, 0.0, 0.0),
            1 => Vec3::new(0.0, sign, 0.0),
            _ => Vec3::new(0.0, 0.0, sign),
        };
        if da.abs() < 1e-15 {
            if oa.abs() > ha {
                return None;
            }
            continue;
        }
        let ta = (-ha - oa) / da;
        let tb = (ha - oa) / da;
        let (near, far, n_near, n_far) = if ta < tb {
            (ta, tb, unit(-1.0), unit(1.0))
        } else {
            (tb, ta, unit(1.0), unit(-1.0))
        };
        if near > t0 {
            t0 = near;
            n0 = n_near;
        }
        if far < t1 {
            t1 = far;
            n1 = n_far;
        }
    }
    if t0 > t1 || !t0.is_finite() || !t1.is_finite() {
        return None;
    }
    Some(Span {
        t0,
        n0: n0.rotate_y(c, s),
        t1,
        n1: n1.rotate_y(c, s),
    })
}

fn frustum_span(ray: &Ray, base: Vec3, top: Vec3, r0: f64, r1: f64) -> Option<Span> {
    let axis = top - base;
    let h = axis.length();
    let a = axis / h;
    let k = (r1 - r0) / h;
    let co = ray.origin - base;
    let dv = ray.dir.dot(a);
    let ov = co.dot(a);

    // Slab between the two caps.
    let (mut t0, mut t1, mut n0, mut n1) = if dv.abs() < 1e-15 {
        if ov < 0.0 || ov > h {
            return None;
        }
        (f64::NEG_INFINITY, f64::INFINITY, Vec3::ZERO, Vec3::ZERO)
    } else {
        let ta = -ov / dv;
        let tb = (h - ov) / dv;
        if ta < tb {
            (ta, tb, -a, a)
        } else {
            (tb, ta, a, -a)
        }
    };

    // Lateral surface: |radial|^2 - r(t)^2 <= 0 with r(t) = r0 + k * axial.
    let dr = ray.dir - a * dv;
    let or = co - a * ov;
    let rr = r0 + k * ov;
    let qa = dr.length_squared() - k * k * dv * dv;
    let qb = dr.dot(or) - k * dv * rr;
    let qc = or.length_squared() - rr * rr;
    let side_normal = |t: f64| {
        let p = co + ray.dir * t;
        let axial = p.dot(a);
        let radial = p - a * axial;
        let r = r0 + k * axial;
        (radial - a * (r * k)).normalize()
    };
    // The lateral region as up to two intervals; within the slab only one is non-empty
    // (the other belongs to the mirrored nappe of the cone, beyond the apex).
    let pieces: [(f64, f64); 2] = if qa.abs() < 1e-12 {
        if qb.abs() < 1e-15 {
            if qc > 0.0 {
                return None;
            }
            [(f64::NEG_INFINITY, f64::INFINITY), (1.0, 0.0)]
        } else {
            let t = -qc / (2.0 * qb);
            if qb > 0.0 {
                [(f64::NEG_INFINITY, t), (1.0, 0.0)]
            } else {
                [(t, f64::INFINITY), (1.0, 0.0)]
            }
        }
    } else if qa > 0.0 {
        let (ra, rb) = solve_quadratic(qa, qb, qc)?;
        [(ra, rb), (1.0, 0.0)]
    } else {
        match solve_quadratic(qa, qb, qc) {
            Some((ra, rb)) => [(f64::NEG_INFINITY, ra), (rb, f64::INFINITY)],
            // No real roots with qa < 0: the whole line is inside the double cone.
            None => [(f64::NEG_INFINITY, f64::INFINITY), (1.0, 0.0)],
        }
    };
    let (s0, s1) = pieces
        .into_iter()
        .filter(|&(s0, s1)| s0 <= s1 && s0.max(t0) <= s1.min(t1))
        .max_by(|a, b| (a.1.min(t1) - a.0.max(t0)).total_cmp(&(b.1.min(t1) - b.0.max(t0))))?;
    if s0 > t0 {
        t0 = s0;
        n0 = side_normal(s0);
    }
    if s1 < t1 {
        t1 = s1;
        n1 = side_normal(s1);
    }
    if t0 > t1 || !t0.is_finite() || !t1.is_finite() {
        return None;
    }
    Some(Span { t0, n0, t1, n1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    fn close_v(a: Vec3, b: Vec3) -> bool {
        (a - b).length() < 1e-9
    }

    #[test]
    fn sphere_entry_and_exit() {
        let s = Shape::Sphere {
            center: Vec3::new(0.0, 0.0, 5.0),
            radius: 1.0,
        };
        let sp = s
            .span(&Ray::new(Vec3::ZERO, Vec3::new(0.0, 0.0, 1.0)))
            .unwrap();
        assert!(close(sp.t0, 4.0) && close(sp.t1, 6.0));
        assert!(close_v(sp.n0, Vec3::new(0.0, 0.0, -1.0)));
        assert!(close_v(sp.n1, Vec3::new(0.0, 0.0, 1.0)));
        assert!(s.span(&Ray::new(Vec3::ZERO, Vec3::Y)).is_none());
    }

    #[test]
    fn plane_from_above_and_below() {
        let p = Shape::Plane {
            point: Vec3::ZERO,
            normal: Vec3::Y,
        };
        let down = p
            .span(&Ray::new(Vec3::new(0.0, 2.0, 0.0), -Vec3::Y))
            .unwrap();
        assert!(close(down.t0, 2.0) && down.t1.is_infinite());
        let up = p
            .span(&Ray::new(Vec3::new(0.0, -2.0, 0.0), Vec3::Y))
            .unwrap();
        assert!(close(up.t1, 2.0) && up.t0.is_infinite());
        assert!(p
            .span(&Ray::new(Vec3::Y, Vec3::new(1.0, 0.0, 0.0)))
            .is_none());
    }

    #[test]
    fn cuboid_axis_aligned_and_turned() {
        let b = Shape::Cuboid {
            center: Vec3::ZERO,
            half: Vec3::new(1.0, 2.0, 3.0),
            yaw: 0.0,
        };
        let sp = b
            .span(&Ray::new(
                Vec3::new(-5.0, 0.5, 0.5),
                Vec3::new(1.0, 0.0, 0.0),
            ))
            .unwrap();
        assert!(close(sp.t0, 4.0) && close(sp.t1, 6.0));
        assert!(close_v(sp.n0, Vec3::new(-1.0, 0.0, 0.0)));
        // Turned by 90 degrees the x extent becomes 3.
        let t = Shape::Cuboid {
            center: Vec3::ZERO,
            half: Vec3::new(1.0, 2.0, 3.0),
            yaw: std::f64::consts::FRAC_PI_2,
        };
        let sp = t
            .span(&Ray::new(
                Vec3::new(-5.0, 0.5, 0.5),
                Vec3::new(1.0, 0.0, 0.0),
            ))
            .unwrap();
        assert!(close(sp.t0, 2.0) && close(sp.t1, 8.0));
        assert!(close_v(sp.n0, Vec3::new(-1.0, 0.0, 0.0)));
        assert!(b
            .span(&Ray::new(
                Vec3::new(-5.0, 2.5, 0.0),
                Vec3::new(1.0, 0.0, 0.0)
            ))
            .is_none());
    }

    #[test]
    fn cylinder_side_and_caps() {
        let c = Shape::Frustum {
            base: Vec3::ZERO,
            top: Vec3::new(0.0, 2.0, 0.0),
            r0: 1.0,
            r1: 1.0,
        };
        let side = c
            .span(&Ray::new(
                Vec3::new(-5.0, 1.0, 0.0),
                Vec3::new(1.0, 0.0, 0.0),
            ))
            .unwrap();
        assert!(close(side.t0, 4.0) && close(side.t1, 6.0));
        assert!(close_v(side.n0, Vec3::new(-1.0, 0.0, 0.0)));
        let down = c
            .span(&Ray::new(Vec3::new(0.2, 5.0, 0.0), -Vec3::Y))
            .unwrap();
        assert!(close(down.t0, 3.0) && close(down.t1, 5.0));
        assert!(close_v(down.n0, Vec3::Y) && close_v(down.n1, -Vec3::Y));
        assert!(c
            .span(&Ray::new(
                Vec3::new(-5.0, 2.5, 0.0),
                Vec3::new(1.0, 0.0, 0.0)
            ))
            .is_none());
    }

    #[test]
    fn cone_side_normal_tilts_up() {
        // Cone of height 1 and base radius 1: slant at 45 degrees.
        let c = Shape::Frustum {
            base: Vec3::ZERO,
            top: Vec3::Y,
            r0: 1.0,
            r1: 0.0,
        };
        let sp = c
            .span(&Ray::new(
                Vec3::new(-5.0, 0.5, 0.0),
                Vec3::new(1.0, 0.0, 0.0),
            ))
            .unwrap();
        assert!(close(sp.t0, 4.5) && close(sp.t1, 5.5));
        let expect = Vec3::new(-1.0, 1.0, 0.0).normalize();
        assert!(close_v(sp.n0, expect), "{:?}", sp.n0);
        // A steep ray down the axis enters through the apex region and leaves through the base.
        let down = c
            .span(&Ray::new(Vec3::new(0.0, 5.0, 0.0), -Vec3::Y))
            .unwrap();
        assert!(close(down.t0, 4.0) && close(down.t1, 5.0));
        // Above the apex, the mirrored nappe must not count.
        let above = Shape::Frustum {
            base: Vec3::ZERO,
            top: Vec3::Y,
            r0: 1.0,
            r1: 0.0,
        };
        assert!(above
            .span(&Ray::new(
                Vec3::new(-5.0, 1.5, 0.0),
                Vec3::new(1.0, 0.0, 0.0)
            ))
            .is_none());
    }

    #[test]
    fn ellipsoid_scaled_sphere() {
        let e = Shape::Ellipsoid {
            center: Vec3::ZERO,
            radii: Vec3::new(2.0, 1.0, 1.0),
            yaw: 0.0,
        };
        let sp = e
            .span(&Ray::new(
                Vec3::new(-5.0, 0.0, 0.0),
                Vec3::new(1.0, 0.0, 0.0),
            ))
            .unwrap();
        assert!(close(sp.t0, 3.0) && close(sp.t1, 7.0));
        assert!(close_v(sp.n0, Vec3::new(-1.0, 0.0, 0.0)));
        assert!(e.contains(Vec3::new(1.5, 0.0, 0.0), 1e-6));
        assert!(!e.contains(Vec3::new(0.0, 1.5, 0.0), 1e-6));
    }

    #[test]
    fn bounds_enclose_turned_box() {
        let b = Shape::Cuboid {
            center: Vec3::ZERO,
            half: Vec3::new(1.0, 1.0, 1.0),
            yaw: std::f64::consts::FRAC_PI_4,
        };
        let bb = b.bounds().unwrap();
        assert!(close(bb.max.x, std::f64::consts::SQRT_2));
        assert!(Shape::Plane {
            point: Vec3::ZERO,
            normal: Vec3::Y
        }
        .bounds()
        .is_none());
    }

    #[test]
    fn aabb_hit() {
        let b = Aabb {
            min: Vec3::splat(-1.0),
            max: Vec3::splat(1.0),
        };
        let inv = |d: Vec3| Vec3::new(1.0 / d.x, 1.0 / d.y, 1.0 / d.z);
        let d = Vec3::new(1.0, 0.0, 0.0);
        assert!(b.hit(Vec3::new(-5.0, 0.0, 0.0), inv(d), 100.0));
        assert!(!b.hit(Vec3::new(-5.0, 0.0, 0.0), inv(d), 3.0));
        assert!(!b.hit(Vec3::new(-5.0, 2.0, 0.0), inv(d), 100.0));
    }
}
