//! `create api --external-api-path`: a kind this project does not own, whose Rust type lives in a
//! crate (a `kcr_*` crate, another team's API crate, a k8s-openapi kind `create api
//! --resource=false` does not list), as kubebuilder's `--external-api-path` /
//! `--external-api-domain`. It owns the checks of the flags (the Rust path, read with syn; the
//! `name@version` of `--external-api-crate`; the group, version and kind; the scope,
//! `--namespaced`, against the one recorded), the PROJECT entry (`external: true`, `path`,
//! `namespaced`, no `api`) and the one line `--external-api-crate` adds to Cargo.toml's
//! `[dependencies]`.

use std::path::Path;

use anyhow::Result;

use crate::builtin;
use crate::cli::CreateApiArgs;
use crate::names;
use crate::project::{Project, Resource};
use crate::workspace::SourceTree;

/// A flag of an external kind that cannot be used as given.
#[derive(Debug, thiserror::Error)]
pub enum ExternalError {
    #[error(
        "invalid --external-api-path {given:?}: {problem}; it is the Rust path of the kind's type, `<crate>::<module>::...::<Type>`, without generics. Nothing was written.\n  e.g. --external-api-path kcr_cert_manager_io::v1::certificates::Certificate"
    )]
    Path { given: String, problem: String },
    #[error(
        "invalid --external-api-crate {given:?}: {problem}; it is the crate that holds the type, as `name@version` (a crates.io name and a Cargo version requirement). Nothing was written.\n  e.g. --external-api-crate kcr_cert_manager_io@3"
    )]
    Crate { given: String, problem: String },
    #[error(
        "--external-api-path {path} starts with `{first}`, which is not a dependency of this project (Cargo.toml's [dependencies]{crate_named}). Nothing was written.\n  \
         name the crate that holds the type, e.g. --external-api-crate {first}@<version>, or start the path with a dependency or `crate`"
    )]
    NotADependency {
        path: String,
        first: String,
        crate_named: String,
    },
    #[error(
        "{api_version} {kind} is a built-in Kubernetes kind (k8s-openapi's {rust_path}): it is not external. Nothing was written.\n  \
         e.g. operator-rs create api --group {group} --version {version} --kind {kind} --resource=false"
    )]
    Builtin {
        api_version: String,
        kind: String,
        rust_path: String,
        group: String,
        version: String,
    },
    #[error(
        "{api_version} {kind} is already a kind of this project (see PROJECT){how}; an external kind is one the project does not own. Nothing was written.\n  \
         e.g. operator-rs create api --group {group} --version {version} --kind {kind} --resource=false (a controller for it), or choose another --kind"
    )]
    Duplicate {
        api_version: String,
        kind: String,
        how: &'static str,
        group: String,
        version: String,
    },
    #[error("Cargo.toml has no [dependencies] table to add {name} to. Nothing was written.")]
    NoDependencies { name: String },
}

/// The PROJECT entry of the external kind `args` name, checked against the project and its
/// Cargo.toml (in `tree`). Nothing is written here.
pub fn plan(project: &Project, tree: &dyn SourceTree, args: &CreateApiArgs) -> Result<Resource> {
    let (group, version, kind) = args
        .gvk
        .values(|flag| format!("--{flag} {}", super::example(flag)))?;
    names::validate_version(version)?;
    names::validate_kind(kind)?;
    let domain = args.external_api_domain.as_deref().unwrap_or("").trim();
    if !domain.is_empty() {
        // The rule of `init --domain`, named and exemplified as this flag.
        names::validate_domain(domain).map_err(|e| names::NameError {
            what: "--external-api-domain",
            example: "--external-api-domain io (with --group cert-manager: cert-manager.io)".into(),
            ..e
        })?;
    }
    names::validate_group(group, domain)?;
    let plural = args
        .plural
        .clone()
        .unwrap_or_else(|| names::default_plural(kind));
    names::validate_plural(&plural)?;
    let path_given = args.external_api_path.as_deref().unwrap_or_default();
    let path = rust_path(path_given)?;
    let external_crate = match args.external_api_crate.as_deref() {
        Some(spec) => Some(crate_spec(spec)?),
        None => None,
    };

    let full_group = names::qualified_group(group, domain);
    if let Some(b) = builtin::lookup(&full_group, version, kind) {
        return Err(ExternalError::Builtin {
            api_version: if b.group.is_empty() {
                b.version.to_string()
            } else {
                format!("{}/{}", b.group, b.version)
            },
            kind: kind.to_string(),
            rust_path: b.rust_path.clone(),
            group: if b.group.is_empty() { "core" } else { group }.to_string(),
            version: version.to_string(),
        }
        .into());
    }

    // The path's crate must be one the project builds with: the one this run adds, one already
    // in Cargo.toml, or the project itself.
    let first = path.first.as_str();
    let cargo = tree.read(Path::new("Cargo.toml"))?.unwrap_or_default();
    let added = external_crate.as_ref().map(|c| lib_name(&c.name));
    if first != "crate" && added.as_deref() != Some(first) && !has_dependency(&cargo, first) {
        return Err(ExternalError::NotADependency {
            path: path.text.clone(),
            first: first.to_string(),
            crate_named: match &external_crate {
                Some(c) => format!(", nor --external-api-crate {}", c.name),
                None => String::new(),
            },
        }
        .into());
    }

    // Its scope: as given, else as recorded by an earlier run, else namespaced (kubebuilder's
    // default). An earlier run's scope changes only with --force.
    let recorded = project.find(group, version, kind).filter(|r| r.external);
    if let (Some(earlier), false) = (recorded, args.force) {
        super::check_scope_flag(
            args.namespaced,
            earlier,
            "PROJECT (an earlier create api recorded it; --force records the new one)",
            format!(
                "operator-rs create api --group {group} --version {version} --kind {kind} --external-api-path {} --namespaced={}",
                path.text,
                earlier.namespaced()
            ),
        )?;
    }
    let namespaced = (args.namespaced)
        .or(recorded.map(Resource::namespaced))
        .unwrap_or(true);
    let resource = Resource {
        controller: args.controller,
        external: true,
        external_crate: external_crate.map(|c| format!("{}@{}", c.name, c.version)),
        namespaced: Some(namespaced),
        path: path.text,
        ..Resource::new(group, domain, version, kind, plural)
    };
    // One entry per kind: an owned or built-in kind of the same group, version and kind (or
    // an owned kind of the same group and kind) is not external.
    if let Some(other) = project.resources.iter().find(|r| {
        (r.same_gvk(group, version, kind) && !r.external) || (r.has_api() && r.same_gk(&resource))
    }) {
        return Err(ExternalError::Duplicate {
            api_version: other.api_version(),
            kind: kind.to_string(),
            how: if other.has_api() {
                ", with a CRD it owns"
            } else {
                ", a built-in kind"
            },
            group: other.group.clone(),
            version: version.to_string(),
        }
        .into());
    }
    if args.controller {
        super::check_controller_slot(project, tree, &resource, args.force)?;
    }
    Ok(resource)
}

/// Cargo.toml with the dependency `spec` (`name@version`) of `resource`, or `None` when it is
/// one already (the user's own line then stays as it is).
pub fn with_dependency(cargo: &str, resource: &Resource) -> Result<Option<String>> {
    let Some(spec) = &resource.external_crate else {
        return Ok(None);
    };
    let spec = crate_spec(spec)?;
    if has_dependency(cargo, &lib_name(&spec.name)) {
        return Ok(None);
    }
    // A line edit, not a TOML rewrite: no TOML editor is in Cargo.lock (toml_edit would be a new
    // crate), and one line appended to [dependencies] keeps every comment and layout as it is.
    let lines: Vec<&str> = cargo.split_inclusive('\n').collect();
    let Some(start) = lines
        .iter()
        .position(|l| table_header(l) == Some("dependencies"))
    else {
        return Err(ExternalError::NoDependencies { name: spec.name }.into());
    };
    let end = (start + 1..lines.len())
        .find(|&i| lines[i].trim_start().starts_with('['))
        .unwrap_or(lines.len());
    // After the table's last entry: its trailing blank lines and comments stay before the next.
    let mut at = end;
    while at > start + 1 && {
        let t = lines[at - 1].trim();
        t.is_empty() || t.starts_with('#')
    } {
        at -= 1;
    }
    let mut out = String::with_capacity(cargo.len() + 64);
    for line in &lines[..at] {
        out.push_str(line);
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&format!(
        "# The types of {} ({}), a kind this project does not own.\n{} = \"{}\"\n",
        resource.kind,
        resource.api_version(),
        spec.name,
        spec.version
    ));
    for line in &lines[at..] {
        out.push_str(line);
    }
    Ok(Some(out))
}

/// Whether the dependency `--external-api-crate` adds resolves, asked of cargo itself as
/// kubebuilder asks `go get`: `cargo add <name>@<version> --dry-run` in the project at `root`
/// (it reads the registry's index and writes nothing). A crate or version the registry does not
/// have is refused with cargo's reason and what to do; so is a registry cargo cannot reach (the
/// dependency cannot be checked, and a build would fail the same way).
pub fn check_resolves(root: &Path, resource: &Resource) -> Result<()> {
    let Some(spec) = &resource.external_crate else {
        return Ok(());
    };
    let spec = crate_spec(spec)?;
    let requirement = format!("{}@{}", spec.name, spec.version);
    let out = crate::cargo_command::cargo()
        .args(["add", &requirement, "--dry-run", "--quiet"])
        .current_dir(root)
        .output()
        .map_err(|e| {
            anyhow::anyhow!(
                "--external-api-crate {requirement}: running cargo to check that it resolves failed: {e}. Nothing was written.\n  install Rust's cargo (https://rustup.rs), or add the dependency to Cargo.toml yourself and leave out --external-api-crate"
            )
        })?;
    if out.status.success() {
        return Ok(());
    }
    let reason = String::from_utf8_lossy(&out.stderr);
    let reason: Vec<&str> = (reason.lines())
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| l.strip_prefix("error: ").unwrap_or(l))
        .collect();
    let (reason, name) = (
        reason.join("; ").trim_end_matches('.').to_string() + ".",
        &spec.name,
    );
    anyhow::bail!(
        "--external-api-crate {requirement} does not resolve: cargo says {reason} Nothing was written.\n  \
         pick a version the registry has (`cargo info {name}` shows the newest), e.g. --external-api-crate {name}@<version>"
    )
}

/// A checked Rust path: its text, normalized (`a::b::C`), and its first segment.
struct RustPath {
    text: String,
    first: String,
}

fn rust_path(given: &str) -> Result<RustPath, ExternalError> {
    let bad = |problem: String| ExternalError::Path {
        given: given.to_string(),
        problem,
    };
    let path: syn::Path = syn::parse_str(given.trim()).map_err(|e| {
        bad(if given.trim().is_empty() {
            "it is empty".to_string()
        } else {
            format!("it is not a Rust path ({e})")
        })
    })?;
    if let Some(seg) = path.segments.iter().find(|s| !s.arguments.is_none()) {
        return Err(bad(format!(
            "`{}` has generic arguments; name the type itself",
            seg.ident
        )));
    }
    let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    if segments.len() < 2 {
        return Err(bad(
            "it has one segment; start it with the crate that holds the type".to_string(),
        ));
    }
    let first = segments[0].clone();
    if matches!(first.as_str(), "self" | "super" | "Self") {
        return Err(bad(format!(
            "it starts with `{first}`, which means nothing where the generated files use it; start it with a crate (or `crate`)"
        )));
    }
    let last = &segments[segments.len() - 1];
    if !last.starts_with(|c: char| c.is_ascii_uppercase()) {
        return Err(bad(format!(
            "its last segment `{last}` is not a type name (UpperCamelCase); the path ends with the type, not its module"
        )));
    }
    if let Some(lower) = segments[..segments.len() - 1]
        .iter()
        .skip(1)
        .find(|s| s.starts_with(|c: char| c.is_ascii_uppercase()))
    {
        return Err(bad(format!(
            "`{lower}` before the type is not a module name (snake_case); the path ends with the type"
        )));
    }
    let text = format!(
        "{}{}",
        if path.leading_colon.is_some() {
            "::"
        } else {
            ""
        },
        segments.join("::")
    );
    Ok(RustPath { text, first })
}

/// `--external-api-crate`, split and checked.
struct CrateSpec {
    name: String,
    version: String,
}

fn crate_spec(given: &str) -> Result<CrateSpec, ExternalError> {
    let bad = |problem: String| ExternalError::Crate {
        given: given.to_string(),
        problem,
    };
    let Some((name, version)) = given.trim().split_once('@') else {
        return Err(bad("it has no `@version`".to_string()));
    };
    let (name, version) = (name.trim(), version.trim());
    if name.is_empty() {
        return Err(bad("the name before `@` is empty".to_string()));
    }
    if name.len() > 64 {
        return Err(bad(format!(
            "the name is {} characters, over crates.io's 64",
            name.len()
        )));
    }
    if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return Err(bad(format!(
            "the name `{name}` must start with an ASCII letter"
        )));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_'))
    {
        return Err(bad(format!(
            "the name `{name}` has {c:?}: a crate name has ASCII letters, digits, `-` and `_` only"
        )));
    }
    if names::is_rust_keyword(name) {
        return Err(bad(format!("`{name}` is a Rust keyword")));
    }
    if version.is_empty() {
        return Err(bad("the version after `@` is empty".to_string()));
    }
    if let Err(e) = semver::VersionReq::parse(version) {
        return Err(bad(format!(
            "`{version}` is not a Cargo version requirement ({e})"
        )));
    }
    Ok(CrateSpec {
        name: name.to_string(),
        version: version.to_string(),
    })
}

/// The name Rust code uses for the crate `name`: `-` becomes `_`.
fn lib_name(name: &str) -> String {
    name.replace('-', "_")
}

/// The name of the TOML table `line` opens (`[dependencies]`, `[ dependencies ] # a comment`:
/// `dependencies`; `[dependencies.kube]`: `dependencies.kube`; `[[bin]]`: `[bin`, no table name),
/// or `None` for a line that opens none.
fn table_header(line: &str) -> Option<&str> {
    let header = line.trim().strip_prefix('[')?;
    Some(header.split(']').next().unwrap_or("").trim())
}

/// Whether Cargo.toml's `[dependencies]` (a table, or `[dependencies.<name>]`) has the crate
/// Rust code calls `lib` (`my_api` for `my-api`).
fn has_dependency(cargo: &str, lib: &str) -> bool {
    let mut in_deps = false;
    for line in cargo.lines().map(str::trim) {
        if let Some(header) = table_header(line) {
            in_deps = header == "dependencies";
            if let Some(name) = header.strip_prefix("dependencies.")
                && lib_name(name.trim().trim_matches('"')) == lib
            {
                return true;
            }
            continue;
        }
        if !in_deps || line.starts_with('#') {
            continue;
        }
        let Some((key, _)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim().split('.').next().unwrap_or("").trim();
        if lib_name(key.trim_matches('"')) == lib {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_paths_are_read_with_syn() {
        let ok = |p: &str| rust_path(p).map(|r| (r.text, r.first)).unwrap();
        assert_eq!(
            ok(" kcr_cert_manager_io :: v1::certificates::Certificate "),
            (
                "kcr_cert_manager_io::v1::certificates::Certificate".into(),
                "kcr_cert_manager_io".into()
            )
        );
        assert_eq!(ok("::my_api::Widget").0, "::my_api::Widget");
        assert_eq!(ok("crate::external::Widget").1, "crate");
        for (bad, expected) in [
            ("", "it is empty"),
            ("Widget", "one segment"),
            ("my_api::Widget<T>", "generic arguments"),
            ("my_api::v1::", "not a Rust path"),
            ("my-api::Widget", "not a Rust path"),
            ("my_api::type::Widget", "not a Rust path"),
            ("my_api::v1::widget", "not a type name"),
            ("my_api::V1::Widget", "not a module name"),
            ("super::Widget", "starts with `super`"),
            ("my_api.v1.Widget", "not a Rust path"),
        ] {
            let err = rust_path(bad).err().expect(bad).to_string();
            assert!(err.contains(expected), "{bad}: {err}");
            assert!(err.contains("e.g. --external-api-path"), "{err}");
        }
    }

    #[test]
    fn crate_specs_are_name_at_version() {
        let ok = crate_spec("kcr_cert_manager_io@0.2").unwrap();
        assert_eq!(
            (ok.name.as_str(), ok.version.as_str()),
            ("kcr_cert_manager_io", "0.2")
        );
        assert!(crate_spec("my-api@=1.2.3").is_ok());
        assert!(crate_spec("my-api@^1, <1.5").is_ok());
        for (bad, expected) in [
            ("kcr_cert_manager_io", "no `@version`"),
            ("@1", "name before `@` is empty"),
            ("x@", "version after `@` is empty"),
            ("1abc@1", "must start with an ASCII letter"),
            ("my api@1", "has ' '"),
            ("my.api@1", "has '.'"),
            ("fn@1", "Rust keyword"),
            ("x@one", "not a Cargo version requirement"),
            (&format!("{}@1", "a".repeat(65)), "over crates.io's 64"),
        ] {
            let err = crate_spec(bad).err().expect(bad).to_string();
            assert!(err.contains(expected), "{bad}: {err}");
        }
    }

    const CARGO: &str = "[package]\nname = \"x\"\n\n[dependencies]\n# The runtime\nkube = { version = \"5\" }  # pinned\n\"my-api\".workspace = true\n\n# dev only\n[dev-dependencies]\nfutures = \"0.3\"\n\n[dependencies.other-api]\nversion = \"1\"\n";

    #[test]
    fn dependencies_are_found_in_tables_and_dotted_keys() {
        for lib in ["kube", "my_api", "other_api"] {
            assert!(has_dependency(CARGO, lib), "{lib}");
        }
        for lib in ["futures", "name", "x", "runtime"] {
            assert!(!has_dependency(CARGO, lib), "{lib}");
        }
    }

    #[test]
    fn the_dependency_is_one_line_after_the_table_s_last_entry() {
        let mut r = Resource {
            controller: true,
            external: true,
            external_crate: Some("kcr_cert_manager_io@0.2".into()),
            path: "kcr_cert_manager_io::v1::certificates::Certificate".into(),
            ..Resource::new("cert-manager", "io", "v1", "Certificate", "certificates")
        };
        let out = with_dependency(CARGO, &r).unwrap().unwrap();
        assert_eq!(
            out,
            CARGO.replace(
                "\"my-api\".workspace = true\n",
                "\"my-api\".workspace = true\n# The types of Certificate (cert-manager.io/v1), a kind this project does not own.\nkcr_cert_manager_io = \"0.2\"\n"
            )
        );
        // Already a dependency: the user's line stays.
        r.external_crate = Some("my-api@2".into());
        assert_eq!(with_dependency(CARGO, &r).unwrap(), None);
        r.external_crate = Some("new@1".into());
        let err = with_dependency("[package]\nname = \"x\"\n", &r).unwrap_err();
        assert!(err.to_string().contains("no [dependencies]"), "{err}");
        // A header as TOML allows it, with spaces or a comment: found, as `has_dependency`
        // finds it (it was "no [dependencies] table").
        for header in ["[ dependencies ]", "[dependencies] # what we build with"] {
            let cargo = format!("[package]\nname = \"x\"\n\n{header}\nkube = \"3\"\n");
            let out = with_dependency(&cargo, &r).unwrap().unwrap();
            assert!(out.ends_with("kube = \"3\"\n# The types of Certificate (cert-manager.io/v1), a kind this project does not own.\nnew = \"1\"\n"), "{out}");
            assert!(has_dependency(&cargo, "kube"), "{cargo}");
        }
        // The keys of an array of tables after [dependencies] are not dependencies.
        assert!(!has_dependency(
            "[dependencies]\nkube = \"3\"\n[[bin]]\nname = \"x\"\n",
            "name"
        ));
    }
}
