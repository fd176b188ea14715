//! Robustness of the command line: values that land in YAML are checked against their field's
//! rules (image references, ports, user ids, names YAML would not read as strings), parser errors
//! and help carry an example, DNS messages name the bad label. Each refusal: message, exit 2,
//! folder unchanged; what is accepted renders through `kubectl kustomize` unchanged.

mod common;

use common::*;

fn refused(dir: &std::path::Path, args: &[&str], needles: &[&str]) {
    let before = snapshot(dir);
    let r = run(dir, args);
    assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
    for n in needles {
        assert!(
            r.stderr.contains(n),
            "{args:?}: {n:?} not in:\n{}",
            r.stderr
        );
    }
    assert_eq!(snapshot(dir), before, "{args:?} changed the folder");
}

#[test]
fn flag_values_that_would_break_yaml_are_refused() {
    let tmp = init_project("flags-op");
    let dir = project_dir(&tmp, "flags-op");
    fn api<'a>(extra: &[&'a str]) -> Vec<&'a str> {
        let mut a = words("create api --group cache --version v1 --kind Memcached");
        a.extend_from_slice(extra);
        a
    }
    for image in [
        "'memcached",
        "mem\u{7}cached",
        "1234",
        "null",
        "{a: b}",
        "Memcached:1",
        "a:",
        "a@sha256:12",
    ] {
        refused(
            &dir,
            &api(&["--image", image]),
            &["invalid image", "e.g. --image memcached:1.6"],
        );
    }
    refused(
        &dir,
        &api(&["--image", "m:1", "--image-container-port", "0"]),
        &["0 is not in 1..=65535", "Example:"],
    );
    refused(
        &dir,
        &api(&["--image", "m:1", "--image-container-port", "70000"]),
        &["Example:"],
    );
    refused(
        &dir,
        &api(&["--image", "m:1", "--run-as-user", "0"]),
        &["Example:"],
    );
    refused(
        &dir,
        &api(&["--image", "m:1", "--image-container-command", "a,b\u{1}"]),
        &["control characters"],
    );
    for (flag, value) in [
        ("--kind", "No"),
        ("--kind", "True"),
        ("--plural", "yes"),
        ("--plural", "off"),
    ] {
        let mut args = words("create api --version v1");
        if flag != "--kind" {
            args.extend(["--kind", "Memcached"]);
        }
        if flag != "--group" {
            args.extend(["--group", "cache"]);
        }
        args.extend([flag, value]);
        refused(&dir, &args, &["would read as a boolean, null or number"]);
    }
}

/// An image the grammar accepts, with a registry port, a tag and a digest, comes out of
/// `kubectl kustomize` exactly as given.
#[test]
fn accepted_images_render_unchanged() {
    let tmp = init_project("image-op");
    let dir = project_dir(&tmp, "image-op");
    let image = format!(
        "registry.local:5000/acme/mem__cached-x:v1.6_rc@sha256:{}",
        "a".repeat(64)
    );
    ok(
        &dir,
        &words(&format!(
            "create api --group cache --version v1 --kind Memcached --image {image} --image-container-port 65535 --run-as-user 2147483647"
        )),
    );
    if std::process::Command::new("kubectl")
        .arg("version")
        .arg("--client")
        .output()
        .is_err()
    {
        println!("SKIPPED: kubectl is not installed");
        return;
    }
    let docs = kustomize(&dir, "config/default");
    let deployment = of_kind(&docs, "Deployment")[0];
    let env = deployment["spec"]["template"]["spec"]["containers"][0]["env"]
        .as_array()
        .unwrap();
    assert!(env.iter().any(|e| e["value"] == image.as_str()), "{env:?}");
}

#[test]
fn parser_errors_and_help_show_an_example() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    for (args, example) in [
        (
            &["create", "api", "--kind"][..],
            "operator-rs create api --group cache",
        ),
        (
            &["init", "--no-such-flag"],
            "operator-rs init --domain example.com",
        ),
        (&["generate", "crd"], "operator-rs generate manifests"),
    ] {
        refused(dir, args, &["Example:", example]);
    }
    for cmd in ["create", "generate"] {
        let r = ok(dir, &[cmd, "--help"]);
        assert!(
            r.stdout.contains("Example") && r.stdout.contains(&format!("operator-rs {cmd} ")),
            "{}",
            r.stdout
        );
    }
}

#[test]
fn dns_messages_name_the_bad_label() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("dns-op");
    std::fs::create_dir(&dir).unwrap();
    let long = "a".repeat(64);
    refused(
        &dir,
        &["init", "--domain", &format!("{long}.com")],
        &[&format!("the part \"{long}\" is 64 characters long")],
    );
    refused(
        &dir,
        &["init", "--domain", "ex_ample.com"],
        &["the part \"ex_ample\" has '_'"],
    );
    let fresh = tmp.path().join("not-yet");
    let r = run(tmp.path(), &["-C", "not-yet", "init", "--domain", "Bad"]);
    assert_eq!(r.code, 2);
    assert!(!fresh.exists(), "a refused init created its folder");
}
