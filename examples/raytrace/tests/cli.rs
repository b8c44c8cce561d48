//! The `raytrace` program end to end, as a separate process.

use std::process::Command;

fn raytrace() -> Command {
    Command::new(env!("CARGO_BIN_EXE_raytrace"))
}

#[test]
fn local_render_writes_a_png_of_the_asked_size() {
    let dir = std::env::temp_dir().join(format!("raytrace-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("tiny.png");
    let status = raytrace()
        .args([
            "--local", "--width", "40", "--height", "24", "--spp", "1", "--tile", "9",
        ])
        .args(["--threads", "2", "-q", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    let bytes = std::fs::read(&out);
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(status.status.success(), "{status:?}");
    let image = ibdyn_raytrace::Image::from_png(&bytes.unwrap()).unwrap();
    assert_eq!((image.width, image.height), (40, 24));
    let stdout = String::from_utf8_lossy(&status.stdout);
    assert!(stdout.contains("rendered 40x24 at 1 spp"), "{stdout}");
}

#[test]
fn bad_input_fails_clearly() {
    let out = raytrace().args(["--workers", "0"]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--workers must be at least 1"), "{err}");

    let out = raytrace()
        .args(["--scene", "/nonexistent/scene.toml"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("reading scene file /nonexistent/scene.toml"),
        "{err}"
    );

    let out = raytrace().args(["--shrink-at", "60%:+2"]).output().unwrap();
    assert!(!out.status.success());
}
