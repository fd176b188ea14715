//! The template contexts: one serde struct per family of templates, built here and nowhere
//! else. A family is the folder of templates one command renders (`templates/init`,
//! `templates/api`, `templates/webhook`); its struct holds every name those templates use, under
//! the name they use, and no other (the tests below check both ways against every embedded
//! template, so a misspelled or missing name fails them). Tera 2 refuses to print a name the
//! context lacks, and the engine refuses a `when:` naming one.

use serde::Serialize;

use crate::names;
use crate::project::{Project, Resource};

/// A context of one family of templates.
pub trait Family: Serialize {
    /// The folder under `templates/` this context renders.
    const TEMPLATES: &'static str;
}

/// The project's names, which every family uses.
#[derive(Debug, Clone, Serialize)]
pub struct ProjectNames {
    /// `memcached-operator`.
    pub project_name: String,
    /// `memcached_operator`.
    pub crate_name: String,
}

impl ProjectNames {
    fn new(project: &Project) -> ProjectNames {
        ProjectNames {
            project_name: project.project_name.clone(),
            crate_name: project.crate_name.clone(),
        }
    }
}

/// `init`: the project's files.
#[derive(Debug, Clone, Serialize)]
pub struct InitContext {
    #[serde(flatten)]
    pub project: ProjectNames,
    /// `github.com/acme/memcached-operator`; may be empty.
    pub repo: String,
    /// The copyright holder; may be empty.
    pub owner: String,
    /// `apache2` or `none`.
    pub license: &'static str,
    pub year: i64,
    pub cli_version: &'static str,
    /// The k8s-openapi version feature, `v1_37`.
    pub k8s_feature: String,
    /// The `cargo install` arguments of a git-installed operator-rs (empty: crates.io).
    pub operator_rs_git: String,
    /// The manager's image (the Makefile's `IMG`).
    pub image: String,
    /// The same, split for config/manager's kustomization.
    #[serde(flatten)]
    pub image_parts: ImageRef,
    /// A namespace-scoped manager (PROJECT's `namespaced`): Roles instead of ClusterRoles.
    pub namespaced: bool,
    /// A sharded manager (PROJECT's `sharded`): `Manager::sharded()`, 3 replicas and a
    /// PodDisruptionBudget.
    pub sharded: bool,
}

impl Family for InitContext {
    const TEMPLATES: &'static str = "init";
}

/// The environment variable a replay of a project's commands pins the license year with (the
/// year PROJECT's `scaffold:` record holds), so that a replay on another day makes the same files.
pub const LICENSE_YEAR_ENV: &str = "OPERATOR_RS_LICENSE_YEAR";

/// The year of new license headers: [`LICENSE_YEAR_ENV`] when a replay pins it, else this year
/// (UTC).
pub fn license_year() -> i64 {
    std::env::var(LICENSE_YEAR_ENV)
        .ok()
        .and_then(|y| y.parse().ok())
        .unwrap_or_else(|| {
            jiff::Timestamp::now()
                .to_zoned(jiff::tz::TimeZone::UTC)
                .year()
                .into()
        })
}

/// The manager's image in a fresh project.
pub const MANAGER_IMAGE: &str = "controller:latest";

impl InitContext {
    pub fn new(
        project: &Project,
        owner: &str,
        license: &'static str,
        operator_rs_git: String,
    ) -> InitContext {
        InitContext {
            project: ProjectNames::new(project),
            repo: project.repo.clone(),
            owner: owner.to_string(),
            license,
            year: license_year(),
            cli_version: env!("CARGO_PKG_VERSION"),
            k8s_feature: project.k8s_openapi_feature.clone(),
            operator_rs_git,
            image: MANAGER_IMAGE.to_string(),
            image_parts: ImageRef::parse(MANAGER_IMAGE),
            namespaced: project.namespaced,
            sharded: project.sharded,
        }
    }
}

/// A container image reference split as the generated Makefile's `set-image` splits `IMG`, and
/// as `kustomize edit set image` writes it: `name@digest`, `name:tag` (a colon after the last
/// slash; a registry's port is not a tag), or a bare `name` (tag `latest`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ImageRef {
    #[serde(rename = "image_name")]
    pub name: String,
    /// Empty when the reference has a digest.
    #[serde(rename = "image_tag")]
    pub tag: String,
    /// Empty unless the reference has one (`sha256:...`).
    #[serde(rename = "image_digest")]
    pub digest: String,
}

impl ImageRef {
    pub fn parse(image: &str) -> ImageRef {
        if let Some((name, digest)) = image.split_once('@') {
            return ImageRef {
                name: name.to_string(),
                tag: String::new(),
                digest: digest.to_string(),
            };
        }
        let tail_start = image.rfind('/').map_or(0, |i| i + 1);
        match image[tail_start..].rfind(':') {
            Some(colon) => ImageRef {
                name: image[..tail_start + colon].to_string(),
                tag: image[tail_start + colon + 1..].to_string(),
                digest: String::new(),
            },
            None => ImageRef {
                name: image.to_string(),
                tag: "latest".to_string(),
                digest: String::new(),
            },
        }
    }
}

/// A kind's names, which the `api` and `webhook` families both use.
#[derive(Debug, Clone, Serialize)]
pub struct KindNames {
    pub kind: String,
    /// `memcached`, `cron_job`: the kind's file and module name.
    pub kind_snake: String,
    pub version: String,
    pub plural: String,
    /// `cache.example.com`; `apps` for a built-in kind; empty for core/v1.
    pub full_group: String,
    /// `crate::api::v1alpha1::Memcached`, or the k8s-openapi path of a built-in kind.
    pub rust_type: String,
    /// The module of the kind's group in the multigroup layout (`ship`), empty in the
    /// single-group one; `group_dir` is the same as a folder (`ship/`) and `group_path` as a
    /// Rust path prefix (`ship::`), both empty in the single-group layout (see
    /// [`crate::project::layout`]).
    pub group_module: String,
    pub group_dir: String,
    pub group_path: String,
}

impl KindNames {
    fn new(project: &Project, r: &Resource) -> KindNames {
        let layout = project.layout();
        KindNames {
            group_module: layout.group_module(r),
            group_dir: layout.group_dir(r),
            group_path: layout.group_path(r),
            kind: r.kind.clone(),
            kind_snake: names::kind_snake(&r.kind),
            version: r.version.clone(),
            plural: r.plural.clone(),
            full_group: r.api_group(),
            rust_type: r.path.clone(),
        }
    }
}

/// `create api`: a kind's types, CRD files and controller, and their wiring.
#[derive(Debug, Clone, Serialize)]
pub struct ApiContext {
    #[serde(flatten)]
    pub project: ProjectNames,
    #[serde(flatten)]
    pub names: KindNames,
    /// The short group, `cache` (`core` for core/v1).
    pub group: String,
    /// The apiVersion objects of the kind carry: `cache.example.com/v1alpha1`, `v1` for core/v1.
    pub api_version: String,
    pub namespaced: bool,
    /// The kind's storage version (a further version's types say `storage = false`).
    pub stored: bool,
    /// Render the kind's types and CRD files (`--resource`, for a kind this project owns).
    pub resource: bool,
    /// A kind this project does not own: a k8s-openapi kind, or an external one (`--from-crd`,
    /// `--external-api-path`).
    pub builtin: bool,
    /// An external kind: its CRD is its owner's.
    pub external: bool,
    /// For a `--from-crd` kind, the smallest `spec` (JSON) its CRD's schema accepts, which the
    /// e2e test of the kind creates; empty for the other kinds.
    pub e2e_spec: String,
    /// The editor and viewer roles are Roles: a namespace-scoped manager's, as kubebuilder's, of
    /// a namespaced kind. A cluster-scoped kind's are ClusterRoles in any project (a Role cannot
    /// grant a cluster-scoped resource).
    pub kind_roles_are_roles: bool,
    /// `memcached`, `cronjob`.
    pub kind_lower: String,
    /// The editor and viewer roles' file stem (`memcached`: `config/rbac/memcached_editor_role.yaml`)
    /// and object name stem (`memcached`: `memcached-editor-role`); see [`role_stems`].
    pub role_file: String,
    pub role_name: String,
    /// The kind among the project's kinds, in its test names (`frigate`: `fn frigate_v1`), its
    /// controller's name and a deploy-image kind's image variable: the kind's module name, or
    /// in the multigroup layout its role file stem, qualified with the group when a kind of
    /// another group has its name (`sea_frigate`).
    pub kind_stem: String,
    /// The group module the kind's types add to (`ship`), empty when this run renders no
    /// types or in the single-group layout; `controller_group_module` the same for its
    /// controller.
    pub types_group_module: String,
    pub controller_group_module: String,
    #[serde(flatten)]
    pub controller: ControllerContext,
}

/// The editor and viewer roles' file and name stems of `r`: the kind's (`memcached`), unless a
/// kind of another group, earlier in PROJECT, has either already (`Memcached` of cache.example.com
/// and of web.example.com; `CronJob` and `Cronjob`): then qualified with the group
/// (`web_memcached`, `web-memcached`), as kubebuilder's multi-group layout names them, so neither
/// kind's roles are lost (their file kept as the other's, their ClusterRole replaced).
fn role_stems(project: &Project, r: &Resource) -> (String, String) {
    let (snake, lower) = (names::kind_snake(&r.kind), r.kind.to_ascii_lowercase());
    let first_of_kind = project
        .resources
        .iter()
        .position(|o| o.same_gk(r))
        .unwrap_or(project.resources.len());
    let taken = project.resources[..first_of_kind].iter().any(|o| {
        o.has_api()
            && !o.same_gk(r)
            && (names::kind_snake(&o.kind) == snake || o.kind.eq_ignore_ascii_case(&r.kind))
    });
    if !taken {
        return (snake, lower);
    }
    let group = if r.group.is_empty() {
        r.qualified_group()
    } else {
        r.group.clone()
    };
    (
        format!("{}_{snake}", group.replace(['.', '-'], "_")),
        format!("{}-{lower}", group.replace('.', "-")),
    )
}

impl Family for ApiContext {
    const TEMPLATES: &'static str = "api";
}

/// What one `create api` run renders of a kind; the rest of the context says what the kind is
/// (its entry in PROJECT), which the fragments that describe the whole kind (its tests) follow.
#[derive(Debug, Clone, Copy)]
pub struct ApiParts {
    /// The kind's types and CRD files (`--resource`); a controller added later for an existing
    /// kind leaves its (possibly edited) types alone.
    pub types: bool,
    /// The controller file (`--controller`); a re-run with `--controller=false` leaves it alone.
    pub controller: bool,
}

impl ApiContext {
    pub fn new(project: &Project, r: &Resource, parts: ApiParts) -> ApiContext {
        let names = KindNames::new(project, r);
        let api_version = if names.full_group.is_empty() {
            r.version.clone()
        } else {
            format!("{}/{}", names.full_group, r.version)
        };
        let namespaced = r.namespaced();
        ApiContext {
            project: ProjectNames::new(project),
            group: r.group.clone(),
            api_version,
            namespaced,
            stored: r.api.as_ref().is_none_or(|a| a.storage),
            resource: parts.types && r.has_api(),
            builtin: r.owned_elsewhere(),
            external: r.external,
            e2e_spec: String::new(),
            kind_roles_are_roles: project.namespaced && namespaced,
            kind_lower: r.kind.to_ascii_lowercase(),
            role_file: role_stems(project, r).0,
            role_name: role_stems(project, r).1,
            kind_stem: if project.multigroup {
                role_stems(project, r).0
            } else {
                names.kind_snake.clone()
            },
            types_group_module: if parts.types && r.has_api() {
                names.group_module.clone()
            } else {
                String::new()
            },
            controller_group_module: if r.controller {
                names.group_module.clone()
            } else {
                String::new()
            },
            controller: ControllerContext::new(project, r, &names, parts.controller),
            names,
        }
    }
}

/// The part of `create api` that renders a controller: which flavour, and what it runs.
#[derive(Debug, Clone, Serialize)]
pub struct ControllerContext {
    /// The kind has a controller in this project.
    pub controller: bool,
    /// Which controller template renders (one per flavour; none when this run leaves the
    /// controller alone).
    pub flavour_plain: bool,
    pub flavour_deploy_image: bool,
    pub flavour_builtin: bool,
    /// A controller of a kind this project owns (it gets an integration test).
    pub resource_controller: bool,
    /// `cache.example.com/finalizer`.
    pub finalizer: String,
    /// The kind runs an image (`--image`).
    pub deploy_image: bool,
    #[serde(flatten)]
    pub container: ContainerContext,
}

impl ControllerContext {
    fn new(project: &Project, r: &Resource, names: &KindNames, render: bool) -> ControllerContext {
        let deploy_image = r.deploy_image.is_some();
        let finalizer_group = if names.full_group.is_empty() {
            &project.domain
        } else {
            &names.full_group
        };
        ControllerContext {
            controller: r.controller,
            flavour_plain: render && r.controller && !r.owned_elsewhere() && !deploy_image,
            flavour_deploy_image: render && r.controller && !r.owned_elsewhere() && deploy_image,
            flavour_builtin: render && r.controller && r.owned_elsewhere(),
            resource_controller: r.controller && !r.owned_elsewhere() && r.has_api(),
            finalizer: format!("{finalizer_group}/finalizer"),
            deploy_image,
            container: ContainerContext::new(r),
        }
    }
}

/// The container a deploy-image kind runs (empty for other kinds).
#[derive(Debug, Clone, Serialize)]
pub struct ContainerContext {
    pub container_image: String,
    /// The image as a Rust string literal.
    pub container_image_rust: String,
    /// The image as one YAML scalar.
    pub container_image_yaml: String,
    /// Absent (so `is defined` is false) when not given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container_port: Option<u16>,
    pub container_command: Vec<String>,
    /// Each argument as a Rust string literal.
    pub container_command_rust: Vec<String>,
    /// Absent (so `is defined` is false) when not given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_as_user: Option<i64>,
}

impl ContainerContext {
    fn new(r: &Resource) -> ContainerContext {
        let di = r.deploy_image.as_ref();
        let image = di.map(|d| d.image.clone()).unwrap_or_default();
        let command = di.map(|d| d.container_command.clone()).unwrap_or_default();
        ContainerContext {
            container_image_rust: rust_literal(&image),
            container_image_yaml: super::yaml_scalar(&image),
            container_image: image,
            container_port: di.and_then(|d| d.container_port),
            container_command_rust: command.iter().map(|a| rust_literal(a)).collect(),
            container_command: command,
            run_as_user: di.and_then(|d| d.run_as_user),
        }
    }
}

/// `create webhook`: a kind's admission webhooks, or the conversion of one spoke version.
#[derive(Debug, Clone, Serialize)]
pub struct WebhookContext {
    #[serde(flatten)]
    pub project: ProjectNames,
    #[serde(flatten)]
    pub names: KindNames,
    /// The kind's group/version as PROJECT names it (`core/v1` for core/v1).
    pub api_version: String,
    /// The group of `+kubebuilder:webhook` markers (`""` for core/v1).
    pub marker_group: String,
    /// A built-in or external kind: its webhooks see the whole cluster's objects of it.
    pub owned_elsewhere: bool,
    /// A `namespaceSelector` narrows what the kind's webhooks see: it is namespaced
    /// ([`Resource::namespaced`]), or core/v1 Namespace (matched by its own labels). Of other
    /// cluster-scoped kinds, only an `objectSelector` does.
    pub namespace_selector: bool,
    /// A defaulting webhook of a kind owned elsewhere that a `namespaceSelector` narrows: its
    /// configuration skips the manager's namespace (config/webhook/kustomization.yaml).
    pub exclude_namespace_defaulting: bool,
    /// The same for a validating webhook.
    pub exclude_namespace_validation: bool,
    /// The kind is namespaced: its test sample has a namespace.
    pub namespaced: bool,
    /// The kind's types were generated from its CRD (`create api --from-crd`): they derive
    /// `Default`, which gives the tests a sample with every required field.
    pub default_sample: bool,
    pub mutate_path: String,
    pub validate_path: String,
    /// The kind in its webhooks' names (`m<stem>-<version>.kb.io`): the kind in lowercase, in
    /// the multigroup layout qualified with the group when a kind of another group has its
    /// name (`sea-frigate`), as the API server wants one name per webhook of a configuration.
    pub webhook_stem: String,
    pub defaulting: bool,
    pub validation: bool,
    pub conversion: bool,
    /// A defaulting or validating webhook.
    pub admission: bool,
    /// Render the kind's admission file (the user's code: once, or with `--force`).
    pub admission_file: bool,
    /// The version module under `src/webhooks/` this run adds to (empty: none).
    pub module_version: String,
    /// The group module under `src/webhooks/` this run adds to (empty: none, or the
    /// single-group layout).
    pub webhook_group_module: String,
    #[serde(flatten)]
    pub spoke: SpokeContext,
}

impl Family for WebhookContext {
    const TEMPLATES: &'static str = "webhook";
}

/// The spoke version a conversion run renders (empty in an admission run).
#[derive(Debug, Clone, Default, Serialize)]
pub struct SpokeContext {
    /// The spoke's version (empty: not a conversion run).
    pub spoke: String,
    /// Render the spoke's conversion file (the user's code: once, or with `--force`).
    pub spoke_file: bool,
    pub spoke_api_version: String,
    pub spoke_type: String,
    pub hub_type: String,
}

/// The webhook types one `create webhook` run asks for.
#[derive(Debug, Clone, Copy)]
pub struct WebhookTypes {
    pub defaulting: bool,
    pub validation: bool,
    pub conversion: bool,
}

impl WebhookContext {
    /// The admission run: the kind's defaulting and validating webhooks, and (with
    /// `conversion`) the CRD's conversion patch.
    pub fn admission(
        project: &Project,
        r: &Resource,
        types: WebhookTypes,
        admission_file: bool,
    ) -> WebhookContext {
        let admission = types.defaulting || types.validation;
        let base = WebhookContext::base(project, r);
        let exclude_namespace = base.owned_elsewhere && base.namespace_selector;
        WebhookContext {
            exclude_namespace_defaulting: exclude_namespace && types.defaulting,
            exclude_namespace_validation: exclude_namespace && types.validation,
            defaulting: types.defaulting,
            validation: types.validation,
            conversion: types.conversion,
            admission,
            admission_file: admission && admission_file,
            module_version: if admission {
                r.version.clone()
            } else {
                String::new()
            },
            webhook_group_module: if admission {
                base.names.group_module.clone()
            } else {
                String::new()
            },
            ..base
        }
    }

    /// The conversion run of one spoke version of the hub `hub`.
    pub fn conversion(
        project: &Project,
        hub: &Resource,
        spoke: &Resource,
        spoke_file: bool,
    ) -> WebhookContext {
        WebhookContext {
            conversion: true,
            module_version: spoke.version.clone(),
            webhook_group_module: project.layout().group_module(hub),
            spoke: SpokeContext {
                spoke: spoke.version.clone(),
                spoke_file,
                spoke_api_version: spoke.api_version(),
                spoke_type: spoke.path.clone(),
                hub_type: hub.path.clone(),
            },
            ..WebhookContext::base(project, hub)
        }
    }

    fn base(project: &Project, r: &Resource) -> WebhookContext {
        let names = KindNames::new(project, r);
        let path_of = |prefix: &str| {
            format!(
                "/{prefix}-{}-{}-{}",
                names.full_group.replace('.', "-"),
                r.version,
                r.kind.to_ascii_lowercase()
            )
        };
        WebhookContext {
            project: ProjectNames::new(project),
            api_version: r.api_version(),
            marker_group: if names.full_group.is_empty() {
                "\"\"".to_string()
            } else {
                names.full_group.clone()
            },
            owned_elsewhere: r.owned_elsewhere(),
            namespace_selector: r.namespaced()
                || (r.api_group().is_empty() && r.kind == "Namespace"),
            exclude_namespace_defaulting: false,
            exclude_namespace_validation: false,
            namespaced: r.namespaced(),
            default_sample: r.from_crd.is_some(),
            mutate_path: path_of("mutate"),
            validate_path: path_of("validate"),
            webhook_stem: if project.multigroup {
                role_stems(project, r).1
            } else {
                r.kind.to_ascii_lowercase()
            },
            defaulting: false,
            validation: false,
            conversion: false,
            admission: false,
            admission_file: false,
            module_version: String::new(),
            webhook_group_module: String::new(),
            spoke: SpokeContext::default(),
            names,
        }
    }
}

/// `value` as a Rust string literal (quotes, backslashes and control characters escaped).
fn rust_literal(value: &str) -> String {
    format!("{value:?}")
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::scaffold::template::{Template, templates_for};

    const ALL: ApiParts = ApiParts {
        types: true,
        controller: true,
    };

    #[test]
    fn image_references_split_as_set_image_does() {
        let split = |image: &str| {
            let r = ImageRef::parse(image);
            (r.name, r.tag, r.digest)
        };
        let s = |a: &str, b: &str, c: &str| (a.to_string(), b.to_string(), c.to_string());
        assert_eq!(split("controller:latest"), s("controller", "latest", ""));
        assert_eq!(split("controller"), s("controller", "latest", ""));
        assert_eq!(
            split("localhost:5000/acme/op"),
            s("localhost:5000/acme/op", "latest", "")
        );
        assert_eq!(
            split("localhost:5000/acme/op:v2"),
            s("localhost:5000/acme/op", "v2", "")
        );
        assert_eq!(
            split("ghcr.io/acme/op@sha256:abc"),
            s("ghcr.io/acme/op", "", "sha256:abc")
        );
    }

    /// A project with a deploy-image kind given every optional setting (so that every optional
    /// name is in its context) and a second version of it, read as `PROJECT` is.
    const PROJECT: &str = "version: \"3\"
domain: example.com
repo: github.com/acme/memcached-operator
projectName: memcached-operator
crateName: memcached_operator
layout:
- rust.operator-rs.io/v1
cliVersion: 0.1.0
k8sOpenapiFeature: v1_37
resources:
- group: cache
  domain: example.com
  version: v1alpha1
  kind: Memcached
  plural: memcacheds
  api:
    crdVersion: v1
    namespaced: true
    storage: true
  controller: true
  path: crate::api::v1alpha1::Memcached
  deployImage:
    image: memcached:1.6
    containerPort: 11211
    containerCommand:
    - memcached
    - -m=64
    runAsUser: 1001
- group: cache
  domain: example.com
  version: v1beta1
  kind: Memcached
  plural: memcacheds
  api:
    crdVersion: v1
    namespaced: true
  path: crate::api::v1beta1::Memcached
";

    fn project() -> Project {
        Project::parse(PROJECT).unwrap()
    }

    fn memcached() -> Resource {
        project().resources[0].clone()
    }

    /// The names of a context, as the templates see them.
    fn keys(ctx: &impl Family) -> BTreeSet<String> {
        match serde_json::to_value(ctx).expect("a context serializes") {
            serde_json::Value::Object(map) => map.keys().cloned().collect(),
            other => panic!("a context is a map, not {other}"),
        }
    }

    /// Every name a template reads from its context: in its body, its output path and its
    /// `when:`, but not the names it sets itself (loop variables tera leaves out already).
    fn names_read(t: &Template) -> BTreeSet<String> {
        let mut tera = tera::Tera::default();
        tera.add_raw_template("body", t.body)
            .unwrap_or_else(|e| panic!("{}: {e}", t.name));
        tera.add_raw_template("path", &t.front.path)
            .unwrap_or_else(|e| panic!("{} (path): {e}", t.name));
        let mut names: BTreeSet<String> = ["body", "path"]
            .iter()
            .flat_map(|n| tera.get_template_variables(n).unwrap())
            .map(str::to_string)
            .collect();
        if let Some(when) = &t.front.when {
            names.insert(when.trim().trim_start_matches("not ").trim().to_string());
        }
        for set in names_set(t.body) {
            names.remove(set);
        }
        names
    }

    /// The names a template assigns with `{% set name = ... %}`.
    fn names_set(body: &str) -> Vec<&str> {
        body.split("{%")
            .skip(1)
            .filter_map(|tag| {
                let tag = tag.trim_start_matches('-').trim_start();
                let rest = tag.strip_prefix("set ")?;
                rest.split(|c: char| c == '=' || c.is_whitespace())
                    .find(|w| !w.is_empty())
            })
            .collect()
    }

    /// Each family's template folder is read with exactly the names of its context: a name no
    /// field provides (misspelled in a template, or dropped from the struct) fails here, and so
    /// does a field no template reads.
    fn check_family(ctx: &impl Family, folder: &str) {
        let fields = keys(ctx);
        let mut read = BTreeSet::new();
        let templates = templates_for(folder).unwrap();
        assert!(!templates.is_empty(), "no templates in {folder}");
        for t in &templates {
            let names = names_read(t);
            let unknown: Vec<&String> = names.difference(&fields).collect();
            assert!(
                unknown.is_empty(),
                "template {} reads {unknown:?}, which its context ({folder}) does not have",
                t.name
            );
            read.extend(names);
        }
        let unused: Vec<&String> = fields.difference(&read).collect();
        assert!(
            unused.is_empty(),
            "no template of {folder} reads {unused:?}: drop them from its context"
        );
    }

    #[test]
    fn the_init_templates_read_exactly_the_init_context() {
        let ctx = InitContext::new(&project(), "Acme", "apache2", String::new());
        check_family(&ctx, InitContext::TEMPLATES);
    }

    #[test]
    fn the_api_templates_read_exactly_the_api_context() {
        let ctx = ApiContext::new(&project(), &memcached(), ALL);
        check_family(&ctx, ApiContext::TEMPLATES);
    }

    #[test]
    fn the_webhook_templates_read_exactly_the_webhook_context() {
        let types = WebhookTypes {
            defaulting: true,
            validation: true,
            conversion: true,
        };
        let ctx = WebhookContext::admission(&project(), &memcached(), types, true);
        check_family(&ctx, WebhookContext::TEMPLATES);
        let spoke = &project().resources[1];
        let ctx = WebhookContext::conversion(&project(), &memcached(), spoke, true);
        check_family(&ctx, WebhookContext::TEMPLATES);
    }

    #[test]
    fn optional_settings_are_absent_not_empty() {
        // `{% if container_port is defined %}`: a port not given must not be in the context.
        let plain = Resource {
            deploy_image: None,
            ..memcached()
        };
        let names = keys(&ApiContext::new(&project(), &plain, ALL));
        assert!(!names.contains("container_port"), "{names:?}");
        assert!(!names.contains("run_as_user"), "{names:?}");
        assert!(names.contains("container_image"), "{names:?}");
    }

    #[test]
    fn controller_flavours_are_exclusive() {
        let builtin = Resource {
            controller: true,
            core: true,
            path: "k8s_openapi::api::apps::v1::Deployment".into(),
            ..Resource::new("apps", "", "v1", "Deployment", "deployments")
        };
        let plain = Resource {
            deploy_image: None,
            ..memcached()
        };
        let external = Resource {
            controller: true,
            external: true,
            path: "kcr_cert_manager_io::v1::certificates::Certificate".into(),
            ..Resource::new("cert-manager", "io", "v1", "Certificate", "certificates")
        };
        let c = ApiContext::new(&project(), &external, ALL);
        assert!(c.builtin && c.external && !c.resource && !c.controller.resource_controller);
        assert_eq!(c.api_version, "cert-manager.io/v1");
        for (r, want) in [
            (memcached(), [false, true, false]),
            (plain, [true, false, false]),
            (builtin, [false, false, true]),
            (external, [false, false, true]),
        ] {
            let c = ApiContext::new(&project(), &r, ALL).controller;
            assert_eq!(
                [c.flavour_plain, c.flavour_deploy_image, c.flavour_builtin],
                want,
                "{}",
                r.kind
            );
        }
    }
}
