//! Robustness of what `generate crds` and `create api` read: clashes between kinds, names and
//! attribute keys in the source, stale CRDs, what the static reader cannot see, and inputs deep
//! enough to overflow a recursive reader. Each refusal: the message (file:line:col where it comes
//! from the source), exit code 2, and the folder byte-for-byte unchanged.

use crate::common;

use common::*;
use std::path::Path;

/// A project with one kind, Memcached, in src/api/v1alpha1/memcached.rs.
fn project_with_kind(name: &str) -> tempfile::TempDir {
    let tmp = init_project(name);
    ok(
        &project_dir(&tmp, name),
        &words("create api --group cache --version v1alpha1 --kind Memcached"),
    );
    tmp
}

const KIND_FILE: &str = "src/api/v1alpha1/memcached.rs";

/// Replace `from` with `to` in the kind's file (the edit a user makes).
fn edit(dir: &Path, from: &str, to: &str) {
    let text = read(dir, KIND_FILE);
    assert!(text.contains(from), "{from} not in {KIND_FILE}");
    std::fs::write(dir.join(KIND_FILE), text.replacen(from, to, 1)).unwrap();
}

/// Refused: exit 2, every `needles` in stderr, nothing changed.
fn refused(dir: &Path, args: &[&str], needles: &[&str]) -> Run {
    let before = snapshot(dir);
    let r = run(dir, args);
    assert_eq!(r.code, 2, "{args:?}: exit {}\n{}", r.code, r.stderr);
    for n in needles {
        assert!(
            r.stderr.contains(n),
            "{args:?}: {n:?} not in:\n{}",
            r.stderr
        );
    }
    assert_eq!(snapshot(dir), before, "{args:?} changed the folder");
    r
}

/// The line and 1-based column of `needle` in the kind's file.
fn at(dir: &Path, needle: &str) -> String {
    let text = read(dir, KIND_FILE);
    for (i, l) in text.lines().enumerate() {
        if let Some(c) = l.find(needle) {
            return format!("{KIND_FILE}:{}:{}", i + 1, c + 1);
        }
    }
    panic!("{needle} not in {KIND_FILE}")
}

#[test]
fn kinds_that_would_share_a_crd_or_a_name_are_refused() {
    let tmp = project_with_kind("clash-op");
    let dir = project_dir(&tmp, "clash-op");
    // From the command line: another kind's plural, its singular.
    for plural in ["memcacheds", "memcached"] {
        refused(
            &dir,
            &words(&format!(
                "create api --group cache --version v1alpha1 --kind Other --plural {plural}"
            )),
            &["one would be lost", "Nothing was written", "e.g. --plural"],
        );
    }
    // From the source: a kind not in PROJECT with the same plural, or the same short name.
    let stray = "\n#[derive(kube::CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"cache.example.com\", version = \"v1alpha1\", kind = \"Stray\", plural = \"memcacheds\")]\npub struct StraySpec { pub a: i32 }\n";
    let text = read(&dir, KIND_FILE);
    std::fs::write(dir.join(KIND_FILE), format!("{text}{stray}")).unwrap();
    for args in [
        &["generate", "crds"][..],
        &["generate", "crds", "--check"],
        &words("create api --group cache --version v1alpha1 --kind Third"),
    ] {
        refused(&dir, args, &["both claim", "memcacheds.cache.example.com"]);
    }
    std::fs::write(
        dir.join(KIND_FILE),
        format!(
            "{text}{}",
            stray.replace("plural = \"memcacheds\"", "shortname = \"mc\"")
        ),
    )
    .unwrap();
    edit(
        &dir,
        "kind = \"Memcached\"",
        "kind = \"Memcached\", shortname = \"mc\"",
    );
    refused(
        &dir,
        &["generate", "crds"],
        &["both claim `mc` (a short name)"],
    );
}

#[test]
fn names_in_the_source_get_the_command_line_rules() {
    let tmp = project_with_kind("srcname-op");
    let dir = project_dir(&tmp, "srcname-op");
    let outside = dir.parent().unwrap().to_path_buf();
    let before_outside = snapshot(&outside).len();
    let long_group = format!(
        "group = \"{}.{}.{}.{}\"",
        "a".repeat(63),
        "b".repeat(63),
        "c".repeat(63),
        "d".repeat(51)
    );
    let long_singular = format!("singular = \"{}\"", "a".repeat(63));
    // (text to replace, replacement, what the error is at, the rule it names)
    for (from, to, needle, rule) in [
        (
            "group = \"cache.example.com\"",
            "group = \"../../../../x\"",
            "group =",
            "DNS-1123 subdomain",
        ),
        (
            "group = \"cache.example.com\"",
            "group = \"cache\"",
            "group =",
            "has no dot",
        ),
        (
            "plural = \"memcacheds\"",
            "plural = \"../x\"",
            "plural =",
            "invalid plural",
        ),
        (
            "kind = \"Memcached\"",
            "kind = \"Memcached\", singular = \"A\"",
            "singular =",
            "invalid singular",
        ),
        (
            "kind = \"Memcached\"",
            "kind = \"Memcached\", shortname = \"m c\"",
            "shortname =",
            "invalid short name",
        ),
        (
            "kind = \"Memcached\"",
            "kind = \"Memcached\", category = \"a/b\"",
            "category =",
            "invalid category",
        ),
        (
            "version = \"v1alpha1\"",
            "version = \"V1\"",
            "version =",
            "invalid version",
        ),
        (
            "kind = \"Memcached\"",
            "kind = \"Mem/cached\"",
            "kind =",
            "invalid kind",
        ),
        (
            "kind = \"Memcached\"",
            "kind = \"Memcached\", plural = \"a\"",
            "plural = \"memcacheds\"",
            "given twice",
        ),
        // The CRD's name, `<plural>.<group>`, over 253 characters (each part valid alone).
        (
            "group = \"cache.example.com\"",
            long_group.as_str(),
            "group =",
            "at most 253 characters; this one has 254",
        ),
        // A plural kube-derive derives (from the singular here) gets the written one's rule.
        (
            "plural = \"memcacheds\"",
            long_singular.as_str(),
            "singular =",
            "kube-derive derives it from the singular",
        ),
    ] {
        let original = read(&dir, KIND_FILE);
        edit(&dir, from, to);
        let place = at(&dir, needle);
        let r = refused(&dir, &["generate", "crds"], &[rule]);
        assert!(
            r.stderr.starts_with(&format!("error: {place}: ")),
            "{to}: expected {place} in {}",
            r.stderr
        );
        assert!(
            r.stderr.contains("e.g. #[kube(") || rule == "given twice",
            "{}",
            r.stderr
        );
        std::fs::write(dir.join(KIND_FILE), original).unwrap();
    }
    assert_eq!(
        snapshot(&outside).len(),
        before_outside,
        "a file was written outside the project"
    );
}

#[test]
fn misspelt_attribute_keys_are_errors_with_the_closest_key() {
    let tmp = project_with_kind("keys-op");
    let dir = project_dir(&tmp, "keys-op");
    for (from, to, wrong, right) in [
        ("namespaced", "namespacd", "namespacd", "namespaced"),
        (
            "pub foo: Option<String>",
            "#[schemars(lenght(max = 3))]\n    pub foo: Option<String>",
            "lenght",
            "length",
        ),
        (
            "pub foo: Option<String>",
            "#[serde(defualt)]\n    pub foo: Option<String>",
            "defualt",
            "default",
        ),
        (
            "pub foo: Option<String>",
            "#[x_kube(validaton = \"true\")]\n    pub foo: Option<String>",
            "validaton",
            "validation",
        ),
        (
            "pub foo: Option<String>",
            "#[garde(lenght(max = 3))]\n    pub foo: Option<String>",
            "lenght",
            "length",
        ),
        (
            "pub foo: Option<String>",
            "#[validate(emial)]\n    pub foo: Option<String>",
            "emial",
            "email",
        ),
    ] {
        let original = read(&dir, KIND_FILE);
        if to.contains("x_kube") {
            // `#[x_kube]` is read only on a type that derives KubeSchema (else it is refused as
            // rustc refuses it, before its keys are looked at).
            edit(&dir, "PartialEq, JsonSchema)]", "PartialEq, KubeSchema)]");
        }
        edit(&dir, from, to);
        let place = at(&dir, wrong);
        refused(
            &dir,
            &["generate", "crds", "--check"],
            &[
                &place,
                &format!("unknown key `{wrong}`"),
                &format!("did you mean `{right}`?"),
            ],
        );
        std::fs::write(dir.join(KIND_FILE), original).unwrap();
    }
}

#[test]
fn crd_files_no_kind_produces_are_stale() {
    let tmp = project_with_kind("stale-op");
    let dir = project_dir(&tmp, "stale-op");
    let old = "config/crd/bases/cache.example.com_memcacheds.yaml";
    edit(&dir, "plural = \"memcacheds\"", "plural = \"caches\"");
    // With and without the API server's checks alike.
    for extra in [&[][..], &["--skip-apiserver-checks"]] {
        let r = run(
            &dir,
            &[&["generate", "crds", "--check"][..], extra].concat(),
        );
        assert_eq!(r.code, 1, "{extra:?}: {}", r.stderr);
        assert!(
            r.stdout.contains(&format!("{old}: no kind produces")),
            "{extra:?}: {}",
            r.stdout
        );
    }
    let r = ok(&dir, &["generate", "crds"]);
    assert!(r.stderr.contains(&format!("remove {old}")), "{}", r.stderr);
    assert!(!dir.join(old).exists());
    let k = read(&dir, "config/crd/kustomization.yaml");
    assert!(
        !k.contains("memcacheds") && k.contains("bases/cache.example.com_caches.yaml"),
        "{k}"
    );
    ok(&dir, &["generate", "crds", "--check"]);
    // A removed module: while its files are there, refused (the kind would go without a word:
    // a_custom_resource_outside_the_module_tree_is_refused_where_it_is); once they are deleted
    // too, its CRD goes.
    let lib = read(&dir, "src/api/mod.rs");
    std::fs::write(
        dir.join("src/api/mod.rs"),
        lib.replace("pub mod v1alpha1;", ""),
    )
    .unwrap();
    refused(
        &dir,
        &["generate", "crds", "--check"],
        &["a `CustomResource` in a file no module declaration reaches"],
    );
    std::fs::remove_dir_all(dir.join("src/api/v1alpha1")).unwrap();
    let r = run(&dir, &["generate", "crds", "--check"]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("cache.example.com_caches.yaml: no kind produces"),
        "{}",
        r.stdout
    );
}

#[test]
fn kinds_made_by_macros_are_pointed_out() {
    let tmp = project_with_kind("macro-op");
    let dir = project_dir(&tmp, "macro-op");
    let text = read(&dir, KIND_FILE);
    let mac = "\nmacro_rules! kinds {\n    ($n:ident) => {\n        #[derive(kube::CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n        #[kube(group = \"cache.example.com\", version = \"v1alpha1\", kind = \"Made\")]\n        pub struct $n { pub a: i32 }\n    };\n}\nkinds!(MadeSpec);\n";
    std::fs::write(dir.join(KIND_FILE), format!("{text}{mac}")).unwrap();
    // With and without the API server's checks alike.
    for extra in [&[][..], &["--skip-apiserver-checks"]] {
        let r = ok(
            &dir,
            &[&["generate", "crds", "--check"][..], extra].concat(),
        );
        assert!(
            r.stderr.contains(&format!(
                "{}: the static reader cannot see what the macro `kinds!`",
                at(&dir, "kinds!(")
            )) && r.stderr.contains("--exact"),
            "{extra:?}: {}",
            r.stderr
        );
    }
}

/// Two fields of a struct (or of a struct variant) that serde writes or reads under one JSON key,
/// or two variants of an enum under one name, by `rename` or `rename_all`: serde compiles them,
/// the CRD silently has one property (or lists a value twice). Refused at the second, naming both
/// (file:line:col) and the key; a skipped field or variant takes no key.
#[test]
fn fields_or_variants_sharing_a_json_name_are_refused() {
    let tmp = project_with_kind("jsonkey-op");
    let dir = project_dir(&tmp, "jsonkey-op");
    let original = read(&dir, KIND_FILE);
    let field = "pub foo: Option<String>,";
    // An enum field, the enum's body last (the spec's closing brace closes it).
    let enum_of = |body: &str| {
        format!(
            "pub e: Option<E>,\n}}\n#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]\n{body}"
        )
    };
    // (the field's replacement, the first and second names, the key, the rule)
    for (to, first, second, key, rule) in [
        (
            "#[serde(rename = \"x\")] pub a: String,\n    #[serde(rename = \"x\")] pub b: String,".to_string(),
            "`a` (at ",
            "and `b` of `MemcachedSpec`",
            "\"x\"",
            "both serialize as the JSON key",
        ),
        // rename_all = "camelCase" makes `a_b` the key "aB".
        (
            "pub a_b: String,\n    #[serde(rename = \"aB\")] pub other: String,".into(),
            "`a_b` (at ",
            "and `other` of `MemcachedSpec`",
            "\"aB\"",
            "both serialize as the JSON key",
        ),
        (
            "#[serde(rename(serialize = \"a\"))] pub a: String,\n    #[serde(rename(deserialize = \"a\"))] pub other: String,".into(),
            "`a` (at ",
            "and `other` of `MemcachedSpec`",
            "\"a\"",
            "both deserialize as the JSON key",
        ),
        (
            enum_of("pub enum E { V { x: String, #[serde(rename = \"x\")] y: String }"),
            "`x` (at ",
            "and `y` of `E::V`",
            "\"x\"",
            "both serialize as the JSON key",
        ),
        (
            enum_of("#[serde(rename_all = \"lowercase\")]\npub enum E { Ab, #[serde(rename = \"ab\")] B,"),
            "`Ab` (at ",
            "and `B` of `E`",
            "\"ab\"",
            "are both named",
        ),
    ] {
        std::fs::write(dir.join(KIND_FILE), original.replacen(field, &to, 1)).unwrap();
        let r = refused(&dir, &["generate", "crds"], &[first, second, key, rule, "e.g. `#[serde(rename = "]);
        // The second is on the replacement's last line.
        let line = original.lines().position(|l| l.contains(field)).unwrap() + to.lines().count() - 1;
        assert!(
            r.stderr.starts_with(&format!("error: {KIND_FILE}:{}:", line + 1)),
            "{to}: not at line {}: {}",
            line + 1,
            r.stderr
        );
    }
    // Skipped, a field or a variant takes no key: accepted.
    for to in [
        "pub a: String,\n    #[serde(rename = \"a\", skip)] pub other: String,".to_string(),
        enum_of("pub enum E { A, #[serde(rename = \"A\", skip)] B,"),
    ] {
        std::fs::write(dir.join(KIND_FILE), original.replacen(field, &to, 1)).unwrap();
        ok(&dir, &["generate", "crds"]);
    }
}

/// Through `#[serde(flatten)]`, a key given by two fields (a flattened struct's field named as
/// one of the outer struct's, or as one of another flattened struct's) is refused at the later
/// field, naming both: serde writes the key twice and reads it into one field only.
#[test]
fn keys_given_twice_through_a_flattened_field_are_refused() {
    let tmp = project_with_kind("flatkey-op");
    let dir = project_dir(&tmp, "flatkey-op");
    let original = read(&dir, KIND_FILE);
    let field = "pub foo: Option<String>,";
    // The fields, then `Inner` (the spec's closing brace closes it).
    let with_inner = |fields: &str, inner: &str| {
        format!(
            "{fields}\n}}\n#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]\npub struct Inner {{ {inner}"
        )
    };
    // (the replacement, the line the error is at, what it names)
    for (to, at, names) in [
        (
            with_inner(
                "#[serde(flatten)] pub inner: Inner,\n    pub x: Option<String>,",
                "pub x: Option<String>,",
            ),
            "    pub x: Option<String>,",
            [
                "the field `x` of `MemcachedSpec` gives the JSON key \"x\"",
                "and so does the flattened field `inner` (at ",
            ],
        ),
        (
            with_inner(
                "pub x: Option<String>,\n    #[serde(flatten)] pub inner: Inner,",
                "pub x: Option<String>,",
            ),
            "    #[serde(flatten)] pub inner: Inner,",
            [
                "the flattened field `inner` of `MemcachedSpec` gives the JSON key \"x\"",
                "and so does the field `x` (at ",
            ],
        ),
        (
            with_inner(
                "#[serde(flatten)] pub a: Inner,\n    #[serde(flatten)] pub b: Inner,",
                "pub x: Option<String>,",
            ),
            "    #[serde(flatten)] pub b: Inner,",
            [
                "the flattened field `b` of `MemcachedSpec` gives the JSON key \"x\"",
                "and so does the flattened field `a` (at ",
            ],
        ),
    ] {
        let text = original.replacen(field, &to, 1);
        std::fs::write(dir.join(KIND_FILE), &text).unwrap();
        let r = refused(
            &dir,
            &["generate", "crds"],
            &[
                names[0],
                names[1],
                "serde writes the key twice",
                "e.g. `#[serde(rename = ",
            ],
        );
        let line = text.lines().position(|l| l == at).unwrap() + 1;
        assert!(
            r.stderr.starts_with(&format!("error: {KIND_FILE}:{line}:")),
            "{to}: not at line {line}: {}",
            r.stderr
        );
    }
    // Keys of their own: accepted, every key a property of the CRD.
    let to = with_inner(
        "pub y: Option<String>,\n    #[serde(flatten)] pub inner: Inner,",
        "pub x: Option<String>,",
    );
    std::fs::write(dir.join(KIND_FILE), original.replacen(field, &to, 1)).unwrap();
    ok(&dir, &["generate", "crds"]);
    let crd = read(&dir, "config/crd/bases/cache.example.com_memcacheds.yaml");
    let crd: serde_json::Value = serde_saphyr::from_str(&crd).unwrap();
    let spec = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
    for key in ["x", "y"] {
        assert!(spec["properties"].get(key).is_some(), "no {key} in {spec}");
    }
}

#[test]
fn deep_or_looping_sources_are_errors_not_crashes() {
    let tmp = project_with_kind("deep-op");
    let dir = project_dir(&tmp, "deep-op");
    let lib = read(&dir, "src/lib.rs");
    // A #[path] loop.
    std::fs::write(
        dir.join("src/lib.rs"),
        format!("{lib}\n#[path = \"lib.rs\"]\nmod again;\n"),
    )
    .unwrap();
    refused(&dir, &["generate", "crds"], &["module loop"]);
    // `create api` scaffolds on, saying why the CRDs were not regenerated.
    let r = run(
        &dir,
        &words("create api --group cache --version v1 --kind Looped"),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("module loop"), "{}", r.stderr);
    std::fs::write(dir.join("src/lib.rs"), &lib).unwrap();
    // 5,000 nested modules, in one file and as files.
    let nested = format!("{}{}", "mod a {\n".repeat(5000), "}".repeat(5000));
    std::fs::write(dir.join("src/deep.rs"), nested).unwrap();
    std::fs::write(dir.join("src/lib.rs"), format!("{lib}\nmod deep;\n")).unwrap();
    refused(
        &dir,
        &["generate", "crds"],
        &["src/deep.rs:128:", "nested more than 128 levels"],
    );
    let r = run(
        &dir,
        &words("create api --group cache --version v1 --kind Nest"),
    );
    assert!(
        r.stderr.contains("nested more than 128 levels"),
        "exit {}: {}",
        r.code,
        r.stderr
    );
    let mut path = dir.join("src/deep");
    std::fs::write(dir.join("src/deep.rs"), "mod a;\n").unwrap();
    for _ in 0..80 {
        std::fs::create_dir_all(&path).unwrap();
        std::fs::write(path.join("a.rs"), "mod a;\n").unwrap();
        path = path.join("a");
    }
    refused(
        &dir,
        &["generate", "crds"],
        &["modules nested more than 64 deep"],
    );
    std::fs::write(dir.join("src/deep.rs"), "").unwrap();
    // A type nested 3,000 deep.
    let deep_type = format!(
        "pub struct Deep {{ pub x: {}u8{} }}\n",
        "Option<".repeat(3000),
        ">".repeat(3000)
    );
    std::fs::write(dir.join("src/deep.rs"), deep_type).unwrap();
    refused(
        &dir,
        &["generate", "crds"],
        &["src/deep.rs:1:", "nested more than 128 levels"],
    );
}

/// controller-gen's CRD markers written as comments, as in Go (`// +kubebuilder:validation:...`,
/// with good values or bad, `///` or `//`, on the kind, the spec or a field): operator-rs reads
/// attributes, so each is refused at its `+` (file:line:col) with the attribute to write,
/// rather than left out of the CRD in silence. RBAC markers and text that merely mentions a
/// marker are not refused.
#[test]
fn controller_gen_markers_in_comments_are_refused_where_they_are() {
    let tmp = project_with_kind("cgmarker-op");
    let dir = project_dir(&tmp, "cgmarker-op");
    let original = read(&dir, KIND_FILE);
    for (anchor, marker) in [
        (
            "pub struct MemcachedSpec",
            "/// +kubebuilder:validation:Maximum=abc",
        ),
        (
            "pub struct MemcachedSpec",
            "// +kubebuilder:validation:Minimum=1",
        ),
        (
            "pub struct MemcachedSpec",
            "//+kubebuilder:printcolumn:name=\"Size\",type=integer,JSONPath=`.spec.size`",
        ),
        (
            "pub struct MemcachedSpec",
            "/// +kubebuilder:subresource:status",
        ),
        ("pub struct MemcachedSpec", "// +kubebuilder:default=3"),
        (
            "pub struct MemcachedSpec",
            "// +kubebuilder:validation:XValidation:rule=\"self.x >\"",
        ),
        ("pub struct MemcachedSpec", "// +kubebuilder:storageversion"),
    ] {
        std::fs::write(
            dir.join(KIND_FILE),
            original.replacen(anchor, &format!("{marker}\n{anchor}"), 1),
        )
        .unwrap();
        let place = at(&dir, "+kubebuilder:");
        refused(
            &dir,
            &words("generate crds"),
            &[
                &place,
                &marker[marker.find('+').unwrap()..],
                "written as a comment",
                "e.g. `#[schemars(range(max = 10))]",
                "docs/markers.md",
            ],
        );
        refused(&dir, &words("generate manifests"), &[&place]);
    }
    // Not CRD markers: RBAC markers, a mention in prose, a commented-out marker.
    for text in [
        "// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get",
        "/// See +kubebuilder:validation:Maximum in controller-gen's docs.",
        "// // +kubebuilder:validation:Maximum=10",
    ] {
        std::fs::write(
            dir.join(KIND_FILE),
            original.replacen(
                "pub struct MemcachedSpec",
                &format!("{text}\npub struct MemcachedSpec"),
                1,
            ),
        )
        .unwrap();
        ok(&dir, &words("generate crds"));
    }
}

/// The kind's file as a stray copy named `Stray` (plural `strays`), for files no module reaches.
fn stray(dir: &Path) -> String {
    read(dir, KIND_FILE)
        .replace("Memcached", "Stray")
        .replace("memcacheds", "strays")
}

/// A `CustomResource` in a file no module declaration reaches is refused where it is (issue 31,
/// "What to build" 4: skipped without a word), by every command that derives the CRDs: beside the
/// kinds, in a folder of its own (`mod.rs`), and deeper; the fix names the module to declare.
#[test]
fn a_custom_resource_outside_the_module_tree_is_refused_where_it_is() {
    let tmp = project_with_kind("unreached-op");
    let dir = project_dir(&tmp, "unreached-op");
    for (file, declare) in [
        (
            "src/api/v1alpha1/stray.rs",
            "`pub mod stray;` in src/api/v1alpha1/mod.rs",
        ),
        ("src/api/v9/mod.rs", "`pub mod v9;` in src/api/mod.rs"),
        (
            "src/other/deep/stray.rs",
            "`pub mod stray;` in src/other/deep/mod.rs",
        ),
    ] {
        std::fs::create_dir_all(dir.join(file).parent().unwrap()).unwrap();
        std::fs::write(dir.join(file), stray(&dir)).unwrap();
        let text = read(&dir, file);
        let line = text
            .lines()
            .position(|l| l.starts_with("#[derive(CustomResource"))
            .unwrap()
            + 1;
        for args in [
            &["generate", "crds"][..],
            &["generate", "manifests"],
            &words("create api --group cache --version v1alpha1 --kind Other"),
        ] {
            refused(
                &dir,
                args,
                &[
                    &format!(
                        "error: {file}:{line}:1: a `CustomResource` in a file no module declaration reaches"
                    ),
                    declare,
                    "Nothing was written",
                ],
            );
        }
        std::fs::remove_file(dir.join(file)).unwrap();
    }
    // Declared, it is read: the stray kind gets its CRD.
    let file = "src/api/v1alpha1/stray.rs";
    std::fs::write(dir.join(file), stray(&dir)).unwrap();
    let m = read(&dir, "src/api/v1alpha1/mod.rs");
    std::fs::write(
        dir.join("src/api/v1alpha1/mod.rs"),
        format!("{m}mod stray;\n"),
    )
    .unwrap();
    ok(&dir, &["generate", "crds"]);
    assert!(
        dir.join("config/crd/bases/cache.example.com_strays.yaml")
            .exists()
    );
}

/// `src/lib.rs` deleted: the kinds' files are reached by no module, so `create api` and
/// `generate crds` are refused, naming src/lib.rs as the cause, and nothing (no CRD) is removed
/// (issue 31, "What to build" 4: create api succeeded with no CRD written).
#[test]
fn a_deleted_lib_rs_is_named_and_nothing_is_written() {
    let tmp = project_with_kind("nolib-op");
    let dir = project_dir(&tmp, "nolib-op");
    std::fs::remove_file(dir.join("src/lib.rs")).unwrap();
    for args in [
        &words("create api --group cache --version v1alpha1 --kind Other")[..],
        &words("create api --group cache --version v2 --kind Memcached --controller=false"),
        &["generate", "crds"],
        &["generate", "manifests"],
    ] {
        refused(
            &dir,
            args,
            &[
                &format!("error: {KIND_FILE}:"),
                "src/lib.rs, the crate root that declares `pub mod api;`",
                "is missing",
                "git checkout -- src/lib.rs",
            ],
        );
    }
    assert!(
        dir.join("config/crd/bases/cache.example.com_memcacheds.yaml")
            .exists()
    );
}

/// A scaffold marker found twice in a file is refused naming each place, not blamed on --kind
/// (issue 31, "What to build" 4), in Rust files and YAML alike; a kind's file reached by two
/// module declarations is named once, as one place read twice.
#[test]
fn a_scaffold_marker_twice_is_refused_at_each_place() {
    let tmp = project_with_kind("marker-op");
    let dir = project_dir(&tmp, "marker-op");
    for (file, marker) in [
        ("src/api/v1alpha1/mod.rs", "// +operator-rs:scaffold:kinds"),
        ("src/controllers/mod.rs", "// +operator-rs:scaffold:"),
        (
            "config/rbac/kustomization.yaml",
            "# +operator-rs:scaffold:rbacroles",
        ),
        (
            "config/samples/kustomization.yaml",
            "# +operator-rs:scaffold:manifestskustomizesamples",
        ),
    ] {
        let text = read(&dir, file);
        let (i, line) = (text.lines().enumerate())
            .find(|(_, l)| l.trim_start().starts_with(marker))
            .unwrap_or_else(|| panic!("{marker} not in {file}"));
        let line = line.to_string();
        std::fs::write(dir.join(file), format!("{text}{line}\n")).unwrap();
        let last = text.lines().count() + 1;
        let col = line.len() - line.trim_start().len() + 1;
        let r = refused(
            &dir,
            &words("create api --group cache --version v1alpha1 --kind Other"),
            &[
                &format!("the marker `{}` is there 2 times", line.trim()),
                &format!("at {file}:{}:{col} and {file}:{last}:{col}", i + 1),
                "delete all but one",
                "Nothing was written",
            ],
        );
        assert!(
            !r.stderr.contains("--kind"),
            "blamed on the kind:\n{}",
            r.stderr
        );
        std::fs::write(dir.join(file), text).unwrap();
    }
    // One file, two module declarations: one place, named once.
    let m = read(&dir, "src/api/mod.rs");
    std::fs::write(
        dir.join("src/api/mod.rs"),
        format!("{m}#[path = \"v1alpha1/mod.rs\"]\nmod again;\n"),
    )
    .unwrap();
    let r = refused(
        &dir,
        &["generate", "crds"],
        &[
            "is defined twice from this one place",
            "two module declarations",
        ],
    );
    let place = at(&dir, "pub struct MemcachedSpec");
    let place = place.rsplit_once(':').unwrap().0;
    assert_eq!(r.stderr.matches(place).count(), 1, "{}", r.stderr);
}

/// A generic spec struct is refused as generic, at its parameter, not as an unknown type `T`, and
/// `--exact` is not offered (kube-derive writes `spec: FooSpec` without arguments, which does not
/// compile); a recursive type is refused as recursive without offering `--exact` (schemars emits
/// the same `$ref` through the compiler): issue 31, "What to build" 4.
#[test]
fn generic_specs_and_recursive_types_get_a_fix_that_applies() {
    let tmp = project_with_kind("generic-op");
    let dir = project_dir(&tmp, "generic-op");
    let original = read(&dir, KIND_FILE);
    for (param, field) in [
        ("T", "T"),
        ("T: Clone", "T"),
        ("'a", "&'a str"),
        ("const N: usize", "[i32; N]"),
    ] {
        edit(
            &dir,
            "pub struct MemcachedSpec {",
            &format!("pub struct MemcachedSpec<{param}> {{\n    pub t: Option<{field}>,"),
        );
        // At the parameter: one column after the `<`.
        let generic = at(&dir, &format!("<{param}>"));
        let (place, col) = generic.rsplit_once(':').unwrap();
        let col: usize = col.parse().unwrap();
        let r = refused(
            &dir,
            &["generate", "crds"],
            &[
                &format!("{place}:{}: `MemcachedSpec` is generic", col + 1),
                "does not compile",
            ],
        );
        assert!(
            !r.stderr.contains("not defined in the crate"),
            "{}",
            r.stderr
        );
        assert!(
            !r.stderr.contains("run `operator-rs generate crds --exact`"),
            "{}",
            r.stderr
        );
        std::fs::write(dir.join(KIND_FILE), &original).unwrap();
    }
    for (field, def) in [
        (
            "pub node: Option<Node>,",
            "pub struct Node {\n    pub children: Vec<Node>,\n}",
        ),
        (
            "pub node: Option<Node>,",
            "pub struct Node {\n    pub next: Option<Box<Node>>,\n}",
        ),
        (
            "pub node: Option<Node>,",
            "pub struct Node {\n    pub other: Vec<Other>,\n}\n#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]\npub struct Other {\n    pub back: Vec<Node>,\n}",
        ),
    ] {
        edit(
            &dir,
            "pub foo: Option<String>,",
            &format!("pub foo: Option<String>,\n    {field}"),
        );
        let text = read(&dir, KIND_FILE);
        std::fs::write(
            dir.join(KIND_FILE),
            format!("{text}\n#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]\n{def}\n"),
        )
        .unwrap();
        let r = refused(
            &dir,
            &["generate", "crds"],
            &["the recursive type", "x-kubernetes-preserve-unknown-fields"],
        );
        assert!(
            !r.stderr.contains("run `operator-rs generate crds --exact`"),
            "{}",
            r.stderr
        );
        std::fs::write(dir.join(KIND_FILE), &original).unwrap();
    }
}

/// Bytes that are not UTF-8 in any file a command reads (a kind's file, a controller's, PROJECT,
/// a YAML it updates) are named with file:line:col and the byte, the reason given once (issue 31,
/// "What to build" 4: reported without file:line and with the reason twice).
#[test]
fn bytes_not_utf8_are_named_at_their_line_once() {
    let tmp = project_with_kind("utf8src-op");
    let dir = project_dir(&tmp, "utf8src-op");
    for file in [
        KIND_FILE,
        "src/controllers/memcached.rs",
        "src/api/mod.rs",
        "PROJECT",
        "config/rbac/kustomization.yaml",
    ] {
        let original = std::fs::read(dir.join(file)).unwrap();
        let mut bytes = original.clone();
        bytes.extend_from_slice(b"\n# caf\xe9 \n");
        std::fs::write(dir.join(file), &bytes).unwrap();
        let line = bytes.iter().filter(|b| **b == b'\n').count();
        for args in [
            &["generate", "manifests"][..],
            &words("create api --group cache --version v1alpha1 --kind Other"),
        ] {
            let r = run(&dir, args);
            if file == "config/rbac/kustomization.yaml" && args[0] == "generate" {
                continue; // generate does not read it
            }
            assert_eq!(r.code, 2, "{file} {args:?}: {}", r.stderr);
            let needle = format!("{file}:{line}:6: byte 0xe9 is not UTF-8");
            assert!(
                r.stderr.contains(&needle),
                "{file} {args:?}: {needle:?} not in\n{}",
                r.stderr
            );
            assert_eq!(r.stderr.matches("not UTF-8").count(), 1, "{}", r.stderr);
            assert!(!r.stderr.contains("stream did not contain"), "{}", r.stderr);
        }
        std::fs::write(dir.join(file), original).unwrap();
    }
}

/// A version PROJECT records that a `macro_rules!` defines (the static reader cannot see into
/// it) is named, with the macro's place, when `edit api` cannot edit it, for that version and for
/// another one (whose CRD would drop the macro's): issue 31, "What to build" 4.
#[test]
fn edit_api_names_a_version_a_macro_defines() {
    let tmp = project_with_kind("macrov-op");
    let dir = project_dir(&tmp, "macrov-op");
    ok(
        &dir,
        &words("create api --group cache --version v2 --kind Memcached --controller=false"),
    );
    let file = "src/api/v2/memcached.rs";
    let text = read(&dir, file);
    let start = text.find("#[derive(CustomResource").unwrap();
    let end = text.find("/// The observed state").unwrap();
    let wrapped = format!(
        "{}macro_rules! kind {{\n    () => {{\n{}    }};\n}}\nkind!();\n\n{}",
        &text[..start],
        &text[start..end],
        &text[end..]
    );
    std::fs::write(dir.join(file), &wrapped).unwrap();
    let line = wrapped.lines().position(|l| l == "kind!();").unwrap() + 1;
    for version in ["v2", "v1alpha1"] {
        refused(
            &dir,
            &words(&format!(
                "edit api --group cache --version {version} --kind Memcached --deprecated"
            )),
            &[
                "version v2 (in PROJECT) is not in the types as written",
                &format!("`kind!` at {file}:{line}:1"),
                "inside the macro by hand",
            ],
        );
    }
}

/// A default value holding a field that serde serializes and a schemars-only attribute keeps
/// out of the schema (or names otherwise): schemars makes the default with serde, so the CRD's
/// default would name a property its schema does not have, which kube-apiserver refuses (`must
/// not have unknown fields`). Refused at the schemars attribute; serde's own attributes, which
/// both views share, are accepted with a default that matches the schema.
#[test]
fn defaults_holding_a_field_the_schema_does_not_have_are_refused() {
    let tmp = project_with_kind("prunedef-op");
    let dir = project_dir(&tmp, "prunedef-op");
    let original = read(&dir, KIND_FILE);
    let field = "#[serde(default, skip_serializing_if = \"Option::is_none\")]\n    pub foo: Option<String>,";
    let with = |attr: &str| {
        format!(
            "#[serde(default = \"default_inner\")]\n    pub inner: Inner,\n}}\n\
             fn default_inner() -> Inner {{\n    Inner {{ a: 1, cache: 5 }}\n}}\n\
             #[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]\n\
             pub struct Inner {{\n    pub a: i32,\n    {attr}\n    pub cache: i32,"
        )
    };
    for (attr, how) in [
        (
            "#[schemars(skip)]",
            "serde serializes `cache`, which a `#[schemars(..)]` skip prunes from the schema",
        ),
        (
            "#[schemars(skip_serializing, skip_deserializing)]",
            "serde serializes `cache`, which a `#[schemars(..)]` skip prunes from the schema",
        ),
        (
            "#[schemars(rename = \"other\")]",
            "serde serializes `cache` as `cache`, which `#[schemars(rename = \"other\")]` names `other` in the schema",
        ),
    ] {
        let text = original.replacen(field, &with(attr), 1);
        std::fs::write(dir.join(KIND_FILE), &text).unwrap();
        let r = refused(
            &dir,
            &["generate", "crds"],
            &[
                "kube-apiserver would refuse the CRD: a default value of `Inner` holds a field its schema does not have",
                how,
                "must not have unknown fields",
                "`#[serde(skip)]`",
            ],
        );
        let line = text.lines().position(|l| l.trim() == attr).unwrap() + 1;
        assert!(
            r.stderr.starts_with(&format!("error: {KIND_FILE}:{line}:")),
            "{attr}: not at line {line}: {}",
            r.stderr
        );
    }
    // serde's own skip: neither serde nor the schema has the field; the default is `{a: 1}`.
    std::fs::write(
        dir.join(KIND_FILE),
        original.replacen(field, &with("#[serde(skip)]"), 1),
    )
    .unwrap();
    ok(&dir, &["generate", "crds"]);
    let crd = read(&dir, "config/crd/bases/cache.example.com_memcacheds.yaml");
    let crd: serde_json::Value = serde_saphyr::from_str(&crd).unwrap();
    let inner = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        ["inner"];
    assert_eq!(inner["default"], serde_json::json!({"a": 1}), "{inner}");
}
