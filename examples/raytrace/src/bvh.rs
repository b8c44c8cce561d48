//! Bounding volume hierarchy over the bounded primitives of a scene.

use crate::geometry::Aabb;
use crate::vec3::Vec3;

const LEAF_SIZE: usize = 2;
const STACK_DEPTH: usize = 64;

#[derive(Debug, Clone)]
struct Node {
    bounds: Aabb,
    /// Leaf: first index into `order`; inner: index of the right child (left is next).
    start_or_right: u32,
    /// Leaf: number of primitives; 0 for an inner node.
    count: u32,
    /// Inner node: the axis it was split along.
    axis: u8,
}

#[derive(Debug, Clone, Default)]
pub struct Bvh {
    nodes: Vec<Node>,
    order: Vec<u32>,
}

impl Bvh {
    /// Build over `(primitive index, bounds)` pairs.
    pub fn build(items: &[(u32, Aabb)]) -> Bvh {
        let mut bvh = Bvh {
            nodes: Vec::new(),
            order: items.iter().map(|i| i.0).collect(),
        };
        if items.is_empty() {
            return bvh;
        }
        let mut work: Vec<(u32, Aabb)> = items.to_vec();
        bvh.build_range(&mut work, 0, items.len(), 0);
        bvh.order = work.iter().map(|i| i.0).collect();
        bvh
    }

    fn build_range(&mut self, work: &mut [(u32, Aabb)], start: usize, end: usize, depth: usize) {
        let slice = &mut work[start..end];
        let bounds = slice.iter().fold(Aabb::EMPTY, |b, i| b.union(i.1));
        let node = self.nodes.len();
        self.nodes.push(Node {
            bounds,
            start_or_right: start as u32,
            count: (end - start) as u32,
            axis: 0,
        });
        // The depth limit keeps traversal within the fixed stack.
        if end - start <= LEAF_SIZE || depth + 2 >= STACK_DEPTH {
            return;
        }
        // Surface area heuristic: of all splits of the centroid-sorted items along each
        // axis, take the one minimising area(left) * n_left + area(right) * n_right.
        let n = slice.len();
        let mut best = (f64::INFINITY, 0usize, n / 2);
        let mut right_area = vec![0.0; n];
        for axis in 0..3 {
            slice.sort_by(|a, b| a.1.centroid()[axis].total_cmp(&b.1.centroid()[axis]));
            let mut acc = Aabb::EMPTY;
            for i in (1..n).rev() {
                acc = acc.union(slice[i].1);
                right_area[i] = acc.area();
            }
            let mut left = Aabb::EMPTY;
            for i in 1..n {
                left = left.union(slice[i - 1].1);
                let cost = left.area() * i as f64 + right_area[i] * (n - i) as f64;
                if cost < best.0 {
                    best = (cost, axis, i);
                }
            }
        }
        let (_, axis, split) = best;
        slice.sort_by(|a, b| a.1.centroid()[axis].total_cmp(&b.1.centroid()[axis]));
        let mid = start + split;
        self.build_range(work, start, mid, depth + 1);
        let right = self.nodes.len() as u32;
        self.build_range(work, mid, end, depth + 1);
        self.nodes[node].start_or_right = right;
        self.nodes[node].count = 0;
        self.nodes[node].axis = axis as u8;
    }

    /// Call `visit(primitive)` for each primitive whose box the ray may meet before `t_max()`.
    /// `visit` may shrink the bound it reads through `t_max` (nearest-hit search); returning
    /// `false` stops the walk.
    pub fn walk(
        &self,
        origin: Vec3,
        dir: Vec3,
        mut t_max: impl FnMut() -> f64,
        mut visit: impl FnMut(u32) -> bool,
    ) {
        if self.nodes.is_empty() {
            return;
        }
        let inv = Vec3::new(1.0 / dir.x, 1.0 / dir.y, 1.0 / dir.z);
        let mut stack = [0u32; STACK_DEPTH];
        let mut top = 1;
        while top > 0 {
            top -= 1;
            let node = &self.nodes[stack[top] as usize];
            if !node.bounds.hit(origin, inv, t_max()) {
                continue;
            }
            if node.count > 0 {
                let s = node.start_or_right as usize;
                for &p in &self.order[s..s + node.count as usize] {
                    if !visit(p) {
                        return;
                    }
                }
            } else {
                // Visit the near child first so nearest-hit searches cut off early.
                let left = stack[top] + 1;
                let right = node.start_or_right;
                let (near, far) = if dir[node.axis as usize] < 0.0 {
                    (right, left)
                } else {
                    (left, right)
                };
                stack[top] = far;
                stack[top + 1] = near;
                top += 2;
            }
        }
    }
}
