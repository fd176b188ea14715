//! The Go controllers (`internal/controller/**/*.go`) as compiling Rust stubs: the kind of
//! `For(...)`, the kinds of `Owns(...)`, the name of `Named(...)`, the `+kubebuilder:rbac`
//! markers copied as they are, and the Go `Reconcile` body kept as a comment; and the
//! `+kubebuilder:webhook` markers of the Go webhooks (`internal/webhook/`).

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::go::{self, At, GoFile, Marker};
use super::report::Report;
use super::{GoProjectFile, GoResource};

/// One Go controller, as a Rust module of `src/controllers/` (of its group's folder in the
/// multigroup layout).
#[derive(Debug, Clone)]
pub struct Stub {
    /// The controller's name (`captain`, `captain-backup`; `crew-captain` in a multigroup
    /// project, as kubebuilder names it there).
    pub name: String,
    /// The index in PROJECT's resources of the kind it reconciles; None for a controller of an
    /// external kind, kept as its RBAC markers only.
    pub resource: Option<usize>,
    /// Where it goes in the operator-rs project.
    pub place: Place,
    pub text: String,
}

/// Where a controller stub goes: the kind's controller file that `create api` scaffolds (the
/// stub replaces it), or a module of its own, which the import declares (and registers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The Rust file (`src/controllers/crew/captain_backup.rs`).
    pub file: String,
    /// The module's name in its parent (`captain_backup`).
    pub module: String,
    /// The `mod.rs` that declares the module (`src/controllers/crew/mod.rs`), where `create api`
    /// does not: None for the kind's scaffolded controller.
    pub declared_in: Option<String>,
    /// The module's path from `src/controllers/mod.rs` (`crew::captain_backup`), whose
    /// `registration()` the manager runs; None for a stub of RBAC markers only.
    pub registered_as: Option<String>,
}

/// The place of the controller `name` of `r` (None: of an external kind, RBAC markers only):
/// the kind's scaffolded controller file where the name is the kind's (`captain`, or
/// `crew-captain` in a multigroup project), else a module named after the controller beside the
/// controllers of its group (`src/controllers/crew/captain_backup.rs`), or at the top of
/// `src/controllers/` where its group has no folder there.
pub fn place(project: &GoProjectFile, r: Option<&GoResource>, name: &str) -> Place {
    let layout = project.layout();
    let top = |module: String, registered: bool| Place {
        file: format!("src/controllers/{module}.rs"),
        declared_in: Some("src/controllers/mod.rs".into()),
        registered_as: registered.then(|| module.clone()),
        module,
    };
    let Some(r) = r else {
        return top(crate::names::module_name(name), false);
    };
    let res = project.as_resource(r);
    let scaffolded = |o: &GoResource| o.has_controller() && (o.owns_api() || o.core);
    let group_module = |o: &GoResource| layout.group_module(&project.as_resource(o));
    // Its name in its group (kubebuilder names a multigroup project's controllers
    // `<group>-<kind>`).
    let short = match name.strip_prefix(&format!("{}-", r.group)) {
        Some(short) if layout.multigroup => short,
        _ => name,
    };
    let own = short == r.kind.to_lowercase();
    if own
        && (project.resources.iter())
            .any(|o| scaffolded(o) && o.group == r.group && o.kind == r.kind)
    {
        return Place {
            file: layout.controller_file(&res),
            module: crate::names::kind_snake(&r.kind),
            declared_in: None,
            registered_as: None,
        };
    }
    let module = if own {
        crate::names::kind_snake(&r.kind)
    } else {
        crate::names::module_name(short)
    };
    let group_folder = !layout.multigroup
        || (project.resources.iter()).any(|o| scaffolded(o) && group_module(o) == group_module(r));
    if !group_folder {
        return top(crate::names::module_name(name), true);
    }
    Place {
        file: layout.controller_module_file(&res, &module),
        declared_in: Some(layout.controllers_mod_file(&res)),
        registered_as: Some(format!("{}{module}", layout.group_path(&res))),
        module,
    }
}

/// Reads every Go controller; those whose kind import cannot name go to the report.
pub fn read(source: &Path, project: &GoProjectFile, report: &mut Report) -> Result<Vec<Stub>> {
    let mut stubs = Vec::new();
    for (full, shown) in go_files(source, Path::new("internal/controller"))? {
        if shown.to_string_lossy().ends_with("_test.go") {
            report.add(
                &At { file: shown.clone(), line: 1, col: 1 },
                "Go tests",
                "not translated: the imported controllers have Rust tests of their own (cargo test); port the cases you need",
            );
            continue;
        }
        let (file, unread) = go::read_file_lenient(&full, &shown)?;
        report.unread_go(unread);
        for setup in file.funcs.iter().filter(|f| f.name == "SetupWithManager") {
            let Some(receiver) = &setup.receiver else {
                continue;
            };
            match stub(&file, setup, receiver, project, report) {
                Some(s) => stubs.push(s),
                None => continue,
            }
        }
    }
    Ok(stubs)
}

fn go_files(source: &Path, dir: &Path) -> Result<Vec<(PathBuf, PathBuf)>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(source.join(&d)) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let rel = d.join(e.file_name());
            if p.is_dir() {
                stack.push(rel);
            } else if rel.extension().is_some_and(|x| x == "go") {
                out.push((p, rel));
            }
        }
    }
    out.sort();
    Ok(out)
}

fn first_line(s: &str) -> String {
    let first = s.lines().next().unwrap_or("");
    if s.contains('\n') {
        format!("{first} ...")
    } else {
        first.to_string()
    }
}

/// `&crewv1.Captain{}` -> (`crewv1`, `Captain`).
fn type_of_arg(arg: &str) -> Option<(String, String)> {
    let t = arg.trim().trim_start_matches('&');
    let t = t.split('{').next()?.trim();
    let (pkg, name) = t.split_once('.')?;
    Some((pkg.to_string(), name.to_string()))
}

/// The Rust path of a Go type of a controller's file: a kind of the project, or a k8s.io/api type.
fn rust_type(
    file: &GoFile,
    pkg: &str,
    name: &str,
    project: &GoProjectFile,
) -> Option<(String, Option<usize>)> {
    let path = file.import(pkg)?;
    if let Some(i) = project
        .resources
        .iter()
        .position(|r| r.path == path && r.kind == name && !r.external)
    {
        let r = &project.resources[i];
        if r.core {
            return Some((builtin_path(path, name)?, Some(i)));
        }
        return Some((project.layout().api_type(&project.as_resource(r)), Some(i)));
    }
    Some((builtin_path(path, name)?, None))
}

fn builtin_path(go_path: &str, name: &str) -> Option<String> {
    let rest = go_path.strip_prefix("k8s.io/api/")?;
    Some(format!(
        "k8s_openapi::api::{}::{name}",
        rest.replace('/', "::")
    ))
}

fn stub(
    file: &GoFile,
    setup: &go::Func,
    receiver: &str,
    project: &GoProjectFile,
    report: &mut Report,
) -> Option<Stub> {
    let mut for_kind = None;
    let mut owns = Vec::new();
    let mut named = None;
    let mut other_setup = None;
    for (method, args, at) in &setup.calls {
        match method.as_str() {
            "For" => for_kind = type_of_arg(args).map(|t| (t, at.clone())),
            "Owns" => match type_of_arg(args).and_then(|(p, n)| rust_type(file, &p, &n, project)) {
                Some((path, _)) => owns.push(path),
                None => report.add(at, format!("Owns({args})"), "a kind import cannot name in Rust; add `.owns::<T>(...)` by hand"),
            },
            "Named" => named = Some(super::markers::unquote(args)),
            "Complete" | "NewControllerManagedBy" | "Build" => {}
            "Watches" | "WatchesMetadata" | "WatchesRawSource" | "WithOptions" | "WithEventFilter"
            | "WithLogConstructor" => report.add(
                at,
                format!("{method}({}) in SetupWithManager", first_line(args)),
                "not translated: watches, predicates and options are wired by hand on the Rust `Controller` (see operator_rs_runtime::controller::Controller)",
            ),
            _ => {
                other_setup.get_or_insert((method.clone(), at.clone()));
            }
        }
    }
    if let Some((method, at)) = other_setup {
        report.add(
            &at,
            format!("SetupWithManager's own setup ({method}...)"),
            "not translated: what SetupWithManager does besides building the controller (field indexers...) is done in Rust in `registration()` or the controller's cache",
        );
    }
    let Some(((pkg, kind), for_at)) = for_kind else {
        report.add(
            &setup.at,
            "a SetupWithManager without For(...)",
            "not translated: add the controller by hand",
        );
        return None;
    };
    let Some((kind_path, resource)) = rust_type(file, &pkg, &kind, project) else {
        let name = named.unwrap_or_else(|| kind.to_lowercase());
        let place = place(project, None, &name);
        report.add(
            &for_at,
            format!("the controller of {pkg}.{kind}"),
            format!("its kind is external (another project's API): only its RBAC markers are kept, in {}; add the controller with `operator-rs create api --external-api-path ...` (README: Kinds this project does not own)", place.file),
        );
        let mut text = format!(
            "//! The RBAC of the Go controller of {pkg}.{kind} ({}), whose kind is another\n//! project's: the controller is not imported (see IMPORT.md); its markers keep role.yaml as\n//! the Go project's.\n",
            file.path.display()
        );
        let rbac: Vec<&Marker> = file
            .markers
            .iter()
            .filter(|m| m.text.starts_with("kubebuilder:rbac:"))
            .collect();
        if !rbac.is_empty() {
            text.push('\n');
        }
        for m in rbac {
            text.push_str(&format!("// +{}\n", m.text));
        }
        return Some(Stub {
            name,
            resource: None,
            place,
            text,
        });
    };
    let Some(resource) = resource.or_else(|| {
        project
            .resources
            .iter()
            .position(|r: &GoResource| r.kind == kind && r.core)
    }) else {
        report.add(
            &for_at,
            format!("the controller of {pkg}.{kind}"),
            "PROJECT does not record its kind; not translated",
        );
        return None;
    };
    let name = named.unwrap_or_else(|| kind.to_lowercase());
    let r = &project.resources[resource];
    let place = place(project, Some(r), &name);
    let reconcile = file
        .funcs
        .iter()
        .find(|f| f.name == "Reconcile" && f.receiver.as_deref() == Some(receiver));
    let rbac: Vec<&Marker> = file
        .markers
        .iter()
        .filter(|m| m.text.starts_with("kubebuilder:rbac:"))
        .collect();
    if let Some(r) = reconcile {
        report.add(
            &r.at,
            format!("the Reconcile logic of {receiver}"),
            format!(
                "kept as a comment in {}; port it to `apply` (and `cleanup`)",
                place.file
            ),
        );
    }
    let finalizer = (!r.core).then(|| r.qualified_group());
    let text = render(
        file, &name, &kind, &kind_path, &owns, &rbac, reconcile, receiver, finalizer,
    );
    Some(Stub {
        name,
        resource: Some(resource),
        place,
        text,
    })
}

#[allow(clippy::too_many_arguments)]
fn render(
    file: &GoFile,
    name: &str,
    kind: &str,
    kind_path: &str,
    owns: &[String],
    rbac: &[&Marker],
    reconcile: Option<&go::Func>,
    receiver: &str,
    finalizer: Option<String>,
) -> String {
    let mut s = format!(
        "//! The {name} controller, imported from {}: reconciles {kind}. Its Go `Reconcile` is kept\n\
         //! below as a comment until it is ported to `apply`; as imported, it reconciles nothing\n\
         //! and requeues nothing.\n\n",
        file.path.display()
    );
    for m in rbac {
        s.push_str(&format!("// +{}\n", m.text));
    }
    if !rbac.is_empty() {
        s.push('\n');
    }
    s.push_str("use std::sync::Arc;\n\n");
    s.push_str("use operator_rs_runtime::controller::{Action, Context, Controller, Result};\n");
    s.push_str("use operator_rs_runtime::manager::Registration;\n\n");
    s.push_str(&format!("use {kind_path} as Kind;\n\n"));
    s.push_str(&format!(
        "/// The name of this controller (metrics label, logs).\npub const NAME: &str = {:?};\n",
        name
    ));
    if let Some(group) = &finalizer {
        s.push_str(&format!(
            "/// The finalizer that makes `cleanup` run before a {kind} is deleted.\npub const FINALIZER: &str = \"{group}/finalizer\";\n"
        ));
    }
    s.push('\n');
    s.push_str("/// How the manager runs this controller (listed in `controllers::all()`).\n");
    s.push_str("pub fn registration() -> Registration {\n    Controller::new(NAME, Reconciler)\n");
    if finalizer.is_some() {
        s.push_str("        .finalizer(FINALIZER)\n");
    }
    for o in owns {
        s.push_str(&format!("        .owns::<{o}>(Default::default())\n"));
    }
    s.push_str("        .registration()\n}\n\n");
    s.push_str(&format!(
        "/// The logic of the {name} controller (Go: `{receiver}`).\npub struct Reconciler;\n\n"
    ));
    s.push_str("impl operator_rs_runtime::controller::Reconciler for Reconciler {\n    type Kind = Kind;\n\n");
    s.push_str(
        "    async fn apply(&self, _obj: Arc<Kind>, _ctx: &Context<Kind>) -> Result<Action> {\n",
    );
    if let Some(r) = reconcile {
        s.push_str(&format!(
            "        // TODO(user): port the Go Reconcile ({}:{}):\n",
            r.at.file.display(),
            r.at.line
        ));
        for line in r.body.lines() {
            let line = line.replace('\t', "    ");
            if line.trim().is_empty() {
                s.push_str("        //\n");
            } else {
                s.push_str(&format!("        // {}\n", line.trim_end()));
            }
        }
    }
    s.push_str("        Ok(Action::await_change())\n    }\n}\n");
    s
}

/// Every `+kubebuilder:webhook` marker of the Go webhooks; their Go logic goes to the report.
pub fn webhook_markers(source: &Path, report: &mut Report) -> Result<Vec<Marker>> {
    let mut out = Vec::new();
    for (full, shown) in go_files(source, Path::new("internal/webhook"))? {
        if shown.to_string_lossy().ends_with("_test.go") {
            report.add(
                &At { file: shown.clone(), line: 1, col: 1 },
                "Go tests",
                "not translated: the imported webhooks have Rust tests of their own; port the cases you need",
            );
            continue;
        }
        let (file, unread) = go::read_file_lenient(&full, &shown)?;
        report.unread_go(unread);
        out.extend(
            file.markers
                .iter()
                .filter(|m| m.text.starts_with("kubebuilder:webhook:"))
                .cloned(),
        );
        for f in &file.funcs {
            if matches!(
                f.name.as_str(),
                "Default"
                    | "ValidateCreate"
                    | "ValidateUpdate"
                    | "ValidateDelete"
                    | "ConvertTo"
                    | "ConvertFrom"
            ) {
                report.add(
                    &f.at,
                    format!("the webhook logic {}.{}", f.receiver.as_deref().unwrap_or(""), f.name),
                    "not translated: the Rust webhook is a stub that allows everything; port the Go logic to it",
                );
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(multigroup: bool) -> GoProjectFile {
        let text = format!(
            "domain: testproject.org\nlayout: [go.kubebuilder.io/v4]\nmultigroup: {multigroup}\nprojectName: p\nrepo: example.com/p\nversion: \"3\"\nresources:\n\
             - {{group: crew, domain: testproject.org, version: v1, kind: Captain, api: {{namespaced: true}}, controllers: [{{name: captain}}, {{name: captain-backup}}]}}\n\
             - {{group: sea-creatures, domain: testproject.org, version: v1, kind: Kraken, api: {{namespaced: true}}}}\n\
             - {{group: apps, version: v1, kind: Deployment, core: true, controller: true}}\n"
        );
        serde_saphyr::from_str(&text).unwrap()
    }

    /// A Go controller's stub goes over the kind's scaffolded controller where its name is the
    /// kind's (`crew-captain` in a multigroup project), else in a module of its own beside its
    /// group's controllers (declared and registered), or at the top where its group has none.
    #[test]
    fn a_stub_goes_where_the_layout_puts_its_controller() {
        let multi = project(true);
        let [captain, kraken, deployment] = [0, 1, 2].map(|i| Some(&multi.resources[i]));
        assert_eq!(
            place(&multi, captain, "crew-captain"),
            Place {
                file: "src/controllers/crew/captain.rs".into(),
                module: "captain".into(),
                declared_in: None,
                registered_as: None,
            }
        );
        assert_eq!(
            place(&multi, captain, "crew-captain-backup"),
            Place {
                file: "src/controllers/crew/captain_backup.rs".into(),
                module: "captain_backup".into(),
                declared_in: Some("src/controllers/crew/mod.rs".into()),
                registered_as: Some("crew::captain_backup".into()),
            }
        );
        assert_eq!(
            place(&multi, deployment, "apps-deployment").file,
            "src/controllers/apps/deployment.rs"
        );
        // Kraken's PROJECT entry has no controller: its group has no folder of controllers.
        assert_eq!(
            place(&multi, kraken, "sea-creatures-kraken"),
            Place {
                file: "src/controllers/sea_creatures_kraken.rs".into(),
                module: "sea_creatures_kraken".into(),
                declared_in: Some("src/controllers/mod.rs".into()),
                registered_as: Some("sea_creatures_kraken".into()),
            }
        );
        // An external kind's RBAC markers.
        assert_eq!(
            place(&multi, None, "cert-manager-certificate").file,
            "src/controllers/cert_manager_certificate.rs"
        );
        let single = project(false);
        let captain = Some(&single.resources[0]);
        assert_eq!(
            place(&single, captain, "captain").file,
            "src/controllers/captain.rs"
        );
        assert_eq!(
            place(&single, captain, "captain-backup").registered_as,
            Some("captain_backup".into())
        );
    }
}
