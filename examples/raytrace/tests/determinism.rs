//! The image must not depend on how tiles are split, ordered, or rendered again.

use ibdyn_raytrace::local::InjectedCrash;
use ibdyn_raytrace::{
    render_local, render_local_report, render_tile, render_tile_message, tiles, Image,
    RenderOverrides, SceneSource, TileResult,
};

fn tiny_chess() -> SceneSource {
    SceneSource::default_chess(RenderOverrides {
        width: Some(64),
        height: Some(36),
        spp: Some(3),
        max_depth: Some(5),
    })
}

fn render_in_order(source: &SceneSource, tile_size: u32, reverse: bool) -> Image {
    let scene = source.build().unwrap();
    let s = scene.settings;
    let mut work = tiles(s.width, s.height, tile_size);
    if reverse {
        work.reverse();
    }
    let mut image = Image::new(s.width, s.height);
    for t in work {
        // Through the wire format, as a worker's answer would travel.
        let msg = TileResult::new(t, &render_tile(&scene, t)).to_bytes();
        let back = TileResult::from_bytes(&msg).unwrap();
        image.paste(&back.tile, &back.rgb).unwrap();
    }
    image
}

#[test]
fn tile_size_and_order_do_not_change_the_image() {
    let source = tiny_chess();
    let a = render_in_order(&source, 7, false);
    let b = render_in_order(&source, 16, true);
    let c = render_in_order(&source, 64, false);
    assert_eq!(a.rgb, b.rgb);
    assert_eq!(a.rgb, c.rgb);
    // Something was drawn: not a flat image.
    let first = a.pixel(0, 0);
    assert!((0..a.height).any(|y| (0..a.width).any(|x| a.pixel(x, y) != first)));
}

#[test]
fn threads_and_scene_messages_do_not_change_the_image() {
    let source = tiny_chess();
    let reference = render_in_order(&source, 8, false);
    // A worker builds the scene from the bytes the master sent.
    let received = SceneSource::from_bytes(&source.to_bytes()).unwrap();
    assert_eq!(received, source);
    assert_eq!(received.fingerprint(), source.fingerprint());
    let mut other = source.clone();
    other.overrides.spp = Some(4);
    assert_ne!(other.fingerprint(), source.fingerprint());
    let scene = received.build().unwrap();
    let threaded = render_local(&scene, 5, 3, &|_, _| {}).unwrap();
    assert_eq!(threaded.rgb, reference.rgb);
}

#[test]
fn rendering_a_tile_again_gives_the_same_pixels() {
    let scene = tiny_chess().build().unwrap();
    let t = tiles(64, 36, 16)[5];
    assert_eq!(render_tile(&scene, t), render_tile(&scene, t));
}

#[test]
fn png_round_trip_keeps_size_and_pixels() {
    let image = render_in_order(&tiny_chess(), 32, false);
    let png = image.to_png().unwrap();
    assert_eq!(&png[1..4], b"PNG");
    let back = Image::from_png(&png).unwrap();
    assert_eq!((back.width, back.height), (64, 36));
    assert_eq!(back, image);

    let dir = std::env::temp_dir().join(format!("raytrace-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("tiny.png");
    image.write_png(&path).unwrap();
    let from_file = Image::from_png(&std::fs::read(&path).unwrap()).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(from_file, image);
}

#[test]
fn malformed_results_are_rejected_not_pasted() {
    let mut image = Image::new(16, 16);
    let t = tiles(16, 16, 8)[3];
    assert!(image.paste(&t, &[0; 5]).is_err());
    let outside = ibdyn_raytrace::Tile { x: 12, ..t };
    assert!(image.paste(&outside, &[0; 8 * 8 * 3]).is_err());
    assert!(SceneSource::from_bytes(b"RTS1").is_err());
    assert!(SceneSource::from_bytes(b"nonsense bytes that are long enough").is_err());
}

#[test]
fn a_crashed_worker_loses_no_tile() {
    let source = tiny_chess();
    let reference = render_in_order(&source, 8, false);
    let scene = source.build().unwrap();
    for after in [0, 3] {
        let crash = InjectedCrash { worker: 1, after };
        let report = render_local_report(&scene, 8, 3, Some(crash), &|_, _| {}).unwrap();
        assert_eq!(report.lost, vec![1]);
        assert_eq!(report.image.rgb, reference.rgb);
        let total: usize = report.per_worker.values().sum();
        assert_eq!(total, tiles(64, 36, 8).len());
        assert_eq!(report.per_worker.get(&1).copied().unwrap_or(0), after);
    }
    // With every worker gone the master says so instead of waiting forever.
    let crash = InjectedCrash {
        worker: 0,
        after: 1,
    };
    let e = render_local_report(&scene, 8, 1, Some(crash), &|_, _| {}).unwrap_err();
    assert!(e.to_string().contains("all workers are gone"), "{e}");
}

#[test]
fn worker_message_round_trip() {
    let scene = tiny_chess().build().unwrap();
    let t = tiles(64, 36, 16)[4];
    let answer =
        TileResult::from_bytes(&render_tile_message(&scene, &t.to_bytes()).unwrap()).unwrap();
    assert_eq!(answer, TileResult::new(t, &render_tile(&scene, t)));
    let outside = ibdyn_raytrace::Tile { x: 60, ..t };
    assert!(render_tile_message(&scene, &outside.to_bytes()).is_err());
    assert!(render_tile_message(&scene, &[1, 2, 3]).is_err());
}
