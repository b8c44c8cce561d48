//! Device discovery: the device list, opening a device, querying ports and GIDs.

use super::attrs::{mtu_bytes, LINK_LAYER_ETHERNET, LINK_LAYER_INFINIBAND};
use super::dl::{load, verbs};
use crate::error::{Result, VerbsError};
use crate::DeviceInfo;
use rdma_sys::*;
use std::ffi::CStr;

pub(crate) fn verb_err(verb: &'static str) -> VerbsError {
    VerbsError::Verb {
        verb,
        detail: std::io::Error::last_os_error().to_string(),
    }
}

pub(crate) fn verb_rc(verb: &'static str, rc: i32) -> Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        // Verbs return a positive errno (or -1 with errno set).
        let e = if rc > 0 {
            std::io::Error::from_raw_os_error(rc)
        } else {
            std::io::Error::last_os_error()
        };
        Err(VerbsError::Verb {
            verb,
            detail: e.to_string(),
        })
    }
}

/// The device list; released on drop. Empty when libibverbs finds no device.
pub(crate) struct DeviceList {
    list: *mut *mut ibv_device,
    n: usize,
}

impl DeviceList {
    pub(crate) fn get() -> Result<DeviceList> {
        let mut n: i32 = 0;
        // SAFETY: `n` is a valid out-pointer; the list is freed in Drop.
        let list = unsafe { (load()?.ibv_get_device_list)(&mut n) };
        if list.is_null() {
            let e = std::io::Error::last_os_error();
            // With no RDMA subsystem at all libibverbs fails with ENOSYS rather than returning an
            // empty list; both mean "no device".
            return match e.raw_os_error() {
                Some(libc::ENOSYS) | Some(libc::ENODEV) | Some(libc::ENOENT) | Some(0) | None => {
                    Ok(DeviceList { list, n: 0 })
                }
                _ => Err(VerbsError::Verb {
                    verb: "ibv_get_device_list",
                    detail: e.to_string(),
                }),
            };
        }
        Ok(DeviceList {
            list,
            n: n.max(0) as usize,
        })
    }

    pub(crate) fn len(&self) -> usize {
        self.n
    }

    pub(crate) fn device(&self, i: usize) -> *mut ibv_device {
        assert!(i < self.n);
        // SAFETY: i < n, the length libibverbs reported for this array.
        unsafe { *self.list.add(i) }
    }

    pub(crate) fn name(&self, i: usize) -> String {
        // SAFETY: the device pointer comes from the live list; the name is a NUL-terminated string.
        unsafe { CStr::from_ptr((verbs().ibv_get_device_name)(self.device(i))) }
            .to_string_lossy()
            .into_owned()
    }
}

impl Drop for DeviceList {
    fn drop(&mut self) {
        if !self.list.is_null() {
            // SAFETY: the list came from ibv_get_device_list and is freed once.
            unsafe { (verbs().ibv_free_device_list)(self.list) };
        }
    }
}

/// Port attributes through the context's extended query when the provider has it (as verbs.h's
/// inline `ibv_query_port` does); the exported compat symbol reads an older, smaller struct.
pub(crate) fn query_port(ctx: *mut ibv_context, port: u8) -> Result<ibv_port_attr> {
    // SAFETY: ibv_port_attr is plain C data; zero is a valid initial value.
    let mut attr: ibv_port_attr = unsafe { std::mem::zeroed() };
    // SAFETY: ctx is an open context and attr a valid out-pointer.
    verb_rc("ibv_query_port", unsafe {
        query_port_ext(ctx, port, &mut attr)
    })?;
    Ok(attr)
}

pub(crate) fn query_device(ctx: *mut ibv_context) -> Result<ibv_device_attr> {
    // SAFETY: plain C data; zero is valid.
    let mut attr: ibv_device_attr = unsafe { std::mem::zeroed() };
    // SAFETY: ctx is an open context and attr a valid out-pointer.
    verb_rc("ibv_query_device", unsafe {
        (verbs().ibv_query_device)(ctx, &mut attr)
    })?;
    Ok(attr)
}

pub(crate) fn query_gid(ctx: *mut ibv_context, port: u8, index: i32) -> Result<[u8; 16]> {
    let mut gid = ibv_gid { raw: [0; 16] };
    // SAFETY: ctx is open; gid is a valid out-pointer.
    verb_rc("ibv_query_gid", unsafe {
        (verbs().ibv_query_gid)(ctx, port, index, &mut gid)
    })?;
    // SAFETY: every bit pattern of the union is a valid byte array.
    Ok(unsafe { gid.raw })
}

pub(crate) fn link_layer_name(ll: u8) -> &'static str {
    match ll {
        LINK_LAYER_INFINIBAND => "InfiniBand",
        LINK_LAYER_ETHERNET => "Ethernet (RoCE)",
        _ => "unspecified",
    }
}

fn state_name(s: ibv_port_state::Type) -> &'static str {
    match s {
        ibv_port_state::IBV_PORT_DOWN => "down",
        ibv_port_state::IBV_PORT_INIT => "init",
        ibv_port_state::IBV_PORT_ARMED => "armed",
        ibv_port_state::IBV_PORT_ACTIVE => "active",
        _ => "other",
    }
}

/// verbs.h's `___ibv_query_port`: the extended operation of a verbs context whose size says
/// it has one, else the compat entry point.
///
/// # Safety
/// `ctx` is an open device context and `attr` a valid out-pointer.
unsafe fn query_port_ext(ctx: *mut ibv_context, port: u8, attr: *mut ibv_port_attr) -> i32 {
    // A context made by a current provider is the last member of a `verbs_context`, marked by
    // an all-ones `abi_compat`.
    if (*ctx).abi_compat as usize == u32::MAX as usize {
        let vc = ctx
            .cast::<u8>()
            .sub(std::mem::offset_of!(verbs_context, context))
            .cast::<verbs_context>();
        let needed =
            std::mem::size_of::<verbs_context>() - std::mem::offset_of!(verbs_context, query_port);
        if (*vc).sz >= needed {
            if let Some(op) = (*vc).query_port {
                return op(ctx, port, attr, std::mem::size_of::<ibv_port_attr>());
            }
        }
    }
    (verbs().ibv_query_port)(ctx, port, attr.cast())
}

/// Every port of every device.
pub fn devices() -> Result<Vec<DeviceInfo>> {
    let list = DeviceList::get()?;
    let mut out = Vec::new();
    for i in 0..list.len() {
        let name = list.name(i);
        // SAFETY: device pointer from the live list.
        let ctx = unsafe { (verbs().ibv_open_device)(list.device(i)) };
        if ctx.is_null() {
            tracing::debug!("cannot open {name}: {}", std::io::Error::last_os_error());
            continue;
        }
        let ports = query_device(ctx).map(|d| d.phys_port_cnt).unwrap_or(0);
        for port in 1..=ports {
            if let Ok(p) = query_port(ctx, port) {
                out.push(DeviceInfo {
                    name: name.clone(),
                    port,
                    link_layer: link_layer_name(p.link_layer).to_string(),
                    state: state_name(p.state).to_string(),
                    lid: p.lid,
                    active_mtu: mtu_bytes(p.active_mtu) as u32,
                });
            }
        }
        // SAFETY: ctx was opened above and is closed once.
        unsafe { (verbs().ibv_close_device)(ctx) };
    }
    Ok(out)
}
