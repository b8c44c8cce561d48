//! Groups: Comm_group, Comm_remote_group, Group_size/rank/free, the set operations,
//! incl/excl (also by ranges), translate_ranks, compare.

use super::{out, read};
use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
use crate::state::{with_state, State};
use crate::{call, export};
use ibdyn_intercomm::{Group, GroupRelation};
use std::os::raw::c_int;

/// Runs `f` on group `h` and the state; errors go to MPI_COMM_SELF's handler.
fn with_group<R>(
    name: &'static str,
    h: Handle,
    f: impl FnOnce(&mut State, Group) -> MpiResult<R>,
) -> MpiResult<R> {
    let _ = name;
    with_state(|s| {
        let g = s.objects.group(h)?;
        f(s, g)
    })
}

/// `n` ranks of the caller's array.
///
/// # Safety
/// `p` holds `n` ints.
unsafe fn ranks(p: *const c_int, n: c_int) -> MpiResult<Vec<i64>> {
    let n = usize::try_from(n)
        .map_err(|_| MpiError::new(MPI_ERR_ARG, format!("n = {n} is negative")))?;
    if n > 0 && p.is_null() {
        return err(MPI_ERR_ARG, "the ranks array is NULL");
    }
    // SAFETY: the caller's contract.
    Ok((0..n).map(|i| i64::from(unsafe { *p.add(i) })).collect())
}

/// The ranks of `n` (first, last, stride) triples.
///
/// # Safety
/// `p` holds `n` triples.
unsafe fn range_ranks(p: *const [c_int; 3], n: c_int, size: usize) -> MpiResult<Vec<i64>> {
    let n = usize::try_from(n)
        .map_err(|_| MpiError::new(MPI_ERR_ARG, format!("n = {n} is negative")))?;
    let mut out = Vec::new();
    for i in 0..n {
        // SAFETY: the caller's contract.
        let [first, last, stride] = unsafe { *p.add(i) };
        if stride == 0 {
            return err(MPI_ERR_ARG, "a range has stride 0");
        }
        let mut r = first;
        while (stride > 0 && r <= last) || (stride < 0 && r >= last) {
            if out.len() > size {
                return err(
                    MPI_ERR_RANK,
                    "the ranges name more ranks than the group has",
                );
            }
            out.push(i64::from(r));
            r += stride;
        }
    }
    Ok(out)
}

unsafe fn comm_group(comm: Handle, group: *mut Handle) -> c_int {
    call("MPI_Comm_group", comm, || {
        let h = with_state(|s| {
            let g = s.comm(comm)?.comm.raw().group().clone();
            Ok(s.objects.add_group(g))
        })?;
        // SAFETY: the caller's output argument.
        unsafe { out(group, h, "group") }
    })
}

unsafe fn comm_remote_group(comm: Handle, group: *mut Handle) -> c_int {
    call("MPI_Comm_remote_group", comm, || {
        let h = with_state(|s| {
            let g = s
                .comm(comm)?
                .comm
                .inter("MPI_Comm_remote_group")?
                .remote_group()
                .clone();
            Ok(s.objects.add_group(g))
        })?;
        // SAFETY: the caller's output argument.
        unsafe { out(group, h, "group") }
    })
}

unsafe fn group_size(group: Handle, size: *mut c_int) -> c_int {
    call("MPI_Group_size", MPI_COMM_SELF, || {
        let n = with_group("MPI_Group_size", group, |_, g| Ok(g.size() as c_int))?;
        // SAFETY: the caller's output argument.
        unsafe { out(size, n, "size") }
    })
}

unsafe fn group_rank(group: Handle, rank: *mut c_int) -> c_int {
    call("MPI_Group_rank", MPI_COMM_SELF, || {
        let r = with_group("MPI_Group_rank", group, |s, g| {
            let me = s.me()?;
            Ok(g.rank_of(me).map_or(MPI_UNDEFINED, |r| r as c_int))
        })?;
        // SAFETY: the caller's output argument.
        unsafe { out(rank, r, "rank") }
    })
}

unsafe fn group_free(group: *mut Handle) -> c_int {
    call("MPI_Group_free", MPI_COMM_SELF, || {
        // SAFETY: the caller's in/out argument.
        let h = unsafe { read(group, "group") }?;
        with_state(|s| s.objects.free_group(h))?;
        // SAFETY: as above.
        unsafe { out(group, MPI_GROUP_NULL, "group") }
    })
}

/// A group made of two others.
fn binary(
    name: &'static str,
    a: Handle,
    b: Handle,
    newgroup: *mut Handle,
    f: fn(&Group, &Group) -> Group,
) -> c_int {
    call(name, MPI_COMM_SELF, || {
        let h = with_state(|s| {
            let (ga, gb) = (s.objects.group(a)?, s.objects.group(b)?);
            Ok(s.objects.add_group(f(&ga, &gb)))
        })?;
        // SAFETY: the caller's output argument.
        unsafe { out(newgroup, h, "newgroup") }
    })
}

unsafe fn group_union(a: Handle, b: Handle, newgroup: *mut Handle) -> c_int {
    binary("MPI_Group_union", a, b, newgroup, Group::union)
}

unsafe fn group_intersection(a: Handle, b: Handle, newgroup: *mut Handle) -> c_int {
    binary(
        "MPI_Group_intersection",
        a,
        b,
        newgroup,
        Group::intersection,
    )
}

unsafe fn group_difference(a: Handle, b: Handle, newgroup: *mut Handle) -> c_int {
    binary("MPI_Group_difference", a, b, newgroup, Group::difference)
}

/// A subgroup by ranks: included (`incl`) or excluded.
fn subgroup(
    name: &'static str,
    group: Handle,
    incl: bool,
    list: impl FnOnce(usize) -> MpiResult<Vec<i64>>,
    newgroup: *mut Handle,
) -> c_int {
    call(name, MPI_COMM_SELF, || {
        let h = with_state(|s| {
            let g = s.objects.group(group)?;
            let rs = list(g.size())?;
            let sub = if incl { g.incl(&rs)? } else { g.excl(&rs)? };
            Ok(s.objects.add_group(sub))
        })?;
        // SAFETY: the caller's output argument.
        unsafe { out(newgroup, h, "newgroup") }
    })
}

/// The subgroup entry points: ranks listed or given as ranges, kept (`true`) or left out.
macro_rules! subgroups {
    ($($f:ident($group:ident, $n:ident, $list:ident: $lt:ty, $newgroup:ident)
        = $name:literal, $incl:literal, |$size:pat_param| $ranks:expr;)*) => {$(
        unsafe fn $f($group: Handle, $n: c_int, $list: $lt, $newgroup: *mut Handle) -> c_int {
            // SAFETY: the caller's array of `n` ranks or rank triples.
            subgroup($name, $group, $incl, |$size| unsafe { $ranks }, $newgroup)
        }
    )*};
}

subgroups! {
    group_incl(group, n, rs: *const c_int, newgroup)
        = "MPI_Group_incl", true, |_| ranks(rs, n);
    group_excl(group, n, rs: *const c_int, newgroup)
        = "MPI_Group_excl", false, |_| ranks(rs, n);
    group_range_incl(group, n, r: *const [c_int; 3], newgroup)
        = "MPI_Group_range_incl", true, |size| range_ranks(r, n, size);
    group_range_excl(group, n, r: *const [c_int; 3], newgroup)
        = "MPI_Group_range_excl", false, |size| range_ranks(r, n, size);
}

unsafe fn group_translate_ranks(
    a: Handle,
    n: c_int,
    ranks1: *const c_int,
    b: Handle,
    ranks2: *mut c_int,
) -> c_int {
    call("MPI_Group_translate_ranks", MPI_COMM_SELF, || {
        // SAFETY: the caller's array of n ranks.
        let rs = unsafe { ranks(ranks1, n) }?;
        let out_ranks = with_state(|s| {
            let (ga, gb) = (s.objects.group(a)?, s.objects.group(b)?);
            rs.iter()
                .map(|&r| {
                    if r == i64::from(MPI_PROC_NULL) {
                        return Ok(MPI_PROC_NULL);
                    }
                    Ok(ga.translate_ranks(&[r], &gb)?[0].map_or(MPI_UNDEFINED, |x| x as c_int))
                })
                .collect::<MpiResult<Vec<c_int>>>()
        })?;
        for (i, r) in out_ranks.into_iter().enumerate() {
            // SAFETY: the caller's output array of n ranks.
            unsafe { ranks2.add(i).write(r) };
        }
        Ok(())
    })
}

pub fn relation(r: GroupRelation) -> c_int {
    match r {
        GroupRelation::Identical => MPI_IDENT,
        GroupRelation::Similar => MPI_SIMILAR,
        GroupRelation::Unequal => MPI_UNEQUAL,
    }
}

unsafe fn group_compare(a: Handle, b: Handle, result: *mut c_int) -> c_int {
    call("MPI_Group_compare", MPI_COMM_SELF, || {
        let r = with_state(|s| Ok(relation(s.objects.group(a)?.compare(&s.objects.group(b)?))))?;
        // SAFETY: the caller's output argument.
        unsafe { out(result, r, "result") }
    })
}

export!(MPI_Comm_group, PMPI_Comm_group, comm_group, (comm: Handle, group: *mut Handle) -> c_int);
export!(MPI_Comm_remote_group, PMPI_Comm_remote_group, comm_remote_group,
    (comm: Handle, group: *mut Handle) -> c_int);
export!(MPI_Group_size, PMPI_Group_size, group_size, (group: Handle, size: *mut c_int) -> c_int);
export!(MPI_Group_rank, PMPI_Group_rank, group_rank, (group: Handle, rank: *mut c_int) -> c_int);
export!(MPI_Group_free, PMPI_Group_free, group_free, (group: *mut Handle) -> c_int);
export!(MPI_Group_union, PMPI_Group_union, group_union,
    (group1: Handle, group2: Handle, newgroup: *mut Handle) -> c_int);
export!(MPI_Group_intersection, PMPI_Group_intersection, group_intersection,
    (group1: Handle, group2: Handle, newgroup: *mut Handle) -> c_int);
export!(MPI_Group_difference, PMPI_Group_difference, group_difference,
    (group1: Handle, group2: Handle, newgroup: *mut Handle) -> c_int);
export!(MPI_Group_incl, PMPI_Group_incl, group_incl,
    (group: Handle, n: c_int, ranks: *const c_int, newgroup: *mut Handle) -> c_int);
export!(MPI_Group_excl, PMPI_Group_excl, group_excl,
    (group: Handle, n: c_int, ranks: *const c_int, newgroup: *mut Handle) -> c_int);
export!(MPI_Group_range_incl, PMPI_Group_range_incl, group_range_incl,
    (group: Handle, n: c_int, ranges: *const [c_int; 3], newgroup: *mut Handle) -> c_int);
export!(MPI_Group_range_excl, PMPI_Group_range_excl, group_range_excl,
    (group: Handle, n: c_int, ranges: *const [c_int; 3], newgroup: *mut Handle) -> c_int);
export!(MPI_Group_translate_ranks, PMPI_Group_translate_ranks, group_translate_ranks,
    (group1: Handle, n: c_int, ranks1: *const c_int, group2: Handle, ranks2: *mut c_int) -> c_int);
export!(MPI_Group_compare, PMPI_Group_compare, group_compare,
    (group1: Handle, group2: Handle, result: *mut c_int) -> c_int);
