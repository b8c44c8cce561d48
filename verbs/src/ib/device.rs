//! Device discovery: the device list, and the ports of every device for `ibdyn info`.

use super::attrs::{mtu_bytes, LINK_LAYER_ETHERNET, LINK_LAYER_INFINIBAND};
use super::context::Context;
use super::dl::{load, verbs};
use super::fail::failed;
use crate::error::Result;
use crate::DeviceInfo;
use rdma_sys::*;
use std::ffi::CStr;

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
                Some(errno) => Err(failed("ibv_get_device_list", errno)),
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

    fn device(&self, i: usize) -> *mut ibv_device {
        assert!(i < self.n);
        // SAFETY: i < n, the length libibverbs reported for this array.
        unsafe { *self.list.add(i) }
    }

    /// Opens device `i` (`i < len()`).
    pub(crate) fn open(&self, i: usize) -> Result<Context> {
        // SAFETY: the device pointer comes from this list, which is alive.
        unsafe { Context::open(self.device(i)) }
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

/// Every port of every device.
pub fn devices() -> Result<Vec<DeviceInfo>> {
    let list = DeviceList::get()?;
    let mut out = Vec::new();
    for i in 0..list.len() {
        let name = list.name(i);
        let ctx = match list.open(i) {
            Ok(ctx) => ctx,
            Err(e) => {
                tracing::debug!("cannot open {name}: {e}");
                continue;
            }
        };
        let ports = ctx.query_device().map(|d| d.phys_port_cnt).unwrap_or(0);
        for port in 1..=ports {
            if let Ok(p) = ctx.query_port(port) {
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
    }
    Ok(out)
}
