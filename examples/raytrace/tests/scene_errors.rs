//! Scene files with mistakes give errors that name the line and the field.

use ibdyn_raytrace::{parse_scene, Error, RenderOverrides, DEFAULT_SCENE};

const HEADER: &str = r#"[render]
width = 8
height = 8

[camera]
from = [0.0, 1.0, -5.0]
at = [0.0, 0.0, 0.0]

[materials.red]
kind = "diffuse"
color = [0.8, 0.1, 0.1]
"#;

fn parse(body: &str) -> Result<ibdyn_raytrace::Scene, Error> {
    parse_scene(
        "test.toml",
        &format!("{HEADER}{body}"),
        &RenderOverrides::default(),
    )
}

fn message(body: &str) -> String {
    parse(body)
        .expect_err("the scene should be rejected")
        .to_string()
}

#[test]
fn minimal_scene_parses() {
    let scene = parse("[[object]]\nshape = \"sphere\"\ncenter = [0.0, 0.0, 0.0]\nradius = 1.0\nmaterial = \"red\"\n").unwrap();
    assert_eq!(scene.primitives.len(), 1);
    assert_eq!((scene.settings.width, scene.settings.spp), (8, 16));
}

#[test]
fn default_scene_parses_with_overrides() {
    let o = RenderOverrides {
        width: Some(100),
        spp: Some(2),
        ..Default::default()
    };
    let scene = parse_scene("chess", DEFAULT_SCENE, &o).unwrap();
    assert_eq!(
        (
            scene.settings.width,
            scene.settings.height,
            scene.settings.spp
        ),
        (100, 450, 2)
    );
    assert!(scene.primitives.len() > 100 && !scene.unions.is_empty() && !scene.lights.is_empty());
}

#[test]
fn toml_syntax_error_names_line() {
    let m = message("[[object]]\nshape = \"sphere\"\ncenter = [0.0, 0.0\n");
    assert!(m.starts_with("scene test.toml:"), "{m}");
    assert!(m.contains("line 14"), "{m}");
}

#[test]
fn unknown_material_names_object_line_and_choices() {
    let m = message("\n[[object]]\nshape = \"sphere\"\ncenter = [0.0, 0.0, 0.0]\nradius = 1.0\nmaterial = \"blue\"\n");
    let e = parse("\n[[object]]\nshape = \"sphere\"\ncenter = [0.0, 0.0, 0.0]\nradius = 1.0\nmaterial = \"blue\"\n");
    assert!(
        matches!(e, Err(Error::SceneInvalid { line: 13, .. })),
        "{m}"
    );
    assert!(m.contains("object 1 (sphere)"), "{m}");
    assert!(m.contains("unknown material \"blue\" (known: red)"), "{m}");
}

#[test]
fn bad_values_are_named() {
    let m = message("[[object]]\nshape = \"sphere\"\ncenter = [0.0, 0.0, 0.0]\nradius = -1.0\nmaterial = \"red\"\n");
    assert!(m.contains("radius must be > 0, got -1"), "{m}");
    let m = message("[[object]]\nshape = \"box\"\nmin = [1.0, 0.0, 0.0]\nmax = [0.0, 1.0, 1.0]\nmaterial = \"red\"\n");
    assert!(m.contains("min must be below max"), "{m}");
    let m = message("[materials.bad]\nkind = \"glass\"\nior = 0.5\n");
    assert!(
        m.contains("material \"bad\"") && m.contains("ior must be >= 1"),
        "{m}"
    );
    let m =
        message("[[light]]\ncorner = [0.0, 5.0, 0.0]\nu = [1.0, 0.0, 0.0]\nv = [2.0, 0.0, 0.0]\n");
    assert!(m.contains("light 1") && m.contains("not parallel"), "{m}");
}

#[test]
fn unknown_field_and_shape_are_reported() {
    let m = message("[[object]]\nshape = \"sphere\"\ncenter = [0.0, 0.0, 0.0]\nradiuss = 1.0\nmaterial = \"red\"\n");
    assert!(m.contains("radius"), "{m}");
    let m = message("[[object]]\nshape = \"torus\"\nmaterial = \"red\"\n");
    assert!(m.contains("torus"), "{m}");
    let m = message("[camera2]\nfrom = [0.0, 0.0, 0.0]\n");
    assert!(m.contains("camera2"), "{m}");
}

#[test]
fn unknown_prefab_and_missing_sections() {
    let m = message("[prefab.pawn]\nparts = [ { shape = \"sphere\", center = [0.0, 0.5, 0.0], radius = 0.5 } ]\n\n[[instance]]\nprefab = \"king\"\nat = [0.0, 0.0, 0.0]\nmaterial = \"red\"\n");
    assert!(
        m.contains("line 15") && m.contains("unknown prefab \"king\" (known: pawn)"),
        "{m}"
    );
    let e = parse_scene(
        "x",
        "[render]\nwidth = 1\nheight = 1\n",
        &RenderOverrides::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("camera"), "{e}");
    let o = RenderOverrides {
        width: Some(0),
        ..Default::default()
    };
    let e = parse_scene("x", HEADER, &o).unwrap_err();
    assert!(e.to_string().contains("image size"), "{e}");
}
