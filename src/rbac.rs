//! `operator-rs generate rbac`: the manager's roles, `config/rbac/role.yaml`, from the
//! `// +kubebuilder:rbac:...` markers in the project's Rust sources, as controller-gen's `rbac`
//! generator makes them from Go comments.
//!
//! A marker is a `//` comment (or `///`, `//!`; with or without a space before the `+`) on a line
//! of its own in any `.rs` file under `src/`, never text in a literal or a block comment
//! ([`crate::markers`] finds them):
//!
//! ```text
//! // +kubebuilder:rbac:groups=cache.example.com,resources=memcacheds;memcacheds/status,verbs=get;list;watch
//! // +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list,namespace=default
//! // +kubebuilder:rbac:urls=/metrics,verbs=get
//! ```
//!
//! Keys: `groups`, `resources`, `resourceNames`, `verbs` (required), `urls`, `namespace` and
//! `roleName`. A list is `a;b;c` or `{a,b,c}`; an item may be quoted (`groups=""` is the core
//! group, as is `groups=core`). Unlike controller-gen, operator-rs never skips a marker it cannot
//! read: an unknown or misspelt key, a missing or empty value, a `*` wildcard, a rule Kubernetes
//! would reject, or a misspelt marker name (`+kubebuilder:rabc:`, `+Kubebuilder:rbac:`) is an
//! error naming the file, line and column and how to fix it. `+operator-rs:rbac:` is refused too, with a
//! pointer to the one spelling: a single name keeps markers greppable and portable to and from
//! kubebuilder projects.
//!
//! The roles are built exactly as controller-tools' `pkg/rbac/parser.go` builds them: markers are
//! grouped by (namespace, roleName); each marker is split into one rule per resource; `core`
//! becomes `""`; rules with the same groups, resources, resourceNames and URLs get the union of
//! their verbs; then rules equal but for their resources are merged, then those equal but for
//! their groups, then those equal but for their URLs; every list is sorted and deduplicated, and
//! rules are sorted by `groups + resources + resourceNames + urls`. Cluster-wide rules make the
//! ClusterRole `manager-role`, rules with a namespace make a Role of that name in it; documents are
//! ordered by namespace then name, each preceded by `---`.
//!
//! In a namespace-scoped project (PROJECT's `namespaced: true`, `init --namespaced`), a marker
//! without `namespace=` grants in the manager's own namespace: its rules make the Role
//! `manager-role` with no namespace in the file (config/default's NamespaceTransformer puts it in
//! the manager's, where `config/rbac/role_binding.yaml` binds it), and every other Role gets a
//! RoleBinding to the manager's ServiceAccount next to it. A marker naming the manager's own
//! namespace (config/default's, as kubebuilder's `--namespaced` scaffold writes on every marker)
//! grants in that Role too.
//!
//! In any project, a marker with `namespace=team-a` grants in `team-a`: a Role there and a
//! RoleBinding beside it naming the ServiceAccount `controller-manager` with no namespace.
//! config/default keeps both in `team-a` (its NamespaceTransformer sets only namespaces that are
//! unset, or config/'s placeholder `system`) and fills in the subject's namespace and prefixed
//! name, so the manager may do exactly that in `team-a` (the namespace must exist: `make deploy`
//! does not create it). A config/default still using kustomize's `namespace:` field would move
//! them: `generate rbac` says so. A Role cannot grant a cluster-scoped resource (a
//! built-in one such as `nodes` or `namespaces`, or a kind of this project created with
//! `--namespaced=false`) or a URL: as controller-gen does with a marker that has no
//! `namespace=`, those rules stay in the ClusterRole `manager-role`, bound by a
//! ClusterRoleBinding, and a note names each marker (file:line:col) that put them there. The
//! manager then watches those kinds cluster-wide. A resource this module cannot place (another
//! project's CRD) is taken as namespaced.
//!
//! One difference: the ClusterRole `manager-role` is always written, with `rules: []` when no
//! marker grants anything cluster-wide (controller-gen then writes no file, or no ClusterRole),
//! because `config/rbac/role_binding.yaml` binds it and kustomize must find `role.yaml` (in a
//! namespace-scoped project, the Role `manager-role` is the one always written, for the same reason).
//!
//! The YAML is written with serde-saphyr, which prints these documents as controller-gen
//! (sigs.k8s.io/yaml) does: keys in alphabetical order, block sequences at the indentation of their
//! key, `""` for the empty string; the tests pin that against controller-gen's own fixture.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;

use crate::markers::{self, MarkerName, Site, key_values};
use crate::names;
use crate::project::{self, CORE_GROUP, Project};
use crate::suggest::suggest;
use crate::workspace::{GeneratedFile, GeneratorOutput, SourceTree};

/// The generated file, relative to the project root.
pub const ROLE_FILE: &str = "config/rbac/role.yaml";
/// The name of the generated ClusterRole (and of the Roles), as kubebuilder's `rbac:roleName=manager-role`.
pub const DEFAULT_ROLE_NAME: &str = "manager-role";

/// The marker this module reads.
const RBAC: MarkerName = MarkerName {
    name: "rbac",
    what: "RBAC",
    example: "// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch",
};
const KEYS: [&str; 7] = [
    "groups",
    "resources",
    "resourceNames",
    "verbs",
    "urls",
    "namespace",
    "roleName",
];
/// The verbs Kubernetes itself checks. Others are legal in RBAC (for extension API servers) but
/// most likely a typo, so they draw a warning.
const KNOWN_VERBS: [&str; 14] = [
    "get",
    "list",
    "watch",
    "create",
    "update",
    "patch",
    "delete",
    "deletecollection",
    "use",
    "bind",
    "escalate",
    "impersonate",
    "approve",
    "sign",
];

/// Scan every `.rs` file under `src/` for RBAC markers and render `config/rbac/role.yaml`.
/// Every malformed marker is reported (all of them, each with file:line) and nothing is produced.
pub fn generate(tree: &dyn SourceTree, project: &Project) -> Result<GeneratorOutput> {
    let (found, mut problems) = markers::collect(tree, &RBAC)?;
    let mut markers = Vec::new();
    for f in &found {
        match parse_args(&f.args) {
            Ok(m) => markers.push(Marker {
                site: f.site.clone(),
                ..m
            }),
            Err(message) => problems.push(f.problem(message)),
        }
    }
    markers::refuse_unreadable("RBAC", &problems)?;

    let mut warnings = Vec::new();
    for m in &markers {
        warnings.extend(m.warnings());
    }
    let scope = if project.namespaced {
        // A marker naming the manager's own namespace (kubebuilder's `--namespaced` scaffold
        // writes `namespace=<project>-system` on each) grants what one without `namespace=`
        // does: a second Role `manager-role` there would be the same object as the first once
        // config/default sets the namespace, which kustomize refuses.
        if let Some(own) = manager_namespace(tree) {
            for m in markers.iter_mut().filter(|m| m.namespace == own) {
                m.namespace.clear();
            }
        }
        Scope::Namespaced(cluster_scoped_resources(project))
    } else {
        Scope::Cluster
    };
    let (roles, notes) = build_roles(&markers, &scope);
    warnings.extend(notes);
    warnings.extend(uncovered_controllers(project, &roles));
    warnings.extend(kustomize_namespace_note(tree, &roles));
    let contents = render(&roles, matches!(scope, Scope::Namespaced(_)))?;
    Ok(GeneratorOutput {
        files: vec![GeneratedFile {
            path: PathBuf::from(ROLE_FILE),
            contents,
        }],
        stale: Vec::new(),
        warnings,
    })
}

/// One `+kubebuilder:rbac` marker, read and checked.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Marker {
    site: Site,
    groups: Vec<String>,
    resources: Vec<String>,
    resource_names: Vec<String>,
    verbs: Vec<String>,
    urls: Vec<String>,
    namespace: String,
    role_name: String,
}

impl Marker {
    fn at(&self) -> String {
        self.site.to_string()
    }

    fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        for v in self
            .verbs
            .iter()
            .filter(|v| !KNOWN_VERBS.contains(&v.as_str()))
        {
            let hint = suggest(v, &KNOWN_VERBS)
                .map(|s| format!(" Did you mean `{s}`?"))
                .unwrap_or_default();
            out.push(format!(
                "{}: `{v}` is not a verb Kubernetes checks ({}).{hint}",
                self.at(),
                KNOWN_VERBS.join(", ")
            ));
        }
        if !self.resource_names.is_empty() {
            for v in self
                .verbs
                .iter()
                .filter(|v| matches!(v.as_str(), "create" | "deletecollection"))
            {
                out.push(format!(
                    "{}: resourceNames cannot restrict `{v}` (the API server does not know the name at authorization time), \
                     so this rule never allows it; grant `{v}` in a marker without resourceNames",
                    self.at()
                ));
            }
        }
        out
    }
}

/// Parse and check `key=value,key=value` (the text after `+kubebuilder:rbac:`).
fn parse_args(args: &str) -> std::result::Result<Marker, String> {
    if args.trim().is_empty() {
        return Err(format!(
            "the marker grants nothing: add key=value pairs, e.g. `{}`",
            RBAC.example
        ));
    }
    check(key_values(args, &KEYS)?)
}

/// Check the values against what Kubernetes accepts in a PolicyRule, and build the marker.
fn check(mut values: BTreeMap<&'static str, Vec<String>>) -> std::result::Result<Marker, String> {
    let mut take = |k: &str| values.remove(k).unwrap_or_default();
    let groups = take("groups");
    let resources = take("resources");
    let resource_names = take("resourceNames");
    let verbs = take("verbs");
    let urls = take("urls");
    let namespace = take("namespace");
    let role_name = take("roleName");

    for (key, list) in [
        ("groups", &groups),
        ("resources", &resources),
        ("resourceNames", &resource_names),
        ("verbs", &verbs),
        ("urls", &urls),
        ("namespace", &namespace),
        ("roleName", &role_name),
    ] {
        if list.iter().any(|v| v.contains('*')) {
            let example = match key {
                "verbs" => "verbs=get;list;watch",
                "resources" => "resources=deployments;deployments/status",
                "groups" => "groups=apps;batch",
                "urls" => "urls=/metrics",
                _ => "explicit names",
            };
            return Err(format!(
                "`*` in {key} grants everything, now and in future versions; list exactly what the controller needs, e.g. `{example}`"
            ));
        }
    }
    if verbs.is_empty() {
        return Err("no verbs: add e.g. `verbs=get;list;watch` (verbs is required)".to_string());
    }
    if let Some(v) = verbs
        .iter()
        .find(|v| !v.chars().all(|c| c.is_ascii_lowercase()))
    {
        return Err(format!(
            "verb `{v}` is not a lowercase word; RBAC verbs are case-sensitive, e.g. `verbs=get;list;watch`"
        ));
    }
    for (key, list) in [("namespace", &namespace), ("roleName", &role_name)] {
        if list.len() > 1 {
            return Err(format!(
                "{key} takes one value, not a list; write one marker per {key}"
            ));
        }
    }
    let namespace = namespace.into_iter().next().unwrap_or_default();
    let role_name = role_name
        .into_iter()
        .next()
        .unwrap_or_else(|| DEFAULT_ROLE_NAME.to_string());
    if !namespace.is_empty()
        && let Some(problem) = names::label_problem(&namespace, false)
    {
        return Err(format!(
            "namespace `{namespace}` is not a valid namespace name, a DNS-1123 label (at most 63 lowercase letters, digits and `-`, starting and ending with a letter or digit): {problem}"
        ));
    }
    if role_name.is_empty()
        || !role_name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '.' | ':'))
    {
        return Err(format!(
            "roleName `{role_name}` is not a valid role name (lowercase letters, digits, `-`, `.`, `:`)"
        ));
    }

    if !urls.is_empty() {
        if !groups.is_empty() || !resources.is_empty() || !resource_names.is_empty() {
            return Err(
                "a rule grants either resources (groups, resources, resourceNames) or non-resource urls, not both; split it into two markers"
                    .to_string(),
            );
        }
        if !namespace.is_empty() {
            return Err("urls are cluster-wide and a Role cannot grant them; drop `namespace=` from this marker".to_string());
        }
        if let Some(u) = urls
            .iter()
            .find(|u| !u.starts_with('/') || u.chars().any(char::is_whitespace))
        {
            return Err(format!(
                "url `{u}` is not a path; write e.g. `urls=/metrics`"
            ));
        }
    } else {
        if resources.is_empty() {
            return Err(if groups.is_empty() {
                "the marker grants nothing: add `groups=...,resources=...` (or `urls=...`)"
                    .to_string()
            } else {
                "no resources: add e.g. `resources=deployments` (the lowercase plural)".to_string()
            });
        }
        if groups.is_empty() {
            return Err("resources need their API group: add `groups=core` for pods, services, configmaps... \
                 or e.g. `groups=apps` for deployments"
                .to_string());
        }
    }
    for g in groups.iter().filter(|g| !g.is_empty() && *g != CORE_GROUP) {
        if !names::is_dns1123_subdomain(g) {
            return Err(format!(
                "group `{g}` is not an API group name (lowercase, e.g. `apps` or `cache.example.com`; `core` for the core group)"
            ));
        }
    }
    // From here on a group is the one Kubernetes knows: `core` is `""`, as controller-gen reads it.
    let groups = groups.into_iter().map(project::api_group_named).collect();
    for r in &resources {
        let (name, sub) = r
            .split_once('/')
            .map_or((r.as_str(), None), |(n, s)| (n, Some(s)));
        let ok = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '.'))
        };
        if !ok(name) || !sub.is_none_or(ok) {
            return Err(format!(
                "resource `{r}` is not a resource name: use the lowercase plural, with an optional subresource, e.g. `memcacheds` or `memcacheds/status`"
            ));
        }
    }
    if !resource_names.is_empty() && resources.is_empty() {
        return Err("resourceNames needs resources: add e.g. `resources=configmaps`".to_string());
    }

    Ok(Marker {
        site: Site::default(),
        groups,
        resources,
        resource_names,
        verbs,
        urls,
        namespace,
        role_name,
    })
}

/// A rule being normalized, as controller-gen's `Rule`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Rule {
    groups: Vec<String>,
    resources: Vec<String>,
    resource_names: Vec<String>,
    urls: Vec<String>,
    verbs: Vec<String>,
}

fn dedup_sort(v: &mut Vec<String>) {
    v.sort();
    v.dedup();
}

impl Rule {
    fn normalize(&mut self) {
        dedup_sort(&mut self.groups);
        dedup_sort(&mut self.resources);
        dedup_sort(&mut self.resource_names);
        dedup_sort(&mut self.urls);
        dedup_sort(&mut self.verbs);
    }

    /// controller-gen's `ruleKey`: groups, resources, resourceNames, urls (each joined with `&`).
    fn key(&mut self) -> [String; 4] {
        self.normalize();
        [
            self.groups.join("&"),
            self.resources.join("&"),
            self.resource_names.join("&"),
            self.urls.join("&"),
        ]
    }

    /// The sort key of the rules in a role: `groups + resources + resourceNames + urls`.
    fn sort_key(&mut self) -> String {
        self.key().join(" + ")
    }
}

/// One ClusterRole or Role of the output. A Role with an empty namespace is in the manager's
/// own namespace (a namespace-scoped project's; kustomize fills it in).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Role {
    namespace: String,
    cluster: bool,
    name: String,
    rules: Vec<Rule>,
}

/// Whose roles `generate rbac` writes: a cluster-scoped manager's, or a namespace-scoped one's
/// with the `(API group, plural)` of every resource a Role cannot grant.
enum Scope {
    Cluster,
    Namespaced(BTreeSet<(String, String)>),
}

/// The `(API group, plural)` of every cluster-scoped resource this project can name: the
/// built-in kinds k8s-openapi knows, the project's own cluster-scoped kinds and its
/// cluster-scoped external kinds (their CRD's scope, or the one `create api
/// --external-api-path --namespaced=false` recorded).
pub fn cluster_scoped_resources(project: &Project) -> BTreeSet<(String, String)> {
    let builtin = (crate::builtin::ALL.iter())
        .filter(|b| !b.namespaced)
        .map(|b| (b.group.to_string(), b.plural.to_string()));
    let own = (project.resources.iter())
        .filter(|r| (r.has_api() || r.external) && !r.namespaced())
        .map(|r| (r.api_group(), r.plural.clone()));
    builtin.chain(own).collect()
}

impl Scope {
    /// Whether `rule` (one resource, or URLs) must be in a ClusterRole: cluster-wide rules of a
    /// cluster-scoped manager, and URLs or cluster-scoped resources of a namespace-scoped one.
    fn is_cluster_wide(&self, namespace: &str, rule: &Rule) -> bool {
        match self {
            Scope::Cluster => namespace.is_empty(),
            Scope::Namespaced(cluster) => {
                namespace.is_empty()
                    && (!rule.urls.is_empty()
                        || rule.resources.iter().any(|r| {
                            let base = r.split('/').next().unwrap_or(r);
                            (rule.groups.iter())
                                .any(|g| cluster.contains(&(g.clone(), base.to_string())))
                        }))
            }
        }
    }
}

/// Group the markers by (namespace, roleName) and normalize each group's rules; in a
/// namespace-scoped project, the rules a Role cannot hold go to a ClusterRole instead, with a
/// note for each marker that put them there. The role `manager-role` the scaffolded binding
/// names (the ClusterRole, or the namespace-scoped project's Role) is always there, first.
fn build_roles(markers: &[Marker], scope: &Scope) -> (Vec<Role>, Vec<String>) {
    let namespaced = matches!(scope, Scope::Namespaced(_));
    let mut by_role: BTreeMap<(String, bool, String), Vec<Rule>> = BTreeMap::new();
    by_role
        .entry((String::new(), !namespaced, DEFAULT_ROLE_NAME.to_string()))
        .or_default();
    let mut notes = Vec::new();
    for m in markers {
        let base = Rule {
            groups: m.groups.clone(),
            resources: Vec::new(),
            resource_names: m.resource_names.clone(),
            urls: m.urls.clone(),
            verbs: m.verbs.clone(),
        };
        let rules = if m.resources.is_empty() {
            vec![base]
        } else {
            (m.resources.iter())
                .map(|r| Rule {
                    resources: vec![r.clone()],
                    ..base.clone()
                })
                .collect()
        };
        let mut kept_cluster_wide = Vec::new();
        for rule in rules {
            let cluster = scope.is_cluster_wide(&m.namespace, &rule);
            if cluster && namespaced {
                kept_cluster_wide.extend(rule.resources.iter().chain(&rule.urls).cloned());
            }
            (by_role.entry((m.namespace.clone(), cluster, m.role_name.clone())))
                .or_default()
                .push(rule);
        }
        if !kept_cluster_wide.is_empty() {
            notes.push(format!(
                "{}: {} cluster-wide (cluster-scoped resources or URLs), which a Role cannot grant: \
                 kept in the ClusterRole {}, bound to the manager by a ClusterRoleBinding, and the manager \
                 watches such kinds in every namespace. To stay inside namespaces, drop them from this marker.",
                m.at(),
                kept_cluster_wide
                    .iter()
                    .map(|r| format!("`{r}` is"))
                    .collect::<Vec<_>>()
                    .join(", "),
                m.role_name,
            ));
        }
    }
    let roles = by_role
        .into_iter()
        .filter_map(|((namespace, cluster, name), rules)| {
            let rules = normalize_rules(rules);
            let keep = !rules.is_empty()
                || (namespace.is_empty() && cluster != namespaced && name == DEFAULT_ROLE_NAME);
            keep.then_some(Role {
                namespace,
                cluster,
                name,
                rules,
            })
        })
        .collect();
    (roles, notes)
}

/// controller-gen's `NormalizeRules`: merge, deduplicate and sort.
fn normalize_rules(rules: Vec<Rule>) -> Vec<Rule> {
    // Same groups, resources, resourceNames and URLs: union of the verbs.
    let mut by_key: BTreeMap<[String; 4], Rule> = BTreeMap::new();
    for mut rule in rules {
        let key = rule.key();
        match by_key.get_mut(&key) {
            Some(existing) => {
                existing.verbs.extend(rule.verbs);
                dedup_sort(&mut existing.verbs);
            }
            None => {
                by_key.insert(key, rule);
            }
        }
    }
    // Then merge rules equal but for one field: resources, then groups, then URLs.
    let merged = merge_on(
        by_key.into_values(),
        |r| &mut r.resources,
        |r| {
            [
                r.groups.join("&"),
                r.resource_names.join("&"),
                r.urls.join("&"),
                r.verbs.join("&"),
            ]
        },
    );
    let merged = merge_on(
        merged,
        |r| &mut r.groups,
        |r| {
            [
                r.resources.join("&"),
                r.resource_names.join("&"),
                r.urls.join("&"),
                r.verbs.join("&"),
            ]
        },
    );
    let merged = merge_on(
        merged,
        |r| &mut r.urls,
        |r| {
            [
                r.groups.join("&"),
                r.resources.join("&"),
                r.resource_names.join("&"),
                r.verbs.join("&"),
            ]
        },
    );
    let mut keyed: Vec<(String, Rule)> =
        merged.into_iter().map(|mut r| (r.sort_key(), r)).collect();
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    keyed.into_iter().map(|(_, r)| r).collect()
}

/// Merge the rules whose `others` key is equal by concatenating their `field`, then normalize.
fn merge_on(
    rules: impl IntoIterator<Item = Rule>,
    field: impl Fn(&mut Rule) -> &mut Vec<String>,
    others: impl Fn(&Rule) -> [String; 4],
) -> Vec<Rule> {
    let mut groups: BTreeMap<[String; 4], Rule> = BTreeMap::new();
    for mut rule in rules {
        rule.normalize();
        match groups.get_mut(&others(&rule)) {
            Some(existing) => {
                let extra = std::mem::take(field(&mut rule));
                field(existing).extend(extra);
                existing.normalize();
            }
            None => {
                groups.insert(others(&rule), rule);
            }
        }
    }
    groups.into_values().collect()
}

/// Warn about each kind with a controller that no rule lets the manager watch: it would get
/// 403 Forbidden from the API server as soon as it starts.
fn uncovered_controllers(project: &Project, roles: &[Role]) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for r in project.resources.iter().filter(|r| r.controller) {
        let group = r.api_group();
        if !seen.insert((group.clone(), r.plural.clone())) {
            continue;
        }
        let covered = roles.iter().flat_map(|role| &role.rules).any(|rule| {
            rule.groups.contains(&group)
                && rule.resources.contains(&r.plural)
                && rule.verbs.iter().any(|v| v == "watch")
        });
        if !covered {
            let marker_group = if group.is_empty() {
                CORE_GROUP
            } else {
                group.as_str()
            };
            out.push(format!(
                "no RBAC marker lets the {} controller watch {} ({}), so the manager will get 403 Forbidden; add to {}:\n  \
                 // +kubebuilder:rbac:groups={marker_group},resources={},verbs=get;list;watch",
                r.kind,
                r.plural,
                if group.is_empty() { "core group" } else { group.as_str() },
                project.layout().controller_file(r),
                r.plural,
            ));
        }
    }
    out
}

#[derive(Serialize)]
struct RoleDoc<'a> {
    #[serde(rename = "apiVersion")]
    api_version: &'static str,
    kind: &'static str,
    metadata: Metadata<'a>,
    rules: Vec<PolicyRule<'a>>,
}

#[derive(Serialize)]
struct Metadata<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    namespace: &'a str,
}

/// A PolicyRule with its fields in the order sigs.k8s.io/yaml prints them (alphabetical).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PolicyRule<'a> {
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    api_groups: &'a [String],
    #[serde(
        rename = "nonResourceURLs",
        skip_serializing_if = "<[String]>::is_empty"
    )]
    non_resource_urls: &'a [String],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    resource_names: &'a [String],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    resources: &'a [String],
    verbs: &'a [String],
}

/// A RoleBinding or ClusterRoleBinding of the manager's ServiceAccount, with its fields in the
/// order sigs.k8s.io/yaml prints them.
#[derive(Serialize)]
struct BindingDoc<'a> {
    #[serde(rename = "apiVersion")]
    api_version: &'static str,
    kind: &'static str,
    metadata: Metadata<'a>,
    #[serde(rename = "roleRef")]
    role_ref: RoleRef<'a>,
    subjects: [Subject; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RoleRef<'a> {
    api_group: &'static str,
    kind: &'static str,
    name: &'a str,
}

/// The manager's ServiceAccount, as config/rbac names it (kustomize prefixes the name and
/// moves the namespace to the manager's).
#[derive(Serialize)]
struct Subject {
    kind: &'static str,
    name: &'static str,
    #[serde(skip_serializing_if = "str::is_empty")]
    namespace: &'static str,
}

/// The name of the binding of role `name`: `manager-role` is bound by `manager-rolebinding`,
/// as config/rbac/role_binding.yaml names it; any other by `<name>-binding`.
fn binding_name(name: &str) -> String {
    match name.strip_suffix("-role") {
        Some(base) => format!("{base}-rolebinding"),
        None => format!("{name}-binding"),
    }
}

/// The roles, then a binding of the manager's ServiceAccount to each of them but the role
/// `manager-role` of the manager itself (the ClusterRole of a cluster-scoped project, the Role of
/// a namespace-scoped one), which the scaffolded `config/rbac/role_binding.yaml` binds.
///
/// The binding of a Role of another namespace (`namespace=team-a`) stays in that namespace and
/// names the ServiceAccount without a namespace: config/default's NamespaceTransformer
/// (`unsetOnly`, `setRoleBindingSubjects: allServiceAccounts`) gives it the manager's, and
/// kustomize's name reference its prefixed name. Bindings of the manager's own namespace (no
/// namespace in the file) name it in `system`, as `role_binding.yaml` does.
fn render(roles: &[Role], namespaced: bool) -> Result<String> {
    let mut out = String::new();
    let kind = |role: &Role| if role.cluster { "ClusterRole" } else { "Role" };
    for role in roles {
        let doc = RoleDoc {
            api_version: "rbac.authorization.k8s.io/v1",
            kind: kind(role),
            metadata: Metadata {
                name: &role.name,
                namespace: &role.namespace,
            },
            rules: role
                .rules
                .iter()
                .map(|r| PolicyRule {
                    api_groups: &r.groups,
                    non_resource_urls: &r.urls,
                    resource_names: &r.resource_names,
                    resources: &r.resources,
                    verbs: &r.verbs,
                })
                .collect(),
        };
        push_doc(&mut out, &doc)?;
    }
    for role in roles {
        let bound_by_scaffold = role.namespace.is_empty()
            && role.name == DEFAULT_ROLE_NAME
            && role.cluster != namespaced;
        // A cluster-scoped project's other ClusterRoles (`roleName=`) stay unbound, as
        // controller-gen leaves them: the user decides who gets them.
        if bound_by_scaffold || (!namespaced && role.namespace.is_empty()) {
            continue;
        }
        let name = binding_name(&role.name);
        let doc = BindingDoc {
            api_version: "rbac.authorization.k8s.io/v1",
            kind: if role.cluster {
                "ClusterRoleBinding"
            } else {
                "RoleBinding"
            },
            metadata: Metadata {
                name: &name,
                namespace: &role.namespace,
            },
            role_ref: RoleRef {
                api_group: "rbac.authorization.k8s.io",
                kind: kind(role),
                name: &role.name,
            },
            subjects: [Subject {
                kind: "ServiceAccount",
                name: "controller-manager",
                namespace: if role.namespace.is_empty() {
                    "system"
                } else {
                    ""
                },
            }],
        };
        push_doc(&mut out, &doc)?;
    }
    Ok(out)
}

/// A note when config/default moves every object to the manager's namespace with kustomize's
/// `namespace:` (projects made before operator-rs used a NamespaceTransformer there) and `roles`
/// has Roles of other namespaces, which it would move too.
fn kustomize_namespace_note(tree: &dyn SourceTree, roles: &[Role]) -> Option<String> {
    let foreign: BTreeSet<&str> = (roles.iter())
        .filter(|r| !r.namespace.is_empty())
        .map(|r| r.namespace.as_str())
        .collect();
    let default = tree.read(Path::new(DEFAULT_KUSTOMIZATION)).ok()??;
    let moves_all = default.lines().any(|l| l.starts_with("namespace:"));
    (moves_all && !foreign.is_empty()).then(|| {
        format!(
            "{DEFAULT_KUSTOMIZATION} sets `namespace:`, which moves the Roles of namespace{} {} into \
             the manager's namespace (or fails on names they share): replace it with the \
             NamespaceTransformer (`unsetOnly: true`) a new project's config/default has (`operator-rs \
             update` brings it)",
            if foreign.len() == 1 { "" } else { "s" },
            foreign.into_iter().collect::<Vec<_>>().join(", ")
        )
    })
}

/// The manager's namespace as config/default sets it: its NamespaceTransformer's namespace, or
/// kustomize's `namespace:` field (projects made before the transformer).
fn manager_namespace(tree: &dyn SourceTree) -> Option<String> {
    let text = tree.read(Path::new(DEFAULT_KUSTOMIZATION)).ok()??;
    let doc: serde_json::Value = serde_saphyr::from_str(&text).ok()?;
    let transformers = doc["transformers"].as_array().into_iter().flatten();
    let from_transformer = transformers.filter_map(|t| {
        let t: serde_json::Value = match t {
            serde_json::Value::String(s) => serde_saphyr::from_str(s).ok()?,
            other => other.clone(),
        };
        (t["kind"] == "NamespaceTransformer")
            .then(|| t["metadata"]["namespace"].as_str().map(str::to_string))?
    });
    from_transformer
        .chain(doc["namespace"].as_str().map(str::to_string))
        .next()
}

/// The kustomization `make deploy` renders.
const DEFAULT_KUSTOMIZATION: &str = "config/default/kustomization.yaml";

/// Append `doc` to `out` as one YAML document, preceded by `---`.
fn push_doc(out: &mut String, doc: &impl Serialize) -> Result<()> {
    let yaml = serde_saphyr::to_string(doc).context("serializing role.yaml")?;
    let _ = write!(out, "---\n{yaml}");
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::{Api, Resource};
    use crate::suggest::osa_distance;
    use std::io;
    use std::path::Path;

    /// An in-memory project tree.
    struct Mem {
        root: PathBuf,
        files: BTreeMap<PathBuf, String>,
    }

    impl Mem {
        fn new(files: &[(&str, &str)]) -> Self {
            Self {
                root: PathBuf::from("/project"),
                files: files
                    .iter()
                    .map(|(p, t)| (PathBuf::from(p), t.to_string()))
                    .collect(),
            }
        }
    }

    impl SourceTree for Mem {
        fn read(&self, rel: &Path) -> io::Result<Option<String>> {
            Ok(self.files.get(rel).cloned())
        }
        fn files_under(&self, rel_dir: &Path) -> io::Result<Vec<PathBuf>> {
            Ok(self
                .files
                .keys()
                .filter(|p| p.starts_with(rel_dir))
                .cloned()
                .collect())
        }
        fn root(&self) -> &Path {
            &self.root
        }
    }

    fn project(resources: Vec<Resource>) -> Project {
        Project::for_tests(resources)
    }

    fn resource(group: &str, domain: &str, kind: &str, plural: &str, controller: bool) -> Resource {
        Resource {
            api: (!domain.is_empty()).then(|| Api {
                crd_version: "v1".into(),
                namespaced: true,
                storage: true,
            }),
            controller,
            core: domain.is_empty(),
            ..Resource::new(group, domain, "v1", kind, plural)
        }
    }

    /// The role.yaml of one source file (no PROJECT resources).
    fn role_yaml(src: &str) -> String {
        let out = generate(
            &Mem::new(&[("src/controllers/x.rs", src)]),
            &project(vec![]),
        )
        .unwrap();
        assert_eq!(out.files.len(), 1);
        assert_eq!(out.files[0].path, Path::new(ROLE_FILE));
        out.files[0].contents.clone()
    }

    fn error_of(src: &str) -> String {
        let err = generate(
            &Mem::new(&[("src/controllers/x.rs", src)]),
            &project(vec![]),
        )
        .unwrap_err();
        format!("{err:#}")
    }

    /// controller-tools' pkg/rbac/testdata/controller.go and the role.yaml controller-gen makes
    /// of it (the version before wildcard verbs were added: operator-rs refuses `*`).
    const CONTROLLER_GEN_MARKERS: &str = r#"
// +kubebuilder:rbac:groups=batch.io,resources=cronjobs,verbs=get;watch;create
// +kubebuilder:rbac:groups=batch.io,resources=cronjobs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=art,resources=jobs,verbs=get
// +kubebuilder:rbac:groups=wave,resources=jobs,verbs=get,namespace=zoo
// +kubebuilder:rbac:groups=batch;batch;batch,resources=jobs/status,verbs=watch
// +kubebuilder:rbac:groups=batch;cron,resources=jobs/status,verbs=create;get
// +kubebuilder:rbac:groups=art,resources=jobs,verbs=get,namespace=zoo
// +kubebuilder:rbac:groups=cron;batch,resources=jobs/status,verbs=get;create
// +kubebuilder:rbac:groups=batch,resources=jobs/status,verbs=watch;watch
// +kubebuilder:rbac:groups=art,resources=jobs,verbs=get,namespace=park
// +kubebuilder:rbac:groups=batch.io,resources=cronjobs,resourceNames=foo;bar;baz,verbs=get;watch
// +kubebuilder:rbac:groups=deduplicate-verbs,resources=some,verbs=get;list
// +kubebuilder:rbac:groups=deduplicate-verbs,resources=some,verbs=get
// +kubebuilder:rbac:groups=deduplicate-verbs,resources=some,verbs=list
// +kubebuilder:rbac:groups=deduplicate-resources,resources=one,verbs=create
// +kubebuilder:rbac:groups=deduplicate-resources,resources=two,verbs=create
// +kubebuilder:rbac:groups=deduplicate-resources,resources=three,verbs=create
// +kubebuilder:rbac:groups=deduplicate-groups1,resources=foo,verbs=patch
// +kubebuilder:rbac:groups=deduplicate-groups2,resources=foo,verbs=patch
// +kubebuilder:rbac:groups=deduplicate-groups3,resources=foo,verbs=patch
// +kubebuilder:rbac:groups=deduplicate-all,resources=foo;bar,verbs=get;list
// +kubebuilder:rbac:groups=deduplicate-all,resources=foo,verbs=get
// +kubebuilder:rbac:groups=deduplicate-all,resources=bar,verbs=list
// +kubebuilder:rbac:groups=deduplicate-all-group,resources=foo;bar,verbs=get;list
// +kubebuilder:rbac:groups=not-deduplicate-resources,resources=some,verbs=get
// +kubebuilder:rbac:groups=not-deduplicate-resources,resources=another,verbs=list
// +kubebuilder:rbac:groups=not-deduplicate-groups1,resources=some,verbs=get
// +kubebuilder:rbac:groups=not-deduplicate-groups2,resources=some,verbs=list
// +kubebuilder:rbac:urls=/url-to-duplicate,verbs=get
// +kubebuilder:rbac:urls=/another/url-to-duplicate,verbs=get
// +kubebuilder:rbac:groups=core,resources=deduplicate,verbs=list
// +kubebuilder:rbac:groups="",resources=me,verbs=list
// +kubebuilder:rbac:groups=core;"";some-other-to-deduplicate-with-core,resources=me,verbs=list;get
"#;

    const CONTROLLER_GEN_ROLE: &str = r#"---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: manager-role
rules:
- nonResourceURLs:
  - /another/url-to-duplicate
  - /url-to-duplicate
  verbs:
  - get
- apiGroups:
  - ""
  resources:
  - deduplicate
  - me
  verbs:
  - list
- apiGroups:
  - ""
  - some-other-to-deduplicate-with-core
  resources:
  - me
  verbs:
  - get
  - list
- apiGroups:
  - art
  resources:
  - jobs
  verbs:
  - get
- apiGroups:
  - batch
  resources:
  - jobs/status
  verbs:
  - watch
- apiGroups:
  - batch
  - cron
  resources:
  - jobs/status
  verbs:
  - create
  - get
- apiGroups:
  - batch.io
  resources:
  - cronjobs
  verbs:
  - create
  - get
  - watch
- apiGroups:
  - batch.io
  resourceNames:
  - bar
  - baz
  - foo
  resources:
  - cronjobs
  verbs:
  - get
  - watch
- apiGroups:
  - batch.io
  resources:
  - cronjobs/status
  verbs:
  - get
  - patch
  - update
- apiGroups:
  - deduplicate-all
  - deduplicate-all-group
  resources:
  - bar
  - foo
  verbs:
  - get
  - list
- apiGroups:
  - deduplicate-groups1
  - deduplicate-groups2
  - deduplicate-groups3
  resources:
  - foo
  verbs:
  - patch
- apiGroups:
  - deduplicate-resources
  resources:
  - one
  - three
  - two
  verbs:
  - create
- apiGroups:
  - deduplicate-verbs
  resources:
  - some
  verbs:
  - get
  - list
- apiGroups:
  - not-deduplicate-groups1
  - not-deduplicate-resources
  resources:
  - some
  verbs:
  - get
- apiGroups:
  - not-deduplicate-groups2
  resources:
  - some
  verbs:
  - list
- apiGroups:
  - not-deduplicate-resources
  resources:
  - another
  verbs:
  - list
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: manager-role
  namespace: park
rules:
- apiGroups:
  - art
  resources:
  - jobs
  verbs:
  - get
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: manager-role
  namespace: zoo
rules:
- apiGroups:
  - art
  - wave
  resources:
  - jobs
  verbs:
  - get
"#;

    #[test]
    fn matches_controller_gen_on_its_own_fixture() {
        let yaml = role_yaml(CONTROLLER_GEN_MARKERS);
        let (roles, bindings) = split_bindings(&yaml);
        assert_eq!(roles, CONTROLLER_GEN_ROLE);
        // What controller-gen leaves to the user: the Roles of other namespaces bound.
        assert_eq!(
            documents(bindings),
            [
                "RoleBinding manager-rolebinding park",
                "RoleBinding manager-rolebinding zoo"
            ]
        );
    }

    #[test]
    fn marker_order_and_file_split_do_not_matter() {
        let mut lines: Vec<&str> = CONTROLLER_GEN_MARKERS
            .lines()
            .filter(|l| !l.is_empty())
            .collect();
        lines.reverse();
        let (a, b) = lines.split_at(lines.len() / 2);
        let tree = Mem::new(&[
            ("src/a.rs", &a.join("\n")),
            ("src/controllers/deep/b.rs", &b.join("\n")),
        ]);
        let out = generate(&tree, &project(vec![])).unwrap();
        assert_eq!(
            split_bindings(&out.files[0].contents).0,
            CONTROLLER_GEN_ROLE
        );
    }

    #[test]
    fn no_markers_still_writes_the_bound_cluster_role() {
        let yaml = role_yaml("fn main() {}\n");
        assert_eq!(
            yaml,
            "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: manager-role\nrules: []\n"
        );
    }

    #[test]
    fn init_template_is_the_output_for_no_markers() {
        let template = include_str!("../templates/init/config/rbac/role.yaml.tera");
        let body = &template[template.find("-#}\n").unwrap() + 4..];
        let scoped = "{% if namespaced %}Role{% else %}ClusterRole{% endif %}";
        assert!(body.contains(scoped), "{body}");
        assert_eq!(role_yaml(""), body.replace(scoped, "ClusterRole"));
        let namespaced = namespaced_output("", vec![]);
        assert_eq!(namespaced.files[0].contents, body.replace(scoped, "Role"));
    }

    #[test]
    fn verbs_union_then_resources_merge() {
        let yaml = role_yaml(
            "// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list\n\
             // +kubebuilder:rbac:groups=apps,resources=deployments,verbs=watch;get\n\
             // +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=list;watch;get\n\
             // +kubebuilder:rbac:groups=apps,resources=deployments/status,verbs=get\n",
        );
        assert_eq!(
            yaml,
            "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: manager-role\nrules:\n\
             - apiGroups:\n  - apps\n  resources:\n  - deployments\n  - statefulsets\n  verbs:\n  - get\n  - list\n  - watch\n\
             - apiGroups:\n  - apps\n  resources:\n  - deployments/status\n  verbs:\n  - get\n"
        );
    }

    #[test]
    fn core_and_empty_group_are_one_group() {
        let yaml = role_yaml(
            "// +kubebuilder:rbac:groups=core,resources=pods,verbs=get\n\
             // +kubebuilder:rbac:groups=\"\",resources=pods,verbs=list\n",
        );
        assert!(
            yaml.contains(
                "- apiGroups:\n  - \"\"\n  resources:\n  - pods\n  verbs:\n  - get\n  - list\n"
            ),
            "{yaml}"
        );
        assert_eq!(yaml.matches("apiGroups").count(), 1, "{yaml}");
    }

    #[test]
    fn roles_by_namespace_and_role_name_and_other_namespaces_bound() {
        let yaml = role_yaml(
            "// +kubebuilder:rbac:groups=core,resources=secrets,verbs=get,namespace=zeta\n\
             // +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get\n\
             // +kubebuilder:rbac:groups=core,resources=configmaps,verbs=get,namespace=alpha,roleName=config-reader\n\
             // +kubebuilder:rbac:groups=core,resources=secrets,verbs=list,namespace=alpha\n\
             // +kubebuilder:rbac:groups=core,resources=pods,verbs=list,roleName=pod-lister\n",
        );
        assert_eq!(
            documents(&yaml),
            [
                "ClusterRole manager-role -",
                "ClusterRole pod-lister -",
                "Role config-reader alpha",
                "Role manager-role alpha",
                "Role manager-role zeta",
                // The Roles of other namespaces, bound beside them; the ClusterRole `pod-lister`
                // stays unbound, as controller-gen leaves it.
                "RoleBinding config-reader-binding alpha",
                "RoleBinding manager-rolebinding alpha",
                "RoleBinding manager-rolebinding zeta",
            ],
            "{yaml}"
        );
        // Their subject has no namespace: config/default's NamespaceTransformer gives it the
        // manager's (`system` would stay `system`, the placeholder it does not move).
        let (_, bindings) = split_bindings(&yaml);
        assert_eq!(
            bindings
                .matches("subjects:\n- kind: ServiceAccount\n  name: controller-manager\n")
                .count(),
            3,
            "{bindings}"
        );
        assert!(!bindings.contains("namespace: system"), "{bindings}");
    }

    #[test]
    fn a_config_default_that_moves_every_object_is_named_when_other_namespaces_are_granted() {
        let warnings = |kustomization: &str, src: &str| {
            let tree = Mem::new(&[
                ("src/controllers/x.rs", src),
                ("config/default/kustomization.yaml", kustomization),
            ]);
            generate(&tree, &project(vec![])).unwrap().warnings
        };
        let old = "namePrefix: op-\nnamespace: op-system\nresources:\n- ../rbac\n";
        let new = "namePrefix: op-\ntransformers:\n- |-\n  kind: NamespaceTransformer\n  metadata:\n    namespace: op-system\n";
        let foreign = "// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get,namespace=team-b\n\
                       // +kubebuilder:rbac:groups=core,resources=secrets,verbs=get,namespace=team-a\n";
        let own = "// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get\n";
        let note = warnings(old, foreign);
        assert_eq!(note.len(), 1, "{note:?}");
        assert!(
            note[0].starts_with("config/default/kustomization.yaml sets `namespace:`")
                && note[0].contains("namespaces team-a, team-b")
                && note[0].contains("unsetOnly: true"),
            "{note:?}"
        );
        assert!(warnings(new, foreign).is_empty());
        assert!(warnings(old, own).is_empty());
    }

    /// `yaml`'s roles, and its bindings (which follow them).
    fn split_bindings(yaml: &str) -> (&str, &str) {
        let at = yaml.find("---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding");
        let at = at.or_else(|| {
            yaml.find("---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding")
        });
        yaml.split_at(at.unwrap_or(yaml.len()))
    }

    /// The output of one source file in a namespace-scoped project with `resources`.
    fn namespaced_output(src: &str, resources: Vec<Resource>) -> GeneratorOutput {
        let mut project = project(resources);
        project.namespaced = true;
        generate(&Mem::new(&[("src/controllers/x.rs", src)]), &project).unwrap()
    }

    /// `kind name namespace` of every document of `yaml`.
    fn documents(yaml: &str) -> Vec<String> {
        let docs: Vec<serde_json::Value> = yaml
            .split("---\n")
            .filter(|d| !d.is_empty())
            .map(|d| serde_saphyr::from_str(d).unwrap())
            .collect();
        docs.iter()
            .map(|d| {
                let meta = &d["metadata"];
                format!(
                    "{} {} {}",
                    d["kind"].as_str().unwrap(),
                    meta["name"].as_str().unwrap(),
                    meta["namespace"].as_str().unwrap_or("-")
                )
            })
            .collect()
    }

    /// kubebuilder's `--namespaced` scaffold writes `namespace=<project>-system` on every marker
    /// (kubebuilder's testdata/project-v4-with-plugins): in a namespace-scoped project those are
    /// the manager's own Role, not a second `manager-role` in the namespace config/default puts
    /// the first one in (kustomize refuses two objects with one id).
    #[test]
    fn markers_naming_the_managers_namespace_grant_in_its_own_role() {
        let kustomizations = [
            "namePrefix: op-\ntransformers:\n- |-\n  apiVersion: builtin\n  kind: NamespaceTransformer\n  metadata:\n    name: manager-namespace\n    namespace: op-system\n  unsetOnly: true\n",
            "namePrefix: op-\nnamespace: op-system\n",
        ];
        let src = "// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get,namespace=op-system\n\
                   // +kubebuilder:rbac:groups=core,resources=pods,verbs=list\n\
                   // +kubebuilder:rbac:groups=core,resources=secrets,verbs=get,namespace=team-a\n";
        for kustomization in kustomizations {
            let tree = Mem::new(&[
                ("src/controllers/x.rs", src),
                ("config/default/kustomization.yaml", kustomization),
            ]);
            let mut p = project(vec![]);
            p.namespaced = true;
            let yaml = &generate(&tree, &p).unwrap().files[0].contents;
            assert_eq!(
                documents(yaml),
                [
                    "Role manager-role -",
                    "Role manager-role team-a",
                    "RoleBinding manager-rolebinding team-a"
                ],
                "{yaml}"
            );
            let (roles, _) = split_bindings(yaml);
            let own = roles.split("---\n").nth(1).unwrap();
            assert!(
                own.contains("deployments") && own.contains("pods"),
                "{yaml}"
            );
            // A cluster-scoped manager's Role in its namespace is no clash: it stays there.
            let yaml = &generate(&tree, &project(vec![])).unwrap().files[0].contents;
            assert!(
                documents(yaml).contains(&"Role manager-role op-system".to_string()),
                "{yaml}"
            );
        }
    }

    #[test]
    fn a_namespaced_project_gets_roles_and_bindings_but_no_cluster_role() {
        let out = namespaced_output(
            "// +kubebuilder:rbac:groups=cache.example.com,resources=memcacheds;memcacheds/status,verbs=get;list;watch\n\
             // +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch\n\
             // +kubebuilder:rbac:groups=core,resources=secrets,verbs=get,namespace=tenant-b\n\
             // +kubebuilder:rbac:groups=core,resources=configmaps,verbs=get,roleName=config-reader\n",
            vec![resource(
                "cache",
                "example.com",
                "Memcached",
                "memcacheds",
                true,
            )],
        );
        let yaml = &out.files[0].contents;
        assert_eq!(
            documents(yaml),
            [
                "Role config-reader -",
                "Role manager-role -",
                "Role manager-role tenant-b",
                "RoleBinding config-reader-binding -",
                "RoleBinding manager-rolebinding tenant-b",
            ],
            "{yaml}"
        );
        assert!(!yaml.contains("ClusterRole"), "{yaml}");
        // The binding of the manager's own namespace names it in `system` (as role_binding.yaml
        // does); that of tenant-b without a namespace, which config/default fills in.
        assert!(
            yaml.contains("  name: config-reader\nsubjects:\n- kind: ServiceAccount\n  name: controller-manager\n  namespace: system\n"),
            "{yaml}"
        );
        assert!(
            yaml.ends_with("  namespace: tenant-b\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: manager-role\nsubjects:\n- kind: ServiceAccount\n  name: controller-manager\n"),
            "{yaml}"
        );
        assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    }

    #[test]
    fn a_namespaced_project_keeps_cluster_scoped_rules_in_a_bound_cluster_role_with_a_note() {
        let mut cluster_kind = resource("infra", "example.com", "Fleet", "fleets", true);
        cluster_kind.api.as_mut().unwrap().namespaced = false;
        let out = namespaced_output(
            "// +kubebuilder:rbac:groups=infra.example.com,resources=fleets;fleets/status,verbs=get;list;watch\n\
             // +kubebuilder:rbac:groups=core,resources=pods;nodes,verbs=get;list\n\
             // +kubebuilder:rbac:urls=/healthz,verbs=get\n",
            vec![cluster_kind],
        );
        let yaml = &out.files[0].contents;
        assert_eq!(
            documents(yaml),
            [
                "Role manager-role -",
                "ClusterRole manager-role -",
                "ClusterRoleBinding manager-rolebinding -",
            ],
            "{yaml}"
        );
        // pods stay in the Role; nodes, the cluster-scoped CRD (and its status) and URLs do not.
        let role = yaml.split("kind: ClusterRole\n").next().unwrap();
        assert!(
            role.contains("- pods\n") && !role.contains("nodes"),
            "{yaml}"
        );
        let cluster = yaml.split("kind: ClusterRole\n").nth(1).unwrap();
        for granted in [
            "- nodes\n",
            "- fleets\n",
            "- fleets/status\n",
            "- /healthz\n",
        ] {
            assert!(cluster.contains(granted), "{granted} in {yaml}");
        }
        assert_eq!(out.warnings.len(), 3, "{:?}", out.warnings);
        assert!(
            out.warnings[1].starts_with("src/controllers/x.rs:2:")
                && out.warnings[1].contains("`nodes` is cluster-wide")
                && !out.warnings[1].contains("pods"),
            "{:?}",
            out.warnings
        );
    }

    #[test]
    fn only_namespaced_markers_keep_an_empty_cluster_role_first() {
        let yaml = role_yaml(
            "// +kubebuilder:rbac:groups=core,resources=secrets,verbs=get,namespace=ns\n",
        );
        assert!(yaml.starts_with("---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: manager-role\nrules: []\n---\n"), "{yaml}");
        assert!(
            yaml.contains("kind: Role\nmetadata:\n  name: manager-role\n  namespace: ns\n"),
            "{yaml}"
        );
    }

    #[test]
    fn marker_spellings_accepted_and_ignored() {
        let accepted = [
            "// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get",
            "//+kubebuilder:rbac:groups=apps,resources=deployments,verbs=get",
            "    /// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get",
            "//! +kubebuilder:rbac:groups={apps},resources={deployments},verbs={get, list}",
            "// +kubebuilder:rbac:groups=\"apps\",resources=`deployments`,verbs=get ; list",
        ];
        for line in accepted {
            let yaml = role_yaml(line);
            assert!(
                yaml.contains("  - apps\n  resources:\n  - deployments\n"),
                "{line}\n{yaml}"
            );
        }
        // Commented-out markers, markers in code, and other kubebuilder markers are not RBAC rules.
        for line in [
            "// // +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get",
            "let s = \"+kubebuilder:rbac:groups=apps,resources=deployments,verbs=get\";",
            "// +kubebuilder:validation:Minimum=1",
            "// +operator-rs:scaffold:controllers",
            "// see +kubebuilder:rbac:groups=x in the docs",
        ] {
            assert_eq!(role_yaml(line), role_yaml(""), "{line}");
        }
    }

    #[test]
    fn errors_name_file_line_and_fix() {
        let src =
            "//! controller\n\n// +kubebuilder:rbac:groups=apps,resources=deployments,verb=get\n";
        let err = error_of(src);
        assert!(
            err.contains("src/controllers/x.rs:3:4: unknown key `verb`; did you mean `verbs`?"),
            "{err}"
        );
        assert!(
            err.contains("+kubebuilder:rbac:groups=apps,resources=deployments,verb=get"),
            "{err}"
        );
        assert!(err.contains("nothing was generated"), "{err}");
    }

    #[test]
    fn every_malformed_marker_is_reported() {
        let tree = Mem::new(&[
            (
                "src/a.rs",
                "// +kubebuilder:rbac:groups=apps,resources=deployments\n",
            ),
            (
                "src/b.rs",
                "ok\n// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=*\n",
            ),
        ]);
        let err = format!("{:#}", generate(&tree, &project(vec![])).unwrap_err());
        assert!(err.starts_with("2 RBAC markers cannot be read"), "{err}");
        assert!(err.contains("src/a.rs:1:4: no verbs"), "{err}");
        assert!(
            err.contains("src/b.rs:2:4: `*` in verbs grants everything"),
            "{err}"
        );
    }

    #[test]
    fn malformed_markers_are_errors() {
        let long_namespace = format!(
            "groups=apps,resources=deployments,verbs=get,namespace={}",
            "a".repeat(64)
        );
        let cases = [
            ("groups=apps,resources=deployments", "no verbs"),
            (
                "groups=apps,resources=deployments,verbs=",
                "verbs: empty value",
            ),
            (
                "groups=,resources=pods,verbs=get",
                "groups: empty value; give one, or for the core API group write `core`",
            ),
            (
                "groups=apps,resources=deployments,verbs=get;;list",
                "verbs: empty value",
            ),
            ("groups=apps,resources=*,verbs=get", "`*` in resources"),
            ("groups=*,resources=pods,verbs=get", "`*` in groups"),
            ("urls=/metrics/*,verbs=get", "`*` in urls"),
            (
                "groups=apps,resources=deployments,verbs=Get",
                "verb `Get` is not a lowercase word",
            ),
            (
                "groups=apps,Resources=deployments,verbs=get",
                "did you mean `resources`?",
            ),
            (
                "groups=apps,resources=deployments,resourcenames=x,verbs=get",
                "did you mean `resourceNames`?",
            ),
            (
                "groups=apps,resources=deployments,verbs=get,colour=blue",
                "unknown key `colour`; (keys:",
            ),
            (
                "groups=apps,resources=deployments,verbs=get,verbs=list",
                "`verbs` is given twice",
            ),
            (
                "groups=apps,resources=deployments,verbs=get,",
                "empty argument",
            ),
            (
                "groups=apps,resources=deployments,verbs",
                "`verbs` has no value",
            ),
            ("resources=pods,verbs=get", "add `groups=core`"),
            ("groups=apps,verbs=get", "no resources"),
            ("verbs=get", "grants nothing"),
            ("", "grants nothing"),
            ("urls=/metrics,groups=core,verbs=get", "not both"),
            ("urls=/metrics,verbs=get,namespace=ns", "drop `namespace=`"),
            ("urls=metrics,verbs=get", "is not a path"),
            (
                "groups=apps,resources=Deployments,verbs=get",
                "lowercase plural",
            ),
            (
                "groups=Apps,resources=deployments,verbs=get",
                "not an API group name",
            ),
            (
                "groups=apps,resources=deployments,verbs=get,namespace=Kube_System",
                "not a valid namespace",
            ),
            (
                "groups=apps,resources=deployments,verbs=get,namespace=a;b",
                "one value",
            ),
            (
                "groups=apps,resources=deployments,verbs=get,namespace=",
                "namespace: empty value; give one",
            ),
            (
                long_namespace.as_str(),
                "is 64 characters long, over the 63 a DNS label may have",
            ),
            ("groups=apps,resourceNames=x,verbs=get", "no resources"),
            (
                "groups=\"apps,resources=deployments,verbs=get",
                "not closed",
            ),
            ("groups={apps,resources=deployments,verbs=get", "not closed"),
        ];
        for (args, want) in cases {
            let err = error_of(&format!("// +kubebuilder:rbac:{args}\n"));
            assert!(err.contains("src/controllers/x.rs:1:4: "), "{args}: {err}");
            assert!(err.contains(want), "{args}: expected {want:?} in\n{err}");
        }
        // The core group's name is a hint for `groups=` only.
        let err =
            error_of("// +kubebuilder:rbac:groups=apps,resources=pods,verbs=get,namespace=\n");
        assert!(!err.contains("core API group"), "{err}");
    }

    /// A marker line in a string constant (every kind), a raw string or a block comment that
    /// comments code out grants nothing: the role is the one of the real marker alone.
    #[test]
    fn markers_in_literals_and_block_comments_grant_nothing() {
        let real = "// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get\n";
        let grant = "// +kubebuilder:rbac:groups=core,resources=secrets,verbs=delete";
        let hidden = format!(
            "const HELP: &str = \"\n{grant}\n\";\nconst RAW: &str = r#\"\n{grant}\n\"#;\n\
             const BYTES: &[u8] = b\"\n{grant}\n\";\nconst ONE: &str = \"{grant}\";\n\
             /*\n{grant}\nfn old() {{}}\n*/\n{real}"
        );
        let role = role_yaml(&hidden);
        assert_eq!(role, role_yaml(real));
        assert!(!role.contains("secrets"), "{role}");
    }

    #[test]
    fn misspelt_marker_names_are_errors() {
        let cases = [
            (
                "// +kubebuilder:rabc:groups=apps,resources=deployments,verbs=get",
                "did you mean `+kubebuilder:rbac:`?",
            ),
            (
                "// +kubebuilder:RBAC:groups=apps,resources=deployments,verbs=get",
                "case-sensitive",
            ),
            (
                "// +Kubebuilder:rbac:groups=apps,resources=deployments,verbs=get",
                "case-sensitive",
            ),
            (
                "// +kubebuilder:rbac groups=apps,resources=deployments,verbs=get",
                "must be followed by `:`",
            ),
            (
                "// +kubebuilder:rbac=groups=apps",
                "must be followed by `:`",
            ),
            (
                "// +kubebuiler:rbac:groups=apps,resources=deployments,verbs=get",
                "did you mean `+kubebuilder:rbac:`?",
            ),
            (
                "// +operator-rs:rbac:groups=apps,resources=deployments,verbs=get",
                "kubebuilder's spelling",
            ),
        ];
        for (line, want) in cases {
            let err = error_of(line);
            assert!(
                err.contains("src/controllers/x.rs:1:4: ") && err.contains(want),
                "{line}: expected {want:?} in\n{err}"
            );
        }
    }

    #[test]
    fn warnings_for_unknown_verbs_and_unwatchable_controllers() {
        let src = "// +kubebuilder:rbac:groups=cache.example.com,resources=memcacheds,verbs=get;lsit;watch\n\
                   // +kubebuilder:rbac:groups=core,resources=configmaps,resourceNames=cfg,verbs=get;create\n";
        let resources = vec![
            resource("cache", "example.com", "Memcached", "memcacheds", true),
            resource("apps", "", "Deployment", "deployments", true),
            resource("webapp", "example.com", "Guestbook", "guestbooks", false),
        ];
        let out = generate(
            &Mem::new(&[("src/controllers/memcached.rs", src)]),
            &project(resources),
        )
        .unwrap();
        let w = out.warnings.join("\n");
        assert!(
            w.contains("src/controllers/memcached.rs:1:4: `lsit` is not a verb Kubernetes checks")
                && w.contains("Did you mean `list`?"),
            "{w}"
        );
        assert!(
            w.contains("src/controllers/memcached.rs:2:4: resourceNames cannot restrict `create`"),
            "{w}"
        );
        assert!(
            w.contains("Deployment controller watch deployments (apps)"),
            "{w}"
        );
        assert!(
            w.contains(
                "// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch"
            ),
            "{w}"
        );
        assert!(!w.contains("Memcached controller"), "{w}");
        assert!(!w.contains("Guestbook"), "{w}");
        assert_eq!(out.warnings.len(), 3, "{w}");
    }

    /// Controllers of core kinds (PROJECT's group `core`, kubebuilder's spelling) are covered by
    /// markers that name the core group `core` or `""`, as controller-gen reads both; a core
    /// kind with no marker is warned about with the `groups=core` marker that fixes it.
    #[test]
    fn core_kinds_are_the_empty_group() {
        let src = "// +kubebuilder:rbac:groups=core,resources=configmaps,verbs=get;list;watch\n\
                   // +kubebuilder:rbac:groups=\"\",resources=secrets,verbs=get;list;watch\n\
                   // +kubebuilder:rbac:groups=core;apps,resources=pods;deployments,verbs=list;watch\n";
        let resources = vec![
            resource("core", "", "ConfigMap", "configmaps", true),
            resource("core", "", "Secret", "secrets", true),
            resource("core", "", "Pod", "pods", true),
            resource("apps", "", "Deployment", "deployments", true),
            resource("core", "", "Service", "services", true),
        ];
        let out = generate(
            &Mem::new(&[("src/controllers/x.rs", src)]),
            &project(resources),
        )
        .unwrap();
        let w = out.warnings.join("\n");
        assert_eq!(out.warnings.len(), 1, "{w}");
        assert!(
            w.contains("Service controller watch services (core group)")
                && w.contains(
                    "// +kubebuilder:rbac:groups=core,resources=services,verbs=get;list;watch"
                ),
            "{w}"
        );
        let yaml = &out.files[0].contents;
        assert!(!yaml.contains("- core"), "{yaml}");
        assert_eq!(
            yaml,
            "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: manager-role\nrules:\n\
             - apiGroups:\n  - \"\"\n  resources:\n  - configmaps\n  - secrets\n  verbs:\n  - get\n  - list\n  - watch\n\
             - apiGroups:\n  - \"\"\n  - apps\n  resources:\n  - deployments\n  - pods\n  verbs:\n  - list\n  - watch\n"
        );
    }

    #[test]
    fn only_rust_files_under_src_are_read() {
        let m = "// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get\n";
        let tree = Mem::new(&[("src/notes.md", m), ("tests/e2e.rs", m), ("src/lib.rs", "")]);
        let out = generate(&tree, &project(vec![])).unwrap();
        assert_eq!(out.files[0].contents, role_yaml(""));
    }

    #[test]
    fn output_is_stable() {
        assert_eq!(
            role_yaml(CONTROLLER_GEN_MARKERS),
            role_yaml(CONTROLLER_GEN_MARKERS)
        );
        assert_eq!(suggest("verb", &KEYS), Some("verbs"));
        assert_eq!(suggest("xyz", &KEYS), None);
        assert_eq!(osa_distance("rabc", "rbac"), 1);
    }
}
