//! Robustness of the command line: values that land in YAML are checked against their field's
//! rules (image references, ports, user ids, names YAML would not read as strings), parser errors
//! and help carry an example, DNS messages name the bad label. Each refusal: message, exit 2,
//! folder unchanged; what is accepted renders through `kubectl kustomize` unchanged.

use crate::common;

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
    // Every numeric flag: the rule (its range) and an example of the flag, whatever is wrong.
    let deploy = "--image memcached:1.6 --image-container-port 11211 --run-as-user 1001";
    let not_numbers = ["0", "-1", "99999999999", "abc", "1.5", "", "0x10"];
    for (flag, rule, example, too_large) in [
        (
            "--image-container-port",
            "from 1 to 65535",
            "e.g. --image-container-port 11211",
            "65536",
        ),
        (
            "--run-as-user",
            "from 1 to 2147483647",
            "e.g. --run-as-user 1001",
            "2147483648",
        ),
    ] {
        for bad in not_numbers.iter().chain([&too_large]) {
            let value = format!("{flag}={bad}");
            refused(
                &dir,
                &api(&["--image", "m:1", &value]),
                &[rule, example, "Example:", deploy],
            );
        }
    }
    for bad in ["-1", "abc", "1e3", "99999999999"] {
        let value = format!("--max-desc-len={bad}");
        for cmd in ["crds", "manifests"] {
            refused(
                &dir,
                &["generate", cmd, &value],
                &[
                    "from 0 to 4294967295",
                    "e.g. --max-desc-len 0",
                    &format!("operator-rs generate {cmd} --max-desc-len 0"),
                ],
            );
        }
    }
    // Nothing of --image-container-command is dropped: an empty command or argument, or a
    // program with a space (meant as arguments), is refused with the way to write it.
    for (bad, needle) in [
        ("", "it is empty"),
        (",", "part 1 of its comma-separated list is empty"),
        (
            "memcached,,-m=64",
            "part 2 of its comma-separated list is empty",
        ),
        (
            "memcached,-m=64,",
            "part 3 of its comma-separated list is empty",
        ),
        (
            "memcached -m 64",
            "e.g. --image-container-command \"memcached,-m,64\"",
        ),
    ] {
        refused(
            &dir,
            &api(&["--image", "m:1", "--image-container-command", bad]),
            &[needle, "invalid --image-container-command"],
        );
    }
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

/// An argument that is not UTF-8 is refused by name (which flag's value it is), not with a
/// panic; only -C takes any path.
#[cfg(unix)]
#[test]
fn arguments_that_are_not_utf8_are_named() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let tmp = init_project("utf8-op");
    let dir = project_dir(&tmp, "utf8-op");
    let bad = OsStr::from_bytes(b"ca\xffche");
    let before = snapshot(&dir);
    let gvk = ["--version", "v1", "--kind", "Memcached"];
    for (args, named, after) in [
        (
            vec!["create", "api", "--group"],
            "the value of --group",
            &gvk[..],
        ),
        (
            vec!["create", "api", "--kind"],
            "the value of --kind",
            &gvk[..2],
        ),
        (vec!["init", "--domain"], "the value of --domain", &[][..]),
        (
            vec!["edit", "api", "--deprecated"],
            "the value of --deprecated",
            &gvk[..],
        ),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_operator-rs"))
            .args(&args)
            .arg(bad)
            .args(after)
            .current_dir(&dir)
            .output()
            .unwrap();
        let r: Run = out.into();
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
        for needle in [
            named,
            "is not valid UTF-8",
            "\"ca\u{FFFD}che\"",
            "e.g. operator-rs ",
        ] {
            assert!(
                r.stderr.contains(needle),
                "{args:?}: {needle:?} in {}",
                r.stderr
            );
        }
    }
    // --flag=value spelling: the value alone is shown.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_operator-rs"))
        .args(["create", "api"])
        .arg(OsStr::from_bytes(b"--group=ca\xffche"))
        .current_dir(&dir)
        .output()
        .unwrap();
    let r: Run = out.into();
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("the value of --group, \"ca\u{FFFD}che\""),
        "{}",
        r.stderr
    );
    assert_eq!(snapshot(&dir), before);
    // -C takes a folder whose name is not UTF-8.
    let odd = tmp.path().join(OsStr::from_bytes(b"odd\xff"));
    std::fs::create_dir(&odd).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_operator-rs"))
        .arg("-C")
        .arg(&odd)
        .args(["init", "--domain", "example.com", "--project-name", "odd"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(odd.join("PROJECT").is_file());
}

/// A plural the user did not type is not blamed on them: the message says it was derived from
/// the kind and how to set one.
#[test]
fn a_derived_plural_is_named_as_derived() {
    let tmp = init_project("plural-op");
    let dir = project_dir(&tmp, "plural-op");
    ok(
        &dir,
        &words("create api --group cache --version v1 --kind Foo --plural bars --controller=false"),
    );
    // `Bar` derives `bars`, which Foo has.
    refused(
        &dir,
        &words("create api --group cache --version v1 --kind Bar --controller=false"),
        &[
            "the plural \"bars\" (not given: derived from --kind Bar",
            "set one with --plural",
            "e.g. --plural",
        ],
    );
    // Typed, it is the flag that is named.
    let r = run(
        &dir,
        &words(
            "create api --group cache --version v1 --kind Other --plural bars --controller=false",
        ),
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--plural bars: "), "{}", r.stderr);
    assert!(!r.stderr.contains("derived"), "{}", r.stderr);
    // A kind of 63 characters derives a plural of 64, past a DNS label.
    let kind = format!("A{}", "b".repeat(62));
    let mut args = words("create api --group cache --version v1 --controller=false");
    args.extend(["--kind", &kind]);
    let r = run(&dir, &args);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("derived from --kind") && r.stderr.contains("e.g. --plural "),
        "{}",
        r.stderr
    );
    // The example it gives is taken.
    let example = r.stderr.split("e.g. --plural ").nth(1).unwrap();
    let example = example.split_whitespace().next().unwrap();
    args.extend(["--plural", example]);
    ok(&dir, &args);
}
