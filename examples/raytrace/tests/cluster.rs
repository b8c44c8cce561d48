//! The master/worker render over ibdyn, through `ibdyn run`: the image is the same, pixel for
//! pixel, as a one-process render, whatever the workers do (spawned, static, growing,
//! shrinking, one of them crashing).

use std::path::{Path, PathBuf};
use std::process::Command;

const SIZE: [&str; 8] = [
    "--width", "96", "--height", "64", "--spp", "2", "--tile", "16",
];

fn target_dir() -> PathBuf {
    let mut p = std::env::current_exe().expect("test binary path");
    p.pop();
    if p.ends_with("deps") {
        p.pop();
    }
    p
}

fn ibdyn() -> PathBuf {
    let p = target_dir().join("ibdyn");
    assert!(
        p.exists(),
        "{} is missing: build the workspace first (cargo build --workspace)",
        p.display()
    );
    p
}

fn raytrace() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_raytrace"))
}

fn local_reference(dir: &Path) -> Vec<u8> {
    let out = dir.join("local.png");
    let o = Command::new(raytrace())
        .args(SIZE)
        .args(["--local", "-q", "-o", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read(out).unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ibdyn-raytrace-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn render(dir: &Path, name: &str, launcher: &[&str], mode: &[&str]) -> (Vec<u8>, String) {
    let out = dir.join(format!("{name}.png"));
    let o = Command::new(ibdyn())
        .arg("run")
        .args(launcher)
        .arg(raytrace())
        .args(SIZE)
        .args(mode)
        .args(["-q", "-o", out.to_str().unwrap()])
        .output()
        .expect("start ibdyn run");
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{name}: {}\n{stdout}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    (std::fs::read(&out).unwrap(), stdout)
}

#[test]
fn same_image_whatever_the_workers_do() {
    let dir = scratch("same");
    let reference = local_reference(&dir);
    let cases: [(&str, &[&str], &[&str]); 5] = [
        ("spawned", &["-n", "1"], &["--workers", "3"]),
        ("static", &["-n", "3"], &["--static"]),
        (
            "grow-shrink",
            &["-n", "1", "--nodes", "2"],
            &[
                "--workers",
                "1",
                "--grow-at",
                "20%:+2",
                "--shrink-at",
                "60%:-2",
            ],
        ),
        ("one-worker", &["-n", "1"], &["--workers", "1"]),
        (
            "grow-prestarted",
            &["-n", "1"],
            &["--workers", "1", "--grow-at", "20%:+2", "--prestart", "2"],
        ),
    ];
    for (name, launcher, mode) in cases {
        let (png, stdout) = render(&dir, name, launcher, mode);
        assert!(
            png == reference,
            "{name}: the image differs from the one-process render\n{stdout}"
        );
        if name == "grow-shrink" {
            assert!(stdout.contains("3 spawned, 2 released"), "{stdout}");
        }
    }
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn a_crashing_worker_loses_no_tile() {
    let dir = scratch("crash");
    let reference = local_reference(&dir);
    let (png, stdout) = render(
        &dir,
        "crash",
        &["-n", "1"],
        &["--workers", "3", "--crash-worker", "1:2"],
    );
    assert!(
        png == reference,
        "the image differs after a worker crash\n{stdout}"
    );
    assert!(
        stdout.contains("workers lost (their tiles were rendered by others): 1"),
        "{stdout}"
    );
    std::fs::remove_dir_all(dir).ok();
}

/// `--elastic` under `ibdyn run`, resized from outside with `ibdyn resize` while it renders
/// (the master waits for each change at a set share of tiles, so the resize cannot miss).
#[test]
fn elastic_workers_follow_ibdyn_resize_and_the_image_stays_the_same() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let dir = scratch("elastic");
    let reference = local_reference(&dir);
    // A TMPDIR of its own: `ibdyn resize` finds this job's daemons and no other test's.
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let out = dir.join("elastic.png");
    let mut job = Command::new(ibdyn())
        .env("TMPDIR", &tmp)
        .args(["run", "-n", "2", "--nodes", "2"])
        .arg(raytrace())
        .args(SIZE)
        .args([
            "--elastic",
            "--await-resize-at",
            "20%",
            "--await-resize-at",
            "60%",
        ])
        .args(["-q", "-o", out.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stdin(Stdio::null())
        .spawn()
        .expect("start ibdyn run");
    let mut lines = BufReader::new(job.stdout.take().unwrap()).lines();
    let mut stdout = String::new();
    for change in ["--grow", "--shrink"] {
        for l in lines.by_ref().map_while(Result::ok) {
            stdout.push_str(&l);
            stdout.push('\n');
            if l == "raytrace: waiting for a resize" {
                break;
            }
        }
        let r = Command::new(ibdyn())
            .env("TMPDIR", &tmp)
            .args(["resize", change, "2"])
            .output()
            .expect("run ibdyn resize");
        assert!(
            r.status.success(),
            "ibdyn resize {change} 2: {}\n{stdout}",
            String::from_utf8_lossy(&r.stderr)
        );
    }
    for l in lines.map_while(Result::ok) {
        stdout.push_str(&l);
        stdout.push('\n');
    }
    let status = job.wait().unwrap();
    assert!(status.success(), "{status}\n{stdout}");
    assert!(stdout.contains("2 released"), "{stdout}");
    assert!(
        std::fs::read(&out).unwrap() == reference,
        "the elastic image differs from the one-process render\n{stdout}"
    );
    assert!(
        std::fs::read_dir(&tmp).unwrap().next().is_none(),
        "left behind in {}",
        tmp.display()
    );
    std::fs::remove_dir_all(dir).ok();
}
