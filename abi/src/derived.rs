//! Derived datatypes: the type map of one element flattened to (offset, length) byte blocks,
//! the bounds MPI defines (lb, extent, true bounds), and packing of `count` elements to and
//! from a contiguous byte stream. A type whose map is one block at offset 0 with extent ==
//! size is contiguous: communication uses the caller's memory directly, without a copy.
//!
//! Derived types live in a table of this thread (the MPI thread, see `state`), shared as
//! `Rc` so a request keeps the type it needs after MPI_Type_free.

use crate::consts::*;
use crate::datatype;
use crate::error::{err, MpiResult};
use crate::table::Table;
use ibdyn_collectives::ElemType;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// Derived datatype handles are this plus the table index.
const TYPE_BASE: Handle = 0x3000_0000;

pub struct Derived {
    size: usize,
    lb: isize,
    extent: isize,
    true_lb: isize,
    true_ub: isize,
    align: usize,
    /// One element's data: (offset from the buffer's start, length), adjacent ones merged.
    blocks: Vec<(isize, usize)>,
    /// The element type of every primitive in the map, when they are all the same.
    elem: Option<ElemType>,
    /// The map as it was built: runs of `count` copies of a type, in order (what
    /// MPI_Get_elements walks through); consecutive runs of one type are merged.
    runs: Vec<(usize, Ty)>,
    /// Basic elements in one copy.
    basics: u64,
    committed: Cell<bool>,
    name: RefCell<String>,
    /// How the program made it (MPI_Type_get_envelope/contents).
    recipe: RefCell<Option<Recipe>>,
}

/// A derived type's constructor and its arguments, as MPI_Type_get_contents returns them;
/// the old types are kept alive here (a program may free them first).
#[derive(Clone)]
pub struct Recipe {
    pub combiner: std::os::raw::c_int,
    pub ints: Vec<i64>,
    pub addrs: Vec<isize>,
    pub types: Vec<(Handle, Ty)>,
}

/// Any datatype (predefined or derived), as communication needs it.
#[derive(Clone)]
pub struct Ty {
    pub size: usize,
    pub lb: isize,
    pub extent: isize,
    pub elem: Option<ElemType>,
    align: usize,
    /// Basic elements in one copy (2 for the predefined pair types such as MPI_DOUBLE_INT).
    basics: u64,
    /// None for a predefined type: one block of `size` bytes.
    derived: Option<Rc<Derived>>,
    /// A predefined type's handle (0 for a derived type): what tells MPI_LONG from
    /// MPI_INT64_T in the type signature (external32 packs them differently).
    handle: Handle,
}

impl Ty {
    fn predefined(h: Handle) -> MpiResult<Ty> {
        let t = datatype::lookup(h)?;
        Ok(Ty {
            size: t.size,
            lb: 0,
            extent: t.extent as isize,
            elem: t.elem,
            align: datatype::alignment(h, t.size),
            basics: datatype::basic_elements(h),
            derived: None,
            handle: h,
        })
    }

    /// Whether `count` elements are `count * size` bytes at the buffer's start.
    pub fn contiguous(&self) -> bool {
        match &self.derived {
            None => self.extent == self.size as isize,
            Some(d) => {
                d.extent as usize == d.size
                    && d.lb == 0
                    && d.blocks.len() <= 1
                    && d.blocks.first().is_none_or(|b| b.0 == 0)
            }
        }
    }

    pub fn true_bounds(&self) -> (isize, isize) {
        match &self.derived {
            None => match datatype::split_blocks(self.handle) {
                Some(&[.., (o, l)]) => (0, o + l as isize),
                _ => (0, self.size as isize),
            },
            Some(d) => (d.true_lb, d.true_ub - d.true_lb),
        }
    }

    /// MPI_Get_elements: the basic elements wholly inside the first `bytes` bytes of packed
    /// copies of this type (one cut by the end is not counted, as in MPICH).
    pub fn elements_in(&self, bytes: u64) -> u64 {
        if self.size == 0 {
            return 0;
        }
        let size = self.size as u64;
        let whole = (bytes / size).saturating_mul(self.basics);
        whole.saturating_add(self.elements_in_one(bytes % size))
    }

    /// `elements_in` for fewer bytes than one copy holds.
    fn elements_in_one(&self, mut rest: u64) -> u64 {
        let Some(d) = self.derived.as_ref() else {
            // A pair type cut after its first member.
            let value = datatype::pair_value_len(self.handle);
            return u64::from(value.is_some_and(|v| rest >= v as u64));
        };
        let mut n = 0u64;
        for (count, t) in &d.runs {
            let run = *count as u64 * t.size as u64;
            if rest < run {
                return n + t.elements_in(rest);
            }
            n += *count as u64 * t.basics;
            rest -= run;
        }
        n
    }

    /// MPI_Status_set_elements: the bytes of packed copies of this type that hold its first
    /// `n` basic elements (so `elements_in` of them is `n`).
    pub fn bytes_of_elements(&self, n: u64) -> u64 {
        if self.basics == 0 {
            return 0;
        }
        let whole = (n / self.basics).saturating_mul(self.size as u64);
        whole.saturating_add(self.bytes_of_elements_in_one(n % self.basics))
    }

    /// `bytes_of_elements` for fewer basic elements than one copy holds.
    fn bytes_of_elements_in_one(&self, mut rest: u64) -> u64 {
        let Some(d) = self.derived.as_ref() else {
            // A pair type's first member.
            let value = datatype::pair_value_len(self.handle).unwrap_or(0);
            return if rest == 0 { 0 } else { value as u64 };
        };
        let mut bytes = 0u64;
        for (count, t) in &d.runs {
            let run = *count as u64 * t.basics;
            if rest < run {
                return bytes + t.bytes_of_elements(rest);
            }
            bytes += *count as u64 * t.size as u64;
            rest -= run;
        }
        bytes
    }

    /// Whether `self` and `other` are the same type (so their runs merge).
    fn same(&self, other: &Ty) -> bool {
        match (&self.derived, &other.derived) {
            (Some(a), Some(b)) => Rc::ptr_eq(a, b),
            (None, None) => {
                (self.size, self.elem, self.basics, self.handle)
                    == (other.size, other.elem, other.basics, other.handle)
            }
            _ => false,
        }
    }

    fn for_each_block(&self, mut f: impl FnMut(isize, usize)) {
        match &self.derived {
            None => match datatype::split_blocks(self.handle) {
                Some(blocks) => blocks.iter().for_each(|&(o, l)| f(o, l)),
                None if self.size > 0 => f(0, self.size),
                None => {}
            },
            Some(d) => d.blocks.iter().for_each(|&(o, l)| f(o, l)),
        }
    }

    /// Calls `f(offset, length)` for each byte block of `count` elements, in order.
    pub fn for_each_block_of(&self, count: usize, mut f: impl FnMut(isize, usize)) {
        for i in 0..count {
            let start = i as isize * self.extent;
            self.for_each_block(|o, l| f(start + o, l));
        }
    }

    /// The one predefined type this type is made of, if it is made of one (one-sided
    /// accumulates ask it of both their datatypes; a target reduces elements of it).
    pub fn single_basic(&self) -> Option<Handle> {
        let mut basic: Option<Option<Handle>> = None;
        self.for_each_basic(1, &mut |b, _| {
            basic = match basic {
                None => Some(Some(b)),
                Some(Some(a)) if a == b => Some(Some(a)),
                _ => Some(None),
            }
        });
        basic.flatten()
    }

    /// The type signature of `count` elements, in type-map order (the order `pack` writes
    /// their bytes in): `f(handle, n)` for each run of `n` consecutive elements of the
    /// predefined type `handle` (a run of one type may come in several calls).
    pub fn for_each_basic(&self, count: usize, f: &mut dyn FnMut(Handle, usize)) {
        match &self.derived {
            None => {
                if count > 0 {
                    f(self.handle, count)
                }
            }
            Some(d) => match d.runs.as_slice() {
                [(n, t)] if t.derived.is_none() && count.checked_mul(*n).is_some() => {
                    t.for_each_basic(count * n, f)
                }
                runs => {
                    for _ in 0..count {
                        runs.iter().for_each(|(n, t)| t.for_each_basic(*n, f));
                    }
                }
            },
        }
    }

    /// Packs `count` elements at address `base` into `out` (count * size bytes).
    ///
    /// # Safety
    /// The type map of `count` elements at `base` is readable memory.
    pub unsafe fn pack(&self, base: *const u8, count: usize, out: &mut [u8]) {
        let mut at = 0;
        for i in 0..count {
            let start = i as isize * self.extent;
            self.for_each_block(|o, l| {
                // SAFETY: the caller's contract; `out` holds count * size bytes.
                unsafe {
                    let src = base.wrapping_offset(start + o);
                    std::ptr::copy_nonoverlapping(src, out.as_mut_ptr().add(at), l);
                }
                at += l;
            });
        }
    }

    /// Unpacks the first `bytes` bytes of `data` into the elements at `base` (a partial last
    /// element is allowed: a shorter message).
    ///
    /// # Safety
    /// The type map of the elements at `base` is writable memory.
    pub unsafe fn unpack(&self, data: &[u8], base: *mut u8) {
        let mut at = 0;
        let mut i = 0isize;
        while at < data.len() {
            let start = i * self.extent;
            self.for_each_block(|o, l| {
                let n = l.min(data.len() - at);
                if n > 0 {
                    // SAFETY: the caller's contract.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            data.as_ptr().add(at),
                            base.wrapping_offset(start + o),
                            n,
                        )
                    };
                }
                at += n;
            });
            i += 1;
            if self.size == 0 {
                break;
            }
        }
    }
}

ibdyn_owner::process_local! {
    static TYPES: RefCell<Table<Rc<Derived>>> = RefCell::new(Table::new());
}

/// Whether `h` is a predefined datatype's handle (or no datatype at all), not a derived one.
pub fn is_predefined(h: Handle) -> bool {
    h < TYPE_BASE
}

/// The datatype `h`, predefined or derived; a derived one must be committed when `for_comm`.
pub fn resolve(h: Handle, for_comm: bool) -> MpiResult<Ty> {
    if h < TYPE_BASE {
        return Ty::predefined(h);
    }
    let d = TYPES
        .with(|t| t.borrow().get(h - TYPE_BASE).cloned())
        .ok_or_else(|| {
            crate::error::MpiError::new(
                MPI_ERR_TYPE,
                format!("datatype {h:#x} has been freed (or never existed)"),
            )
        })?;
    if for_comm && !d.committed.get() {
        return err(MPI_ERR_TYPE, format!("datatype {h:#x} is not committed: call MPI_Type_commit before using it in communication"));
    }
    Ok(Ty {
        size: d.size,
        lb: d.lb,
        extent: d.extent,
        elem: d.elem,
        align: d.align,
        basics: d.basics,
        derived: Some(d),
        handle: 0,
    })
}

/// A run of `count` elements of `ty` starting `disp` bytes into the new type.
pub struct Part {
    pub disp: isize,
    pub count: usize,
    pub ty: Ty,
}

/// Builds the type whose map is `parts` in order; a struct type rounds its extent up to its
/// alignment (MPI's epsilon).
pub fn build(parts: &[Part], is_struct: bool) -> MpiResult<Handle> {
    let mut blocks: Vec<(isize, usize)> = Vec::new();
    let (mut size, mut lb, mut ub) = (0usize, isize::MAX, isize::MIN);
    let mut align = 1;
    let mut elem: Option<Option<ElemType>> = None;
    let mut runs: Vec<(usize, Ty)> = Vec::new();
    let mut basics = 0u64;
    for p in parts.iter().filter(|p| p.count > 0) {
        let t = &p.ty;
        basics = basics.saturating_add((p.count as u64).saturating_mul(t.basics));
        match runs.last_mut() {
            Some((n, last)) if last.same(t) => *n += p.count,
            _ => runs.push((p.count, t.clone())),
        }
        align = align.max(t.align);
        elem = Some(match elem {
            None => t.elem,
            Some(e) if e == t.elem => e,
            Some(_) => None,
        });
        let first = p.disp + t.lb;
        let last = first + p.count as isize * t.extent;
        lb = lb.min(first.min(last));
        ub = ub.max(first.max(last));
        size = p
            .count
            .checked_mul(t.size)
            .and_then(|n| n.checked_add(size))
            .ok_or_else(|| {
                crate::error::MpiError::new(MPI_ERR_COUNT, "the datatype's size overflows")
            })?;
        if t.contiguous() {
            // One run of count * size bytes: no walk over the elements.
            let l = p.count * t.size;
            match blocks.last_mut() {
                Some(b) if b.0 + b.1 as isize == p.disp => b.1 += l,
                _ if l > 0 => blocks.push((p.disp, l)),
                _ => {}
            }
            continue;
        }
        for k in 0..p.count as isize {
            let at = p.disp + k * t.extent;
            t.for_each_block(|o, l| match blocks.last_mut() {
                Some(b) if b.0 + b.1 as isize == at + o => b.1 += l,
                _ => blocks.push((at + o, l)),
            });
        }
    }
    if lb == isize::MAX {
        (lb, ub) = (0, 0);
    }
    let mut extent = ub - lb;
    if is_struct && extent % align as isize != 0 {
        extent += align as isize - extent % align as isize;
    }
    let true_lb = blocks.iter().map(|b| b.0).min().unwrap_or(0);
    let true_ub = blocks.iter().map(|b| b.0 + b.1 as isize).max().unwrap_or(0);
    Ok(insert(Derived {
        size,
        lb,
        extent,
        true_lb,
        true_ub,
        align,
        blocks,
        elem: elem.flatten(),
        runs,
        basics,
        committed: Cell::new(false),
        name: RefCell::new(String::new()),
        recipe: RefCell::new(None),
    }))
}

fn insert(d: Derived) -> Handle {
    TYPES.with(|t| TYPE_BASE + t.borrow_mut().insert(Rc::new(d)))
}

/// MPI_Type_create_resized: `old` with new bounds.
pub fn resized(old: &Ty, lb: isize, extent: isize) -> Handle {
    let (blocks, true_bounds) = match &old.derived {
        Some(d) => (d.blocks.clone(), (d.true_lb, d.true_ub)),
        None => {
            let mut blocks = Vec::new();
            old.for_each_block(|o, l| blocks.push((o, l)));
            let (lb, extent) = old.true_bounds();
            (blocks, (lb, lb + extent))
        }
    };
    insert(Derived {
        size: old.size,
        lb,
        extent,
        true_lb: true_bounds.0,
        true_ub: true_bounds.1,
        align: old.align,
        blocks,
        elem: old.elem,
        runs: vec![(1, old.clone())],
        basics: old.basics,
        committed: Cell::new(false),
        name: RefCell::new(String::new()),
        recipe: RefCell::new(None),
    })
}

fn derived_of(h: Handle, what: &str) -> MpiResult<Rc<Derived>> {
    if h < TYPE_BASE {
        Ty::predefined(h)?;
        return err(
            MPI_ERR_TYPE,
            format!("{what}: {h:#x} is a predefined datatype"),
        );
    }
    TYPES
        .with(|t| t.borrow().get(h - TYPE_BASE).cloned())
        .ok_or_else(|| {
            crate::error::MpiError::new(
                MPI_ERR_TYPE,
                format!("datatype {h:#x} has been freed (or never existed)"),
            )
        })
}

pub fn commit(h: Handle) -> MpiResult<()> {
    if h < TYPE_BASE {
        return Ty::predefined(h).map(|_| ());
    }
    derived_of(h, "MPI_Type_commit")?.committed.set(true);
    Ok(())
}

pub fn free(h: Handle) -> MpiResult<()> {
    derived_of(h, "MPI_Type_free")?;
    TYPES.with(|t| t.borrow_mut().remove(h - TYPE_BASE));
    Ok(())
}

ibdyn_owner::process_local! {
    /// Names the program gave predefined types (MPI lets it rename them).
    static RENAMED: RefCell<std::collections::HashMap<Handle, String>> = RefCell::default();
}

pub fn name(h: Handle) -> MpiResult<String> {
    if h < TYPE_BASE {
        Ty::predefined(h)?;
        let renamed = RENAMED.with(|r| r.borrow().get(&h).cloned());
        return Ok(renamed.unwrap_or_else(|| datatype::name(h).to_string()));
    }
    Ok(derived_of(h, "MPI_Type_get_name")?.name.borrow().clone())
}

pub fn set_name(h: Handle, name: String) -> MpiResult<()> {
    if h < TYPE_BASE {
        Ty::predefined(h)?;
        RENAMED.with(|r| r.borrow_mut().insert(h, name));
        return Ok(());
    }
    *derived_of(h, "MPI_Type_set_name")?.name.borrow_mut() = name;
    Ok(())
}

/// Records how derived type `h` was made.
pub fn set_recipe(h: Handle, r: Recipe) {
    if let Ok(d) = derived_of(h, "recipe") {
        *d.recipe.borrow_mut() = Some(r);
    }
}

/// How `h` was made: None for a predefined type.
pub fn recipe(h: Handle) -> MpiResult<Option<Recipe>> {
    if h < TYPE_BASE {
        Ty::predefined(h)?;
        return Ok(None);
    }
    let d = derived_of(h, "MPI_Type_get_envelope")?;
    let r = d.recipe.borrow().clone();
    r.map(Some).ok_or_else(|| {
        crate::error::MpiError::new(
            MPI_ERR_INTERN,
            format!("datatype {h:#x} has no recorded constructor"),
        )
    })
}

/// A new handle for type `ty` (a predefined one keeps its own): what MPI_Type_get_contents
/// returns for the old types.
pub fn handle_of(h: Handle, ty: &Ty) -> Handle {
    match &ty.derived {
        Some(d) if h >= TYPE_BASE => TYPES.with(|t| TYPE_BASE + t.borrow_mut().insert(d.clone())),
        _ => h,
    }
}

/// Drops every derived type (MPI_Finalize).
pub fn clear() {
    TYPES.with(|t| drop(t.borrow_mut().drain()));
}
