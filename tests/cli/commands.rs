//! Integration tests of the binary: `init` and `create api` in temporary folders, refusals of bad
//! input (message, exit code, and a folder left byte-for-byte unchanged), and safe re-runs.

use crate::common;

use common::*;

#[test]
fn init_lays_out_a_project() {
    let tmp = init_project("memcached-operator");
    let dir = project_dir(&tmp, "memcached-operator");
    for f in [
        "PROJECT",
        "Cargo.toml",
        "src/main.rs",
        "src/lib.rs",
        "src/api/mod.rs",
        "src/controllers/mod.rs",
        "Makefile",
        "Dockerfile",
        ".dockerignore",
        ".gitignore",
        "README.md",
        "config/default/kustomization.yaml",
        "config/manager/manager.yaml",
        "config/rbac/role.yaml",
        "config/crd/kustomization.yaml",
        "config/samples/kustomization.yaml",
        "config/prometheus/kustomization.yaml",
        "tests/crds.rs",
    ] {
        assert!(dir.join(f).is_file(), "init did not write {f}");
    }
    let project = read(&dir, "PROJECT");
    assert!(project.contains("domain: example.com"), "{project}");
    assert!(
        project.contains("projectName: memcached-operator"),
        "{project}"
    );
    assert!(
        project.contains("repo: github.com/acme/memcached-operator"),
        "{project}"
    );
    let cargo = read(&dir, "Cargo.toml");
    assert!(cargo.contains("name = \"memcached-operator\""), "{cargo}");
    let features: Vec<&str> = [
        "v1_33",
        "v1_34",
        "v1_35",
        "v1_36",
        "v1_37",
        "\"latest\"",
        "\"earliest\"",
    ]
    .into_iter()
    .filter(|f| cargo.contains(f))
    .collect();
    assert_eq!(
        features.len(),
        1,
        "exactly one k8s-openapi version feature, found {features:?}"
    );
}

#[test]
fn init_takes_the_folder_name_and_refuses_a_second_run() {
    let tmp = init_project("my-op");
    let dir = project_dir(&tmp, "my-op");
    assert!(read(&dir, "PROJECT").contains("projectName: my-op"));
    let before = snapshot(&dir);
    let r = run(&dir, &["init", "--domain", "example.com"]);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("already an operator-rs project"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("--force"), "{}", r.stderr);
    assert_eq!(snapshot(&dir), before, "a refused init changed files");
}

#[test]
fn init_refuses_to_overwrite_user_files_without_force() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("op");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("Makefile"), "all:\n\techo mine\n").unwrap();
    let before = snapshot(&dir);
    let r = run(&dir, &["init", "--domain", "example.com"]);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("refusing to overwrite") && r.stderr.contains("Makefile"),
        "{}",
        r.stderr
    );
    assert_eq!(snapshot(&dir), before);
    ok(&dir, &words("init --domain example.com --force"));
    assert!(!read(&dir, "Makefile").contains("echo mine"));
}

#[test]
fn init_with_dash_c_acts_on_another_folder() {
    let tmp = tempfile::tempdir().unwrap();
    ok(
        tmp.path(),
        &words("-C elsewhere init --domain example.com --project-name other-op"),
    );
    assert!(tmp.path().join("elsewhere/PROJECT").is_file());
    ok(
        tmp.path(),
        &words("-C elsewhere create api --group cache --version v1 --kind Memcached"),
    );
    assert!(
        tmp.path()
            .join("elsewhere/src/api/v1/memcached.rs")
            .is_file()
    );
}

/// Each bad input: the arguments, and what the message must say.
const BAD_CREATE_API: &[(&str, &[&str])] = &[
    (
        "--group Cache --version v1 --kind Memcached",
        &["invalid group \"Cache\"", "DNS-1123", "e.g."],
    ),
    (
        "--group ca_che --version v1 --kind Memcached",
        &["invalid group", "e.g."],
    ),
    (
        "--group cache --version 1 --kind Memcached",
        &["invalid version \"1\"", "v1alpha1"],
    ),
    (
        "--group cache --version v1gamma1 --kind Memcached",
        &["invalid version", "e.g."],
    ),
    (
        "--group cache --version V1 --kind Memcached",
        &["invalid version \"V1\""],
    ),
    (
        "--group cache --version v1 --kind memcached",
        &[
            "invalid kind \"memcached\"",
            "UpperCamelCase",
            "e.g. --kind",
        ],
    ),
    (
        "--group cache --version v1 --kind Mem_cached",
        &["invalid kind", "ASCII letters and digits"],
    ),
    (
        "--group cache --version v1 --kind Type",
        &["invalid kind \"Type\"", "keyword"],
    ),
    (
        "--group cache --version v1 --kind Spec",
        &["invalid kind \"Spec\"", "clashes"],
    ),
    (
        "--group cache --version v1 --kind Memcached --plural Memcacheds",
        &["invalid plural \"Memcacheds\"", "DNS-1035"],
    ),
    (
        "--group cache --version v1 --kind Memcached --resource=false --controller=false",
        &["nothing to create"],
    ),
    (
        "--group apps --version v1 --kind Deploymnt --resource=false",
        &["Deploymnt", "k8s-openapi has no kind"],
    ),
    (
        "--group cache --version v1 --kind Widget --resource=false",
        &["not a kind of this project"],
    ),
    (
        "--group cache --version v1 --kind Memcached --image a\"b",
        &["invalid image", "e.g. --image memcached:1.6"],
    ),
    (
        "--group cache --version v1 --kind Memcached --image m:1 --run-as-user 0",
        &[
            "--run-as-user",
            "from 1 to 2147483647",
            "e.g. --run-as-user 1001",
            "Example:",
        ],
    ),
    (
        "--group --version v1 --kind Memcached",
        &["a value is required for '--group"],
    ),
];

#[test]
fn create_api_refuses_bad_input_and_changes_nothing() {
    let tmp = init_project("bad-input");
    let dir = project_dir(&tmp, "bad-input");
    let before = snapshot(&dir);
    for (line, needles) in BAD_CREATE_API {
        let args = words(line);
        let mut full = vec!["create", "api"];
        full.extend_from_slice(&args);
        let r = run(&dir, &full);
        assert_ne!(r.code, 0, "{args:?} was accepted");
        for n in *needles {
            assert!(
                r.stderr.contains(n),
                "{args:?}: message lacks {n:?}:\n{}",
                r.stderr
            );
        }
        assert_eq!(snapshot(&dir), before, "{args:?} changed files");
    }
}

#[test]
fn init_refuses_bad_input_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("op");
    std::fs::create_dir(&dir).unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["--domain", "Example.com"],
            "invalid domain \"Example.com\"",
        ),
        (&["--domain", "example..com"], "invalid domain"),
        // The owner is one line of the README's license section.
        (
            &["--domain", "example.com", "--owner", "Acme\nCorp"],
            "invalid owner \"Acme\\nCorp\": must be one line of text",
        ),
        (
            &["--domain", "example.com", "--owner", "Acme\u{1b}[31m"],
            "without control characters; it has '\\u{1b}'",
        ),
        (
            &words("--domain example.com --project-name My_Op"),
            "invalid project name \"My_Op\"",
        ),
        (
            &words("--domain example.com --project-name kube"),
            "dependency tree",
        ),
        // Crates of the generated project's dependency tree, not only its direct dependencies.
        (
            &words("--domain example.com --project-name libc"),
            "the crate `libc` is in the dependency tree",
        ),
        (
            &words("--domain example.com --project-name serde-saphyr"),
            "the crate `serde-saphyr` is in the dependency tree",
        ),
        (
            &words("--domain example.com --project-name tokio-rustls"),
            "dependency tree",
        ),
        (
            &words("--domain example.com --project-name hyper"),
            "dependency tree",
        ),
        // Every name made from the project name must be valid: the metrics Service is a DNS-1035
        // label of at most 63 characters, so a project name has at most 28.
        (
            &words("--domain example.com --project-name abcdefghijklmnopqrstuvwxyzabc"),
            "the metrics Service `abcdefghijklmnopqrstuvwxyzabc-controller-manager-metrics-service`",
        ),
        (
            &["--domain", "example.com", "--project-name", &"a".repeat(57)],
            "at most 28 characters",
        ),
        (
            &[
                "--domain",
                "example.com",
                "--repo",
                "git@github.com:acme/op",
            ],
            "e.g. --repo github.com/acme/op",
        ),
        (
            &[
                "--domain",
                "example.com",
                "--repo",
                "ssh://github.com/acme/op",
            ],
            "invalid repo",
        ),
        (
            &[
                "--domain",
                "example.com",
                "--repo",
                "https://https://github.com/acme/op",
            ],
            "invalid repo",
        ),
        (
            &["--domain", "example.com", "--repo", "github.com//op"],
            "invalid repo",
        ),
        (
            &[
                "--domain",
                "example.com",
                "--repo",
                "github.com:8080/acme/op",
            ],
            "invalid repo",
        ),
        (
            &["--domain", "example.com", "--repo", "github.com/a b"],
            "invalid repo",
        ),
        (
            &words("--domain example.com --license mit"),
            "invalid value 'mit'",
        ),
    ];
    for (args, needle) in cases {
        let mut full = vec!["init"];
        full.extend_from_slice(args);
        let r = run(&dir, &full);
        assert_ne!(r.code, 0, "{args:?} was accepted");
        assert!(r.stderr.contains(needle), "{args:?}: {}", r.stderr);
        assert!(snapshot(&dir).is_empty(), "{args:?} wrote files");
    }
}

#[test]
fn create_api_needs_an_initialised_project() {
    let tmp = tempfile::tempdir().unwrap();
    let r = run(
        tmp.path(),
        &words("create api --group cache --version v1 --kind Memcached"),
    );
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("not an operator-rs project") && r.stderr.contains("operator-rs init"),
        "{}",
        r.stderr
    );
    assert!(snapshot(tmp.path()).is_empty());
}

#[test]
fn create_api_twice_needs_force_and_rerunning_is_idempotent() {
    let tmp = init_project("twice");
    let dir = project_dir(&tmp, "twice");
    let args = words("create api --group cache --version v1alpha1 --kind Memcached");
    ok(&dir, &args);
    let before = snapshot(&dir);
    let r = run(&dir, &args);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("already exists") && r.stderr.contains("--force"),
        "{}",
        r.stderr
    );
    assert_eq!(snapshot(&dir), before);
    // --force re-scaffolds the kind's files but inserts nothing twice.
    let mut forced = args.to_vec();
    forced.push("--force");
    ok(&dir, &forced);
    assert_eq!(
        snapshot(&dir),
        before,
        "re-running with --force on unchanged files must change nothing"
    );
}

#[test]
fn create_api_for_a_second_kind_keeps_the_users_edits() {
    let tmp = init_project("rerun");
    let dir = project_dir(&tmp, "rerun");
    ok(
        &dir,
        &words("create api --group cache --version v1alpha1 --kind Memcached"),
    );
    let types = dir.join("src/api/v1alpha1/memcached.rs");
    let controller = dir.join("src/controllers/memcached.rs");
    let edited_types =
        std::fs::read_to_string(&types).unwrap() + "\n// a user's edit to the types\n";
    let edited_controller =
        std::fs::read_to_string(&controller).unwrap() + "\n// a user's edit to the controller\n";
    std::fs::write(&types, &edited_types).unwrap();
    std::fs::write(&controller, &edited_controller).unwrap();

    ok(
        &dir,
        &words("create api --group cache --version v1alpha1 --kind Redis"),
    );
    assert_eq!(std::fs::read_to_string(&types).unwrap(), edited_types);
    assert_eq!(
        std::fs::read_to_string(&controller).unwrap(),
        edited_controller
    );
    let mods = read(&dir, "src/controllers/mod.rs");
    assert_eq!(mods.matches("pub mod memcached;").count(), 1, "{mods}");
    assert_eq!(mods.matches("pub mod redis;").count(), 1, "{mods}");
    let version_mod = read(&dir, "src/api/v1alpha1/mod.rs");
    assert!(
        version_mod.contains("memcached") && version_mod.contains("redis"),
        "{version_mod}"
    );
    let project = read(&dir, "PROJECT");
    assert!(
        project.contains("kind: Memcached") && project.contains("kind: Redis"),
        "{project}"
    );
}

#[test]
fn create_api_records_versions_and_storage() {
    let tmp = init_project("versions");
    let dir = project_dir(&tmp, "versions");
    ok(
        &dir,
        &words("create api --group webapp --version v1 --kind Guestbook"),
    );
    // A second version of the same kind: its controller already exists, so it is refused ...
    let r = run(
        &dir,
        &words("create api --group webapp --version v2 --kind Guestbook"),
    );
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("one controller serves every version"),
        "{}",
        r.stderr
    );
    // ... and accepted as resource only, with the first version kept as the storage version.
    ok(
        &dir,
        &words("create api --group webapp --version v2 --kind Guestbook --controller=false"),
    );
    let project = operator_rs::project::Project::parse(&read(&dir, "PROJECT")).unwrap();
    let storage: Vec<(&str, bool)> = project
        .resources
        .iter()
        .map(|r| (r.version.as_str(), r.api.as_ref().unwrap().storage))
        .collect();
    assert_eq!(storage, vec![("v1", true), ("v2", false)]);
    // A different scope for another version of one kind is refused.
    let r = run(
        &dir,
        &words(
            "create api --group webapp --version v3 --kind Guestbook --controller=false --namespaced=false",
        ),
    );
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("--namespaced=true"), "{}", r.stderr);
}

/// A second controller of a kind (as `import` places one: `captain_backup` beside `captain`)
/// holds the file another kind's controller would get: `create api` for that kind refuses it,
/// with and without --force, in either layout, naming the file and what to do, and writes
/// nothing; the kind's types alone (`--controller=false`) are still made.
#[test]
fn create_api_never_replaces_another_kinds_controller_module() {
    for (name, init_flags, controllers) in [
        ("second-single", &[][..], "src/controllers"),
        (
            "second-multi",
            &["--multigroup"][..],
            "src/controllers/crew",
        ),
    ] {
        let tmp = init_project_with(name, init_flags);
        let dir = project_dir(&tmp, name);
        ok(
            &dir,
            &words("create api --group crew --version v1 --kind Captain"),
        );
        // Captain's second controller, declared beside its first.
        let second = format!("{controllers}/captain_backup.rs");
        let text = read(&dir, &format!("{controllers}/captain.rs"));
        std::fs::write(dir.join(&second), &text).unwrap();
        let module_file = dir.join(format!("{controllers}/mod.rs"));
        let mut modules = std::fs::read_to_string(&module_file).unwrap();
        modules.push_str("pub mod captain_backup;\n");
        std::fs::write(&module_file, modules).unwrap();
        let before = snapshot(&dir);
        let line = "create api --group crew --version v1 --kind CaptainBackup";
        for force in ["", " --force"] {
            let r = run(&dir, &words(&format!("{line}{force}")));
            assert_ne!(r.code, 0, "{name}{force}: accepted");
            for needle in [
                second.as_str(),
                "pub mod captain_backup",
                "--controller=false",
                "Nothing was written",
            ] {
                assert!(
                    r.stderr.contains(needle),
                    "{name}{force}: no {needle:?} in\n{}",
                    r.stderr
                );
            }
            assert_eq!(
                snapshot(&dir),
                before,
                "{name}{force}: something was written"
            );
        }
        ok(&dir, &words(&format!("{line} --controller=false")));
        assert_eq!(read(&dir, &second), text, "{name}: the second controller");
    }
}

#[test]
fn create_api_for_a_builtin_kind_uses_the_k8s_openapi_type() {
    let tmp = init_project("builtin");
    let dir = project_dir(&tmp, "builtin");
    ok(
        &dir,
        &words(
            "create api --group apps --version v1 --kind Deployment --resource=false --controller",
        ),
    );
    let controller = read(&dir, "src/controllers/deployment.rs");
    assert!(
        controller.contains("k8s_openapi::api::apps::v1::Deployment"),
        "{controller}"
    );
    assert!(!dir.join("src/api/v1/deployment.rs").exists());
    let project = read(&dir, "PROJECT");
    assert!(
        project.contains("core: true")
            && project.contains("path: k8s_openapi::api::apps::v1::Deployment"),
        "{project}"
    );
}

#[test]
fn version_and_completion() {
    let tmp = tempfile::tempdir().unwrap();
    let r = ok(tmp.path(), &["version"]);
    assert!(
        r.stdout.contains(env!("CARGO_PKG_VERSION")) && r.stdout.contains("kube"),
        "{}",
        r.stdout
    );
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let r = ok(tmp.path(), &["completion", shell]);
        assert!(
            r.stdout.contains("operator-rs") && r.stdout.contains("create"),
            "{shell}"
        );
    }
}

#[test]
fn every_command_shows_an_example_in_its_help() {
    let tmp = tempfile::tempdir().unwrap();
    for args in [
        &["--help"][..],
        &["init", "--help"],
        &["create", "api", "--help"],
        &["generate", "crds", "--help"],
        &["generate", "rbac", "--help"],
        &["generate", "manifests", "--help"],
        &["migrate-storage", "--help"],
        &["version", "--help"],
        &["completion", "--help"],
    ] {
        let r = ok(tmp.path(), args);
        assert!(
            r.stdout.contains("Example"),
            "{args:?} help has no example:\n{}",
            r.stdout
        );
    }
}

#[test]
fn a_controller_added_later_leaves_the_edited_types_alone() {
    let tmp = init_project("later");
    let dir = project_dir(&tmp, "later");
    ok(
        &dir,
        &words("create api --group cache --version v1 --kind Memcached --controller=false"),
    );
    assert!(!dir.join("src/controllers/memcached.rs").exists());
    let types = dir.join("src/api/v1/memcached.rs");
    let edited = std::fs::read_to_string(&types).unwrap() + "\n// a user's edit\n";
    std::fs::write(&types, &edited).unwrap();
    ok(
        &dir,
        &words(
            "create api --group cache --version v1 --kind Memcached --resource=false --controller",
        ),
    );
    assert!(dir.join("src/controllers/memcached.rs").is_file());
    assert_eq!(std::fs::read_to_string(&types).unwrap(), edited);
    let project = operator_rs::project::Project::parse(&read(&dir, "PROJECT")).unwrap();
    assert_eq!(project.resources.len(), 1);
    assert!(project.resources[0].controller && project.resources[0].api.is_some());
}

/// `--group`, `--version` and `--kind` are one set of flags for `create api`, `create webhook`
/// and `edit api`, each command saying what it reads differently.
#[test]
fn kind_flags_are_shared_and_each_command_says_its_reading() {
    let tmp = tempfile::tempdir().unwrap();
    // The help as one line (clap wraps it to the terminal).
    let help = |line: &str| {
        let text = ok(tmp.path(), &words(&format!("{line} --help"))).stdout;
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    for line in ["create api", "create webhook", "edit api"] {
        let text = help(line);
        for flag in ["--group <GROUP>", "--version <VERSION>", "--kind <KIND>"] {
            assert!(text.contains(flag), "`{line} --help` lacks {flag}:\n{text}");
        }
    }
    assert!(help("create api").contains("`core` for core/v1"));
    assert!(help("create webhook").contains("the hub: the storage version the types declare"));
    assert!(help("edit api").contains("or in full (`cache.example.com`)"));
    // The value check is shared too: a value given with `=` that starts with '-' is the user's
    // value, refused as invalid (not as a missing value) alike.
    let project = init_project("flags-op");
    let dir = project_dir(&project, "flags-op");
    for line in [
        "create api --group=-v --version v1 --kind Memcached",
        "create webhook --group=-v --version v1 --kind Memcached --defaulting",
    ] {
        let r = run(&dir, &words(line));
        assert!(
            r.code != 0
                && r.stderr.contains("invalid --group \"-v\"")
                && !r.stderr.contains("has no value"),
            "{line}: {}",
            r.stderr
        );
    }
}

/// PROJECT is YAML other tools write too (kubebuilder's `plugins:`, per-resource keys): every
/// command that rewrites it keeps the keys operator-rs does not know, at their place, and the
/// user's comments; keys operator-rs owns still follow the commands (a re-run without --image
/// drops `deployImage`).
#[test]
fn project_rewrites_keep_unknown_keys_and_comments() {
    let tmp = init_project("keep-op");
    let dir = project_dir(&tmp, "keep-op");
    ok(
        &dir,
        &words("create api --group cache --version v1 --kind Memcached --image memcached:1.6"),
    );
    let text = read(&dir, "PROJECT")
        .replacen(
            "\ndomain: example.com\n",
            "\n# the domain we own\ndomain: example.com # trailing note\n",
            1,
        )
        .replace(
            "  kind: Memcached\n",
            "  kind: Memcached\n  # about the team\n  team: storage\n  module: github.com/acme/x\n",
        )
        + "plugins:\n  manifests.sdk.operatorframework.io/v2: {}\n  deploy-image.go.kubebuilder.io/v1-alpha:\n    resources:\n    - kind: Memcached\n      image: memcached:1.6\n# the end\n";
    std::fs::write(dir.join("PROJECT"), &text).unwrap();
    for line in [
        "create api --group cache --version v2 --kind Memcached --controller=false",
        "edit api --group cache --version v2 --kind Memcached --storage",
        "create webhook --group cache --version v2 --kind Memcached --defaulting",
        "create api --group cache --version v1 --kind Memcached --force",
    ] {
        ok(&dir, &words(line));
        let after = read(&dir, "PROJECT");
        for kept in [
            "# the domain we own\ndomain: example.com # trailing note\n",
            "  # about the team\n",
            "  team: storage\n",
            "  module: github.com/acme/x\n",
            "plugins:\n",
            "manifests.sdk.operatorframework.io/v2: {}",
            "    - kind: Memcached\n      image: memcached:1.6\n",
            "# the end\n",
        ] {
            assert!(
                after.contains(kept),
                "after `{line}`: {kept:?} lost:\n{after}"
            );
        }
        // The unknown keys stay with their resource (v1), not with another.
        let v1 = after
            .split("- group:")
            .find(|r| r.contains("version: v1\n"))
            .unwrap();
        assert!(v1.contains("module: github.com/acme/x"), "{after}");
        let project = operator_rs::project::Project::parse(&after).unwrap();
        assert_eq!(project.resources.len(), 2, "{after}");
    }
    let after = read(&dir, "PROJECT");
    assert!(
        !after.contains("deployImage"),
        "the re-run without --image drops it:\n{after}"
    );
}

/// `--repo` as a URL is recorded as the repository path it names: PROJECT's `repo` (a Go-style
/// module path, as kubebuilder's) and Cargo.toml's `https://<repo>` are never `https://https://`.
#[test]
fn init_takes_a_repository_url_as_its_path() {
    for (given, path) in [
        ("https://github.com/acme/op", "github.com/acme/op"),
        ("http://github.com/acme/op/", "github.com/acme/op"),
        ("HTTPS://github.com/acme/op.git", "github.com/acme/op"),
        ("github.com/acme/op", "github.com/acme/op"),
        (
            "gitlab.example.com/group/sub/op",
            "gitlab.example.com/group/sub/op",
        ),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("op");
        std::fs::create_dir(&dir).unwrap();
        ok(&dir, &["init", "--domain", "example.com", "--repo", given]);
        let project = read(&dir, "PROJECT");
        assert!(
            project.contains(&format!("repo: {path}\n")),
            "{given}: {project}"
        );
        let cargo = read(&dir, "Cargo.toml");
        assert!(
            cargo.contains(&format!("repository = \"https://{path}\"")),
            "{given}: {cargo}"
        );
        assert!(!cargo.contains("https://https://") && !cargo.contains("https://http://"));
    }
}

/// Names the API server refuses or does not serve are refused before anything is written: a kind
/// beside another kind's list kind in one group, a kind in a protected group without the API
/// approval annotation (which the user sets on the kind, documented in the refusal).
#[test]
fn kinds_the_api_server_would_not_serve_are_refused() {
    let tmp = init_project("served");
    let dir = project_dir(&tmp, "served");
    ok(
        &dir,
        &words("create api --group ship --version v1 --kind Foo --controller=false"),
    );
    let before = snapshot(&dir);
    let r = run(
        &dir,
        &words("create api --group ship --version v1 --kind FooList --controller=false"),
    );
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains(
            "both claim `FooList` (as a kind or a list kind) in the group ship.example.com"
        ) && r.stderr.contains("Nothing was written"),
        "{}",
        r.stderr
    );
    assert_eq!(snapshot(&dir), before);
    // In another group, FooList is fine.
    ok(
        &dir,
        &words("create api --group dock --version v1 --kind FooList --controller=false"),
    );

    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("protected");
    std::fs::create_dir(&dir).unwrap();
    ok(&dir, &words("init --domain sigs.k8s.io"));
    ok(
        &dir,
        &words("create api --group ship --version v1 --kind Foo --controller=false"),
    );
    let r = run(&dir, &words("generate crds"));
    assert_ne!(r.code, 0);
    for e in [
        "src/api/v1/foo.rs:",
        "the group ship.sigs.k8s.io is protected",
        "api-approved.kubernetes.io",
        "#[kube(annotation(",
    ] {
        assert!(r.stderr.contains(e), "no {e:?} in\n{}", r.stderr);
    }
    let source = read(&dir, "src/api/v1/foo.rs");
    std::fs::write(
        dir.join("src/api/v1/foo.rs"),
        source.replacen(
            "    namespaced,\n",
            "    namespaced,\n    annotation(\"api-approved.kubernetes.io\", \"https://github.com/kubernetes/enhancements/pull/1111\"),\n",
            1,
        ),
    )
    .unwrap();
    ok(&dir, &words("generate crds"));
    let crd = read(&dir, "config/crd/bases/ship.sigs.k8s.io_foos.yaml");
    assert!(
        crd.contains(
            "api-approved.kubernetes.io: https://github.com/kubernetes/enhancements/pull/1111"
        ),
        "{crd}"
    );
}

/// A CRD name of 253 characters (the most kube-apiserver takes) makes `<group>_<plural>.yaml` 258
/// bytes: the file name is cut and ended with a hash, the same on every run, and everything
/// that finds the file (the kustomization, `--check`) finds it.
#[test]
fn a_crd_name_of_253_characters_gets_a_file() {
    let domain = format!(
        "{}.{}.{}.io",
        "d".repeat(63),
        "e".repeat(63),
        "f".repeat(63)
    );
    let group = "g".repeat(39);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("long");
    std::fs::create_dir(&dir).unwrap();
    ok(&dir, &["init", "--domain", &domain]);
    ok(
        &dir,
        &[
            "create",
            "api",
            "--group",
            &group,
            "--version",
            "v1",
            "--kind",
            "Abcdefghijklmnopq",
            "--controller=false",
        ],
    );
    let files: Vec<String> = std::fs::read_dir(dir.join("config/crd/bases"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let file = &files[0];
    assert!(
        file.len() <= 255 && file.ends_with(".yaml"),
        "{file} ({} bytes)",
        file.len()
    );
    let crd: serde_json::Value =
        serde_saphyr::from_str(&read(&dir, &format!("config/crd/bases/{file}"))).unwrap();
    let name = crd["metadata"]["name"].as_str().unwrap();
    assert_eq!(name.len(), 253, "{name}");
    // Cut, and ended with `-` and 16 hex digits.
    let (kept, hash) = file.trim_end_matches(".yaml").rsplit_once('-').unwrap();
    assert!(
        hash.len() == 16 && hash.chars().all(|c| c.is_ascii_hexdigit()),
        "{file}"
    );
    assert!(
        format!("{group}.{domain}_abcdefghijklmnopqs").starts_with(kept),
        "{file}"
    );
    // The same file on every run.
    std::fs::remove_dir_all(dir.join("config/crd/bases")).unwrap();
    ok(&dir, &words("generate crds"));
    assert!(dir.join("config/crd/bases").join(file).exists());
    assert!(read(&dir, "config/crd/kustomization.yaml").contains(&format!("bases/{file}")));
    let check = run(&dir, &words("generate manifests --check"));
    assert_eq!(check.code, 0, "{}{}", check.stdout, check.stderr);
}

/// A kind named as a kind of another group (`Memcached` of cache and of web; `MemCached`, the
/// same ClusterRole name) gets editor and viewer roles of its own, qualified with its group: they
/// were skipped, the first kind's file being there, and the first kind's roles kept granting only
/// its group. The first kind's roles stay as they were; every role reaches `make deploy`.
#[test]
fn a_kind_named_as_another_group_s_gets_its_own_roles() {
    let tmp = init_project("twogroups-op");
    let dir = project_dir(&tmp, "twogroups-op");
    ok(
        &dir,
        &words("create api --group cache --version v1 --kind Memcached"),
    );
    let first = read(&dir, "config/rbac/memcached_editor_role.yaml");
    ok(
        &dir,
        &words("create api --group web --version v2 --kind Memcached --controller=false"),
    );
    ok(
        &dir,
        &words("create api --group store --version v1 --kind MemCached --controller=false"),
    );
    assert_eq!(read(&dir, "config/rbac/memcached_editor_role.yaml"), first);
    let roles: Vec<serde_json::Value> = kustomize(&dir, "config/rbac")
        .into_iter()
        .filter(|o| {
            o["metadata"]["name"]
                .as_str()
                .is_some_and(|n| n.ends_with("-editor-role") || n.ends_with("-viewer-role"))
        })
        .collect();
    // The API groups a role grants on, each once.
    let granted = |name: &str| -> std::collections::BTreeSet<String> {
        let role = roles
            .iter()
            .find(|r| r["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no role {name} in {roles:#?}"));
        role["rules"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|r| r["apiGroups"].as_array().unwrap().clone())
            .map(|g| g.as_str().unwrap().to_string())
            .collect()
    };
    for (name, group) in [
        ("memcached-editor-role", "cache.example.com"),
        ("memcached-viewer-role", "cache.example.com"),
        ("web-memcached-editor-role", "web.example.com"),
        ("web-memcached-viewer-role", "web.example.com"),
        ("store-memcached-editor-role", "store.example.com"),
        ("store-memcached-viewer-role", "store.example.com"),
    ] {
        assert_eq!(granted(name), [group.to_string()].into(), "{name}");
    }
    assert_eq!(roles.len(), 6, "{roles:#?}");
    assert!(
        dir.join("config/rbac/web_memcached_editor_role.yaml")
            .is_file()
    );
    assert!(
        dir.join("config/rbac/store_mem_cached_viewer_role.yaml")
            .is_file()
    );
}
