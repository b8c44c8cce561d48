//! Tests on a real device (an HCA or soft-RoCE); each skips loudly when there is none.

use super::devices;
use crate::config::{FabricConfig, ProviderKind};
use crate::error::VerbsError;
use std::time::Duration;

/// Needs an HCA (or soft-RoCE); skips with a message when there is none.
#[test]
fn device_loopback_send_and_read() {
    let devs = devices().expect("device query itself must not fail");
    if devs.is_empty() {
        eprintln!("SKIPPED device_loopback_send_and_read: no InfiniBand device (ibv_get_device_list found none)");
        return;
    }
    let cfg = |k| FabricConfig {
        provider: Some(ProviderKind::Ib),
        job_secret: 7,
        local_key: k,
        ..FabricConfig::default()
    };
    let mut a = crate::Fabric::open(cfg(1)).unwrap();
    let mut b = crate::Fabric::open(cfg(2)).unwrap();
    let cb = b.card();
    let src: Vec<u8> = (0..100_000u32).map(|i| i as u8).collect();
    let rb = b.expose(src.as_ptr(), src.len()).unwrap();
    let mut dst = vec![0u8; src.len()];
    a.send(2, &cb, &[b"hello over ib"]).unwrap();
    // SAFETY: dst outlives the read, which completes before the loop ends.
    unsafe { a.read(2, &cb, rb, dst.as_mut_ptr(), dst.len(), 9).unwrap() };
    let (mut ea, mut eb) = (Vec::new(), Vec::new());
    let end = std::time::Instant::now() + Duration::from_secs(20);
    while !(ea
        .iter()
        .any(|e| matches!(e, crate::Event::ReadDone { token: 9 }))
        && eb.iter().any(|e| matches!(e, crate::Event::Message { .. })))
    {
        assert!(std::time::Instant::now() < end, "a {ea:?} b {eb:?}");
        a.progress(&mut ea).unwrap();
        b.progress(&mut eb).unwrap();
    }
    assert!(dst == src);
}

#[test]
fn forcing_ib_without_device_is_a_clear_error() {
    if !devices().unwrap().is_empty() {
        eprintln!("SKIPPED forcing_ib_without_device_is_a_clear_error: a device is present");
        return;
    }
    let cfg = FabricConfig {
        provider: Some(ProviderKind::Ib),
        ..FabricConfig::default()
    };
    let e = crate::Fabric::open(cfg)
        .err()
        .expect("must fail without a device");
    assert_eq!(e, VerbsError::NoDevice);
    assert!(e.to_string().contains("no InfiniBand device"));
}
