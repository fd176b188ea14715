//! `create api --from-crd` through the binary: an external kind gets types, PROJECT's record and
//! a read-only controller, never a CRD, sample or editor/viewer role; a re-run with a changed CRD
//! refreshes the types; bad input is refused with a clear error and nothing written.

mod common;

use std::path::Path;

use common::{init_project, ok, project_dir, read, readme, run, snapshot, words};
use operator_rs::project::Project;

const CERTS: &str = "cert-manager.io_certificates.yaml";
const TYPES: &str = "src/api/external/cert_manager_io/v1/certificate.rs";

fn fixture(file: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/external_crds")
        .join(file);
    std::fs::read_to_string(path).unwrap()
}

/// Every file of config/ that names the CRD `name`.
fn files_naming(dir: &Path, name: &str) -> Vec<String> {
    snapshot(&dir.join("config"))
        .into_iter()
        .filter(|(_, bytes)| String::from_utf8_lossy(bytes).contains(name))
        .map(|(p, _)| p.display().to_string())
        .collect()
}

#[test]
fn an_external_kind_gets_types_and_a_controller_but_no_crd() {
    let tmp = init_project("ext");
    let dir = project_dir(&tmp, "ext");
    // One project kind too, so `generate crds` has CRDs to write.
    ok(
        &dir,
        &words("create api --group cache --version v1 --kind Memcached"),
    );
    std::fs::write(dir.join("certificates.yaml"), fixture(CERTS)).unwrap();
    ok(
        &dir,
        &words(
            "create api --group cert-manager.io --version v1 --kind Certificate --from-crd certificates.yaml",
        ),
    );

    let project = Project::load(&dir).unwrap();
    let r = project
        .find("cert-manager.io", "v1", "Certificate")
        .unwrap();
    assert!(r.external && !r.core && r.api.is_none() && r.controller);
    assert_eq!(r.plural, "certificates");
    assert_eq!(
        r.path,
        "crate::api::external::cert_manager_io::v1::certificate::Certificate"
    );
    let source = r.from_crd.as_ref().unwrap();
    let sha = operator_rs::fromcrd::sha256_hex(fixture(CERTS).as_bytes());
    assert_eq!(
        (
            source.file.as_str(),
            source.sha256.as_str(),
            source.namespaced
        ),
        ("certificates.yaml", sha.as_str(), true)
    );
    let types = read(&dir, TYPES);
    assert!(types.contains(&format!("sha256 {sha}")), "{types}");
    assert!(types.contains("#[kube(") && types.contains("namespaced"));
    assert!(read(&dir, "src/api/mod.rs").contains("pub mod external;"));

    // No CRD, sample, or editor/viewer role names the kind; generate crds leaves it out.
    assert_eq!(
        files_naming(&dir, "certificates.cert-manager.io"),
        Vec::<String>::new()
    );
    ok(&dir, &words("generate crds"));
    assert!(dir.join("config/crd/bases").read_dir().unwrap().count() > 0);
    assert_eq!(
        files_naming(&dir, "certificates.cert-manager.io"),
        Vec::<String>::new()
    );
    let samples = snapshot(&dir.join("config/samples"));
    assert!(
        samples
            .keys()
            .all(|p| !p.to_string_lossy().contains("certificate"))
    );
    let rbac = snapshot(&dir.join("config/rbac"));
    assert!(
        rbac.keys()
            .all(|p| !p.to_string_lossy().contains("certificate")),
        "{:?}",
        rbac.keys()
    );

    // The controller's RBAC: read the kind, nothing more (no status, no create/delete).
    let role: serde_json::Value =
        serde_saphyr::from_str(&read(&dir, "config/rbac/role.yaml")).unwrap();
    let rules: Vec<&serde_json::Value> = role["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["apiGroups"][0] == "cert-manager.io")
        .collect();
    assert_eq!(rules.len(), 1, "{role}");
    assert_eq!(rules[0]["resources"], serde_json::json!(["certificates"]));
    assert_eq!(
        rules[0]["verbs"],
        serde_json::json!(["get", "list", "watch"])
    );

    // A re-run with the same CRD changes nothing; with a changed CRD it refreshes the types
    // (and keeps the controller as it is).
    let before = snapshot(&dir);
    let again = "create api --group cert-manager.io --version v1 --kind Certificate --from-crd certificates.yaml";
    ok(&dir, &words(again));
    assert_eq!(snapshot(&dir), before);
    let controller = read(&dir, "src/controllers/certificate.rs");
    let changed = fixture(CERTS).replace(
        "Specification of the desired state of the Certificate resource.",
        "The desired state, as of the new release.",
    );
    std::fs::write(dir.join("certificates.yaml"), &changed).unwrap();
    ok(&dir, &words(again));
    let types = read(&dir, TYPES);
    assert!(types.contains("/// The desired state, as of the new release."));
    let new_sha = operator_rs::fromcrd::sha256_hex(changed.as_bytes());
    assert!(types.contains(&new_sha));
    let project = Project::load(&dir).unwrap();
    let r = project
        .find("cert-manager.io", "v1", "Certificate")
        .unwrap();
    assert_eq!(r.from_crd.as_ref().unwrap().sha256, new_sha);
    assert_eq!(read(&dir, "src/controllers/certificate.rs"), controller);
}

#[test]
fn a_multi_document_file_gives_the_kind_asked_for() {
    let tmp = init_project("multi");
    let dir = project_dir(&tmp, "multi");
    let both = format!(
        "{}\n{}",
        fixture(CERTS),
        fixture("cert-manager.io_issuers.yaml")
    );
    std::fs::write(dir.join("cm.yaml"), both).unwrap();
    ok(
        &dir,
        &words(
            "create api --group cert-manager.io --version v1 --kind Issuer --from-crd cm.yaml --controller=false",
        ),
    );
    let types = read(&dir, "src/api/external/cert_manager_io/v1/issuer.rs");
    assert!(types.contains("kind = \"Issuer\""));
    assert!(!dir.join("src/controllers/issuer.rs").exists());
    ok(
        &dir,
        &words(
            "create api --group cert-manager.io --version v1 --kind Certificate --from-crd cm.yaml --controller=false",
        ),
    );
    assert_eq!(
        read(&dir, "src/api/external/cert_manager_io/v1/mod.rs")
            .lines()
            .filter(|l| l.starts_with("pub mod"))
            .collect::<Vec<_>>(),
        ["pub mod certificate;", "pub mod issuer;"]
    );
}

#[test]
fn bad_input_is_refused_with_nothing_written() {
    let tmp = init_project("bad");
    let dir = project_dir(&tmp, "bad");
    std::fs::write(dir.join("certificates.yaml"), fixture(CERTS)).unwrap();
    std::fs::write(
        dir.join("routes.yaml"),
        fixture("gateway.networking.k8s.io_httproutes.yaml").replacen(
            "served: true\n    storage: false",
            "served: false\n    storage: false",
            1,
        ),
    )
    .unwrap();
    std::fs::write(dir.join("broken.yaml"), "apiVersion: [v1\nkind: {").unwrap();
    // Not a CRD: a Deployment, and a CRD of the old apiextensions.k8s.io/v1beta1.
    std::fs::write(
        dir.join("deployment.yaml"),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("beta.yaml"),
        fixture(CERTS).replace(
            "apiextensions.k8s.io/v1\n",
            "apiextensions.k8s.io/v1beta1\n",
        ),
    )
    .unwrap();
    std::fs::write(dir.join("empty.yaml"), "").unwrap();
    // A CRD with no schema, with no versions, without a plural, with a scope of neither kind.
    let certs = fixture(CERTS);
    let schema_at = certs.find("    schema:\n").unwrap();
    let after_schema = certs[schema_at..].find("    served:").unwrap() + schema_at;
    std::fs::write(
        dir.join("no-schema.yaml"),
        format!("{}{}", &certs[..schema_at], &certs[after_schema..]),
    )
    .unwrap();
    let versions_at = certs.find("  versions:\n").unwrap();
    std::fs::write(
        dir.join("no-versions.yaml"),
        format!("{}  versions: []\n", &certs[..versions_at]),
    )
    .unwrap();
    std::fs::write(
        dir.join("no-plural.yaml"),
        certs.replacen("    plural: certificates\n", "", 1),
    )
    .unwrap();
    std::fs::write(
        dir.join("bad-scope.yaml"),
        certs.replacen("scope: Namespaced", "scope: Everywhere", 1),
    )
    .unwrap();
    let cases: &[(&str, &[&str])] = &[
        (
            "--group cert-manager.io --version v1 --kind Certificate --from-crd missing.yaml",
            &["cannot read --from-crd missing.yaml", "e.g. --from-crd"],
        ),
        (
            "--group cert-manager.io --version v1 --kind Issuer --from-crd certificates.yaml",
            &[
                "no CustomResourceDefinition of kind Issuer in group cert-manager.io",
                "it holds cert-manager.io Certificate",
            ],
        ),
        (
            "--group acme.io --version v1 --kind Certificate --from-crd certificates.yaml",
            &[
                "in group acme.io",
                "e.g. --group cert-manager.io --kind Certificate",
            ],
        ),
        (
            "--group cert-manager.io --version v2 --kind Certificate --from-crd certificates.yaml",
            &["has no version v2; it has v1", "e.g. --version v1"],
        ),
        (
            "--group gateway.networking.k8s.io --version v1beta1 --kind HTTPRoute --from-crd routes.yaml",
            &[
                "version v1beta1 of httproutes.gateway.networking.k8s.io is not served",
                "e.g. --version v1",
            ],
        ),
        (
            "--group cert-manager.io --version v1 --kind Certificate --from-crd broken.yaml",
            &[
                "--from-crd broken.yaml: invalid YAML",
                "must hold CustomResourceDefinition documents",
            ],
        ),
        (
            "--group cert-manager.io --version v1 --kind Certificate --from-crd deployment.yaml",
            &[
                "holds no apiextensions.k8s.io/v1 CustomResourceDefinition, only 1 document: apps/v1 Deployment",
                "e.g. --from-crd certificates.yaml, a file of CRDs",
            ],
        ),
        (
            "--group cert-manager.io --version v1 --kind Certificate --from-crd beta.yaml",
            &[
                "apiextensions.k8s.io/v1beta1 CustomResourceDefinition (only apiextensions.k8s.io/v1 is read",
            ],
        ),
        (
            "--group cert-manager.io --version v1 --kind Certificate --from-crd empty.yaml",
            &["only no YAML document"],
        ),
        (
            "--group cert-manager.io --version v1 --kind Certificate --from-crd no-schema.yaml",
            &[
                "certificates.cert-manager.io: version v1 has no schema.openAPIV3Schema; the types are generated from",
                "e.g. versions: [{name: v1",
            ],
        ),
        (
            "--group cert-manager.io --version v1 --kind Certificate --from-crd no-versions.yaml",
            &["spec.versions is missing or empty"],
        ),
        (
            "--group cert-manager.io --version v1 --kind Certificate --from-crd no-plural.yaml",
            &[
                "spec.names.plural is missing",
                "e.g. names: {kind: Certificate, plural: certificates}",
            ],
        ),
        (
            "--group cert-manager.io --version v1 --kind Certificate --from-crd bad-scope.yaml",
            &[
                "spec.scope is \"Everywhere\"",
                "Namespaced or Cluster",
                "e.g. scope: Namespaced",
            ],
        ),
        // The scope is the CRD's.
        (
            "--group cert-manager.io --version v1 --kind Certificate --from-crd certificates.yaml --namespaced=false",
            &[
                "--namespaced=false: cert-manager.io/v1 Certificate is namespaced, as its CRD's spec.scope in certificates.yaml says",
                "e.g. operator-rs create api --group cert-manager.io --version v1 --kind Certificate --from-crd certificates.yaml",
            ],
        ),
        (
            "--group cert-manager.io --version v1 --kind Certificate --from-crd certificates.yaml --resource=false",
            &["cannot go with --resource=false"],
        ),
    ];
    let before = snapshot(&dir);
    for (args, wanted) in cases {
        let r = run(&dir, &words(&format!("create api {args}")));
        assert_ne!(r.code, 0, "{args}: refused");
        assert!(
            r.stderr.contains("e.g."),
            "{args}: no example in:\n{}",
            r.stderr
        );
        for w in *wanted {
            assert!(
                r.stderr.contains(w),
                "{args}: wanted {w:?} in:\n{}",
                r.stderr
            );
        }
        assert_eq!(snapshot(&dir), before, "{args}: nothing written");
    }
}

/// Our README's `--from-crd` block, run as written (`bash -c`) with cert-manager's CRDs (one
/// multi-document file, as its releases ship them) where the line says.
#[test]
fn the_readme_s_from_crd_block_runs_as_written() {
    let tmp = init_project("readme-crd");
    let dir = project_dir(&tmp, "readme-crd");
    let block = readme::sh_blocks(
        &readme::our_readme(),
        "### Kinds from another project's CRD",
    )
    .concat();
    assert_eq!(block.len(), 1, "{block:?}");
    let file = (block[0].split("--from-crd ").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .expect("the line names its CRD file");
    let both = format!(
        "{}\n{}",
        fixture(CERTS),
        fixture("cert-manager.io_issuers.yaml")
    );
    std::fs::create_dir_all(dir.join(file).parent().unwrap()).unwrap();
    std::fs::write(dir.join(file), both).unwrap();
    readme::UserShell::new(&dir, &[]).run(&block[0]);
    assert!(read(&dir, TYPES).contains("kind = \"Certificate\""));
    let project = Project::load(&dir).unwrap();
    let r = project
        .find("cert-manager.io", "v1", "Certificate")
        .unwrap();
    assert!(r.external && r.api.is_none() && r.controller);
    assert!(dir.join("src/controllers/certificate.rs").exists());
}

/// A CRD of `kind` in `group` (plural `<kind lowercased>s`) whose spec has an enum of `values`, a
/// property named `self` and a `date-time`, and a status.
fn odd_crd(group: &str, kind: &str, values: &[&str]) -> String {
    let lower = kind.to_lowercase();
    let values: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
    format!(
        "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {lower}s.{group}
spec:
  group: {group}
  scope: Namespaced
  names: {{plural: {lower}s, singular: {lower}, kind: {kind}, listKind: {kind}List}}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {{status: {{}}}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              mode: {{type: string, enum: [{}]}}
              self: {{type: string}}
              super: {{type: string}}
              when: {{type: string, format: date-time}}
          status:
            type: object
            properties:
              at: {{type: string, format: date-time}}
",
        values.join(", ")
    )
}

/// Names from a CRD give Rust that parses and builds, whatever they are (issue 31, 16): enum
/// values that are Rust keywords (raw or not allowed raw: `self`, `Self`, `crate`, `super`, `_`),
/// and kinds that are names the generated files import or the prelude has (`Option`, `Time`,
/// `Result`, `Vec`): the kind stays the CRD's (no `--kind OptionResource` that cannot apply), its
/// Rust type is `<Kind>Resource`. The CRD file's path after `-C DIR` is relative to DIR, as
/// cargo's `-C` makes paths. The project then passes `cargo check` with no warning.
#[test]
fn names_from_a_crd_give_rust_that_builds() {
    let tmp = init_project("odd-op");
    let dir = project_dir(&tmp, "odd-op");
    std::fs::create_dir_all(dir.join("crds")).unwrap();
    const KEYWORDS: &[&str] = &[
        "as",
        "break",
        "const",
        "continue",
        "crate",
        "else",
        "enum",
        "extern",
        "false",
        "fn",
        "for",
        "if",
        "impl",
        "in",
        "let",
        "loop",
        "match",
        "mod",
        "move",
        "mut",
        "pub",
        "ref",
        "return",
        "self",
        "Self",
        "static",
        "struct",
        "super",
        "trait",
        "true",
        "type",
        "unsafe",
        "use",
        "where",
        "while",
        "async",
        "await",
        "dyn",
        "abstract",
        "become",
        "box",
        "do",
        "final",
        "macro",
        "override",
        "priv",
        "typeof",
        "unsized",
        "virtual",
        "yield",
        "try",
        "gen",
        "_",
        "union",
        "macro_rules",
        "raw",
        "safe",
        "r#type",
    ];
    let group = "odd.example.org";
    let parent = dir.parent().unwrap();
    for kind in ["Option", "Time", "Result", "Vec", "Plain"] {
        let file = format!("crds/{}.yaml", kind.to_lowercase());
        std::fs::write(dir.join(&file), odd_crd(group, kind, KEYWORDS)).unwrap();
        // From the folder above, with -C: the path is the project's.
        let r = ok(
            parent,
            &[
                "-C",
                "odd-op",
                "create",
                "api",
                "--group",
                group,
                "--version",
                "v1",
                "--kind",
                kind,
                "--from-crd",
                &file,
            ],
        );
        let rust_type = if kind == "Plain" {
            kind.to_string()
        } else {
            format!("{kind}Resource")
        };
        assert!(r.stderr.contains(&format!("::{rust_type}")), "{}", r.stderr);
        let types = format!(
            "src/api/external/odd_example_org/v1/{}.rs",
            kind.to_lowercase()
        );
        let text = read(&dir, &types);
        syn::parse_file(&text).unwrap_or_else(|e| panic!("{types} does not parse: {e}\n{text}"));
        assert!(text.contains(&format!("kind = \"{kind}\"")), "{text}");
        let project = Project::load(&dir).unwrap();
        let r = project.resources.iter().find(|r| r.kind == kind).unwrap();
        assert!(r.path.ends_with(&format!("::{rust_type}")), "{}", r.path);
    }
    common::seed_lock(&dir);
    let out = common::cargo_output(&dir, &["check", "--all-targets", "--offline"], &[]);
    assert!(out.success, "{}", out.stderr);
    assert!(!out.stderr.contains("warning:"), "{}", out.stderr);
}
