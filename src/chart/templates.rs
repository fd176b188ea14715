//! The chart's templates and default values, built from the [`Model`]: each object of `config/`
//! as `config/default` renders it, with its Helm parts (toggles, values, the release's
//! namespace) as nodes; the manager's Deployment built from config/manager's with every flag,
//! port, image and environment variable taken from the values.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::model::{Model, Object, cluster_scoped};
use super::node::{Entry, Item, Node, Target, expr, map, print, seq};
use super::values::{self, Values};

/// `{{ .Release.Namespace }}`.
fn release_namespace() -> Node {
    expr(".Release.Namespace")
}

/// What an object of a template is rendered under.
#[derive(Debug, Clone, PartialEq)]
pub enum Guard {
    /// Only when this Helm condition holds (`{{- if <cond> }}`).
    If(String),
    /// When `when` holds, once for each namespace of `$ns := <list>` (`{{- range ... }}`): the
    /// object's Helm parts name the root context as `$`.
    Range { when: String, over: String },
}

/// One template: its path under `templates/` and the objects in it, each under its guard.
pub struct Template {
    pub path: String,
    pub objects: Vec<(Option<Guard>, Node)>,
}

impl Template {
    /// The template's text.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (guard, node) in &self.objects {
            match guard {
                Some(Guard::If(c)) => out.push_str(&format!("{{{{- if {c} }}}}\n")),
                Some(Guard::Range { when, over }) => {
                    out.push_str(&format!("{{{{- if {when} }}}}\n{{{{- range {over} }}}}\n"))
                }
                None => {}
            }
            out.push_str("---\n");
            out.push_str(&print(node, Target::Template));
            match guard {
                Some(Guard::If(_)) => out.push_str("{{- end }}\n"),
                Some(Guard::Range { .. }) => out.push_str("{{- end }}\n{{- end }}\n"),
                None => {}
            }
        }
        out
    }
}

/// `and a b ...` of Helm conditions (one needs no `and`).
fn all(conds: &[&str]) -> String {
    match conds {
        [one] => one.to_string(),
        many => format!(
            "and {}",
            many.iter()
                .map(|c| format!("({c})"))
                .collect::<Vec<_>>()
                .join(" ")
        ),
    }
}

/// An object of config/ as `config/default` makes it (name prefix, the manager's namespace,
/// bindings to the manager's ServiceAccount), with the release's labels.
fn kustomized(o: &Object, prefix: &str) -> Node {
    let mut v = o.value.clone();
    let kind = o.kind().to_string();
    let prefixed = |name: &str| format!("{prefix}{name}");
    if !matches!(kind.as_str(), "CustomResourceDefinition" | "Namespace")
        && let Some(name) = v["metadata"]["name"].as_str()
    {
        v["metadata"]["name"] = json!(prefixed(name));
    }
    if let Some(name) = v["roleRef"]["name"].as_str() {
        v["roleRef"]["name"] = json!(prefixed(name));
    }
    if let Some(name) = v["spec"]["issuerRef"]["name"].as_str() {
        v["spec"]["issuerRef"]["name"] = json!(prefixed(name));
    }
    if let Some(hooks) = v.get_mut("webhooks").and_then(Value::as_array_mut) {
        for h in hooks {
            if let Some(name) = h["clientConfig"]["service"]["name"].as_str() {
                h["clientConfig"]["service"]["name"] = json!(prefixed(name));
            }
        }
    }
    if let Some(subjects) = v.get_mut("subjects").and_then(Value::as_array_mut) {
        for s in subjects {
            if s["kind"] == "ServiceAccount"
                && let Some(name) = s["name"].as_str()
            {
                s["name"] = json!(prefixed(name));
            }
        }
    }
    let mut node = Node::from(v);
    // Namespaces: the placeholder `system`, or none, is the release's.
    let namespace = o.value["metadata"]["namespace"].as_str();
    if !cluster_scoped(&kind)
        && matches!(namespace, None | Some("system"))
        && let Some(meta) = node.get_mut("metadata")
    {
        meta.set("namespace", release_namespace());
    }
    if let Some(Node::Seq(subjects)) = node.get_mut("subjects") {
        for s in subjects {
            if s.node
                .at_mut(&["kind"])
                .and_then(|k| k.as_str().map(str::to_string))
                == Some("ServiceAccount".into())
            {
                s.node.set("namespace", release_namespace());
            }
        }
    }
    if let Some(Node::Seq(hooks)) = node.get_mut("webhooks") {
        for h in hooks {
            if let Some(service) = h.node.at_mut(&["clientConfig", "service"]) {
                service.set("namespace", release_namespace());
            }
        }
    }
    if let Some(labels) = node.at_mut(&["metadata", "labels"]) {
        labels.set("app.kubernetes.io/managed-by", expr(".Release.Service"));
        labels.set("app.kubernetes.io/instance", expr(".Release.Name"));
    }
    node
}

/// The annotation cert-manager's CA injector reads, when cert-manager is on.
fn inject_ca(node: &mut Node, prefix: &str) {
    let Some(meta) = node.get_mut("metadata") else {
        return;
    };
    let annotation = Entry::new(
        "cert-manager.io/inject-ca-from",
        Node::Template(format!("{{{{ .Release.Namespace }}}}/{prefix}serving-cert")),
    )
    .when(".Values.certManager.enabled");
    match meta.get_mut("annotations") {
        Some(Node::Map(entries)) => entries.push(annotation),
        _ => meta.set("annotations", Node::Map(vec![annotation])),
    }
}

/// A webhook's `namespaceSelector` values naming config/default's namespace for the manager
/// (`<project>-system`) name the release's namespace instead.
fn own_namespace_is_the_releases(node: &mut Node, project: &str) {
    let own = format!("{project}-system");
    let Some(Node::Seq(hooks)) = node.get_mut("webhooks") else {
        return;
    };
    for h in hooks {
        let Some(Node::Seq(exprs)) = h.node.at_mut(&["namespaceSelector", "matchExpressions"])
        else {
            continue;
        };
        for e in exprs {
            if let Some(Node::Seq(values)) = e.node.get_mut("values") {
                for v in values {
                    if v.node.as_str() == Some(own.as_str()) {
                        v.node = release_namespace();
                    }
                }
            }
        }
    }
}

/// The chart's templates and the values' defaults.
pub fn build(model: &Model) -> (Vec<Template>, Values) {
    let prefix = format!("{}-", model.project_name);
    let p = prefix.as_str();
    let mut out = Vec::new();
    let stem = |o: &Object| {
        o.file
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    // Objects grouped by their config file, one template each.
    let mut grouped = |dir: &str,
                       objects: &[Object],
                       cond: Option<String>,
                       each: &dyn Fn(&Object, Node) -> Node| {
        let mut files: BTreeMap<String, Vec<(Option<Guard>, Node)>> = BTreeMap::new();
        for o in objects {
            let node = each(o, kustomized(o, p));
            files
                .entry(format!("{dir}/{}", stem(o)))
                .or_default()
                .push((cond.clone().map(Guard::If), node));
        }
        for (path, objects) in files {
            out.push(Template { path, objects });
        }
    };

    grouped(
        "crd",
        &model.crds,
        Some(".Values.crd.enabled".into()),
        &|o, node| crd(model, o, node, p),
    );
    // A cluster-scoped project's manager ClusterRole and binding are also Roles (rbac.namespaced).
    let (manager_rbac, other_rbac): (Vec<Object>, Vec<Object>) =
        (model.rbac.iter().cloned()).partition(|o| !model.namespaced && is_manager_cluster_rbac(o));
    grouped("rbac", &other_rbac, None, &|_, n| n);
    grouped(
        "rbac",
        &model.rbac_helpers,
        Some(".Values.rbacHelpers.enabled".into()),
        &|_, n| n,
    );
    grouped(
        "metrics",
        std::slice::from_ref(&model.metrics_service),
        Some(".Values.metrics.enabled".into()),
        &|_, mut n| {
            if let Some(Node::Seq(ports)) = n.at_mut(&["spec", "ports"])
                && let Some(first) = ports.first_mut()
            {
                first.node.set("port", expr(".Values.metrics.port"));
            }
            n
        },
    );
    if let Some(m) = &model.monitor {
        grouped(
            "prometheus",
            std::slice::from_ref(m),
            Some(all(&[
                ".Values.prometheus.enabled",
                ".Values.metrics.enabled",
            ])),
            &|_, n| n,
        );
    }
    let (metric_policies, webhook_policies): (Vec<_>, Vec<_>) = (model.network_policies.iter())
        .cloned()
        .partition(|o| !o.name().contains("webhook"));
    grouped(
        "network-policy",
        &metric_policies,
        Some(all(&[
            ".Values.networkPolicy.enabled",
            ".Values.metrics.enabled",
        ])),
        &|_, n| n,
    );
    grouped(
        "network-policy",
        &webhook_policies,
        Some(all(&[
            ".Values.networkPolicy.enabled",
            ".Values.webhook.enabled",
        ])),
        &|_, n| n,
    );
    // A sharded manager's PodDisruptionBudget: the same selector as the Deployment's.
    if let Some(pdb) = &model.disruption_budget {
        grouped("manager", std::slice::from_ref(pdb), None, &|_, n| n);
    }
    if model.has_webhooks() {
        grouped(
            "webhook",
            &model.webhooks,
            Some(".Values.webhook.enabled".into()),
            &|o, mut n| {
                if o.kind().ends_with("WebhookConfiguration") {
                    inject_ca(&mut n, p);
                    own_namespace_is_the_releases(&mut n, &model.project_name);
                }
                if o.kind() == "Service"
                    && let Some(Node::Seq(ports)) = n.at_mut(&["spec", "ports"])
                    && let Some(first) = ports.first_mut()
                {
                    first.node.set("targetPort", expr(".Values.webhook.port"));
                }
                n
            },
        );
        grouped(
            "webhook",
            &model.webhook_self_managed_rbac,
            Some(all(&[
                ".Values.webhook.enabled",
                "not .Values.certManager.enabled",
            ])),
            &|_, n| n,
        );
        out.push(cert_manager(p, &model.project_name));
    }
    for (path, guard, node) in namespaced_manager_rbac(model, &manager_rbac, p) {
        match out.iter_mut().find(|t| t.path == path) {
            Some(t) => t.objects.push((guard, node)),
            None => out.push(Template {
                path,
                objects: vec![(guard, node)],
            }),
        }
    }
    let values = default_values(model);
    out.push(deployment(model, p));
    (out, values)
}

/// The manager's own ClusterRole (`manager-role`, of `generate rbac`) and its ClusterRoleBinding.
fn is_manager_cluster_rbac(o: &Object) -> bool {
    match o.kind() {
        "ClusterRole" => o.name() == "manager-role",
        "ClusterRoleBinding" => {
            o.value["roleRef"]["kind"] == "ClusterRole"
                && o.value["roleRef"]["name"] == "manager-role"
        }
        _ => false,
    }
}

/// The namespaces the manager watches (and, with `rbac.namespaced`, holds its Role in): those of
/// `manager.watchNamespaces`, else the release's.
const WATCHED_NAMESPACES: &str =
    "(.Values.manager.watchNamespaces | default (list .Release.Namespace) | uniq)";

/// A rule of a ClusterRole split in two: what a Role can hold (resources that have a
/// namespace), and what only a ClusterRole can (URLs, cluster-scoped resources, `*`).
fn split_rule(
    rule: &Value,
    cluster: &std::collections::BTreeSet<(String, String)>,
) -> (Option<Value>, Option<Value>) {
    if rule.get("nonResourceURLs").is_some_and(|u| !u.is_null()) {
        return (None, Some(rule.clone()));
    }
    let groups: Vec<&str> = (rule["apiGroups"].as_array().into_iter().flatten())
        .filter_map(Value::as_str)
        .collect();
    let (mut namespaced, mut cluster_wide) = (Vec::new(), Vec::new());
    for r in (rule["resources"].as_array().into_iter().flatten()).filter_map(Value::as_str) {
        let base = r.split('/').next().unwrap_or(r);
        let wide = base == "*"
            || groups
                .iter()
                .any(|g| *g == "*" || cluster.contains(&(g.to_string(), base.to_string())));
        if wide {
            cluster_wide.push(r)
        } else {
            namespaced.push(r)
        }
    }
    let with = |resources: Vec<&str>| {
        (!resources.is_empty()).then(|| {
            let mut r = rule.clone();
            r["resources"] = json!(resources);
            r
        })
    };
    (with(namespaced), with(cluster_wide))
}

/// The manager's ClusterRole and ClusterRoleBinding of a cluster-scoped project, as the chart
/// renders them (path, guard, object): as they are unless `rbac.namespaced`; with it, the
/// rules a Role can hold in a Role (and RoleBinding) in each watched namespace, and only the
/// others left in the ClusterRole (bound as before).
fn namespaced_manager_rbac(
    model: &Model,
    objects: &[Object],
    p: &str,
) -> Vec<(String, Option<Guard>, Node)> {
    let path = |o: &Object| {
        format!(
            "rbac/{}",
            o.file
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default()
        )
    };
    let not_namespaced = Some(Guard::If("not .Values.rbac.namespaced".into()));
    let in_each = || {
        Some(Guard::Range {
            when: ".Values.rbac.namespaced".into(),
            over: format!("$ns := {WATCHED_NAMESPACES}"),
        })
    };
    let (mut role_rules, mut cluster_rules) = (Vec::new(), Vec::new());
    for o in objects.iter().filter(|o| o.kind() == "ClusterRole") {
        for rule in o.value["rules"].as_array().into_iter().flatten() {
            let (n, c) = split_rule(rule, &model.cluster_resources);
            role_rules.extend(n);
            cluster_rules.extend(c);
        }
    }
    let mut out = Vec::new();
    for o in objects {
        let node = kustomized(o, p);
        if o.kind() == "ClusterRole" {
            out.push((path(o), not_namespaced.clone(), node.clone()));
            if !cluster_rules.is_empty() {
                let mut wide = node;
                wide.set("rules", Node::from(json!(cluster_rules)));
                out.push((
                    path(o),
                    Some(Guard::If(".Values.rbac.namespaced".into())),
                    wide,
                ));
            }
            if !role_rules.is_empty() {
                let mut role = o.clone();
                role.value["kind"] = json!("Role");
                role.value["rules"] = json!(role_rules);
                let mut node = kustomized(&role, p);
                in_namespace(&mut node);
                out.push((path(o), in_each(), node));
            }
        } else {
            let guard = if cluster_rules.is_empty() {
                not_namespaced.clone()
            } else {
                None
            };
            out.push((path(o), guard, node));
            if !role_rules.is_empty() {
                let mut binding = o.clone();
                binding.value["kind"] = json!("RoleBinding");
                binding.value["roleRef"]["kind"] = json!("Role");
                let mut node = kustomized(&binding, p);
                in_namespace(&mut node);
                out.push((path(o), in_each(), node));
            }
        }
    }
    out
}

/// An object rendered inside `range $ns := ...`: in the namespace `$ns`, its Helm parts naming
/// the root context (`$.Release...`).
fn in_namespace(node: &mut Node) {
    fn rooted(node: &mut Node) {
        match node {
            Node::Expr(e) | Node::ToYaml(e)
                if e.starts_with(".Release.") || e.starts_with(".Values.") =>
            {
                e.insert(0, '$')
            }
            Node::Template(t) => *t = t.replace("{{ .", "{{ $."),
            Node::Map(entries) => entries.iter_mut().for_each(|e| rooted(&mut e.node)),
            Node::Seq(items) => items.iter_mut().for_each(|i| rooted(&mut i.node)),
            _ => {}
        }
    }
    rooted(node);
    if let Some(meta) = node.get_mut("metadata") {
        meta.set("namespace", expr("$ns"));
    }
}

/// A CRD of the chart (`node`, the object `o` kustomized): `helm.sh/resource-policy: keep`
/// with `crd.keep`, and, for a kind converted by webhook, the conversion webhook (with
/// `webhook.enabled`) and cert-manager's CA injection (with `certManager.enabled`).
fn crd(model: &Model, o: &Object, mut node: Node, p: &str) -> Node {
    let meta = node.get_mut("metadata").expect("a CRD has metadata");
    let keep = Entry::new("helm.sh/resource-policy", "keep").when(".Values.crd.keep");
    match meta.get_mut("annotations") {
        Some(Node::Map(entries)) => entries.push(keep),
        _ => meta.set_entry(Entry::new("annotations", Node::Map(vec![keep]))),
    }
    if model.conversion_crds.iter().any(|c| c == o.name()) {
        inject_ca(&mut node, p);
        let conversion = map([
            ("strategy", Node::from("Webhook")),
            (
                "webhook",
                map([
                    (
                        "clientConfig",
                        map([(
                            "service",
                            map([
                                ("name", Node::from(format!("{p}webhook-service"))),
                                ("namespace", release_namespace()),
                                ("path", Node::from("/convert")),
                            ]),
                        )]),
                    ),
                    ("conversionReviewVersions", seq([Node::from("v1")])),
                ]),
            ),
        ]);
        if let Some(spec) = node.get_mut("spec") {
            spec.set_entry(Entry::new("conversion", conversion).when(".Values.webhook.enabled"));
        }
    }
    node
}

/// The templates of the CRD-only chart (`generate chart --crds-chart`): the CRDs, as the main
/// chart renders them with `crd.enabled`.
pub fn build_crds_chart(model: &Model) -> Vec<Template> {
    let p = format!("{}-", model.project_name);
    let mut files: BTreeMap<String, Vec<(Option<Guard>, Node)>> = BTreeMap::new();
    for o in &model.crds {
        let stem = o
            .file
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        files
            .entry(format!("crd/{stem}"))
            .or_default()
            .push((None, crd(model, o, kustomized(o, &p), &p)));
    }
    files
        .into_iter()
        .map(|(path, objects)| Template { path, objects })
        .collect()
}

/// The webhook serving certificate and its self-signed Issuer, with cert-manager.
fn cert_manager(p: &str, name: &str) -> Template {
    let labels = || {
        map([
            ("app.kubernetes.io/name", Node::from(name)),
            ("app.kubernetes.io/managed-by", expr(".Release.Service")),
            ("app.kubernetes.io/instance", expr(".Release.Name")),
        ])
    };
    let meta = |n: &str| {
        map([
            ("labels", labels()),
            ("name", Node::from(format!("{p}{n}"))),
            ("namespace", release_namespace()),
        ])
    };
    let issuer = map([
        ("apiVersion", Node::from("cert-manager.io/v1")),
        ("kind", Node::from("Issuer")),
        ("metadata", meta("selfsigned-issuer")),
        ("spec", map([("selfSigned", Node::Data(json!({})))])),
    ]);
    let dns = |suffix: &str| {
        Node::Template(format!(
            "{p}webhook-service.{{{{ .Release.Namespace }}}}.svc{suffix}"
        ))
    };
    let certificate = map([
        ("apiVersion", Node::from("cert-manager.io/v1")),
        ("kind", Node::from("Certificate")),
        ("metadata", meta("serving-cert")),
        (
            "spec",
            map([
                ("dnsNames", seq([dns(""), dns(".cluster.local")])),
                (
                    "issuerRef",
                    map([
                        ("kind", Node::from("Issuer")),
                        ("name", Node::from(format!("{p}selfsigned-issuer"))),
                    ]),
                ),
                ("secretName", Node::from("webhook-server-cert")),
            ]),
        ),
    ]);
    let cond = Some(all(&[
        ".Values.webhook.enabled",
        ".Values.certManager.enabled",
    ]));
    let cond = cond.map(Guard::If);
    Template {
        path: "cert-manager/certificate.yaml".into(),
        objects: vec![(cond.clone(), issuer), (cond, certificate)],
    }
}

/// The flags the chart sets from the values (any other flag of config/manager's container goes
/// to `manager.args`).
const MANAGED_FLAGS: &[&str] = &[
    "--leader-elect",
    "--health-probe-bind-address",
    "--metrics-bind-address",
    "--metrics-secure",
    "--webhook-bind-address",
    "--webhook-cert-mode",
    "--webhook-service-name",
    "--watch-namespace",
];

fn flag_name(arg: &str) -> &str {
    arg.split('=').next().unwrap_or(arg)
}

/// The manager container of config/manager's Deployment.
fn container(model: &Model) -> &Value {
    let containers = &model.deployment.value["spec"]["template"]["spec"]["containers"];
    containers
        .as_array()
        .and_then(|c| c.iter().find(|c| c["name"] == "manager").or(c.first()))
        .unwrap_or(&Value::Null)
}

/// The values' defaults: what config/ deploys.
pub fn default_values(model: &Model) -> Values {
    let c = container(model);
    let pod = &model.deployment.value["spec"]["template"]["spec"];
    let object = |v: &Value| -> BTreeMap<String, Value> {
        v.as_object()
            .map(|o| o.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default()
    };
    let args: Vec<&str> = (c["args"].as_array().into_iter().flatten())
        .filter_map(Value::as_str)
        .collect();
    let env = (c["env"].as_array().into_iter().flatten())
        .filter(|e| !values::RESERVED_ENV.contains(&e["name"].as_str().unwrap_or_default()))
        .filter_map(|e| {
            Some((
                e["name"].as_str()?.to_string(),
                e["value"].as_str()?.to_string(),
            ))
        })
        .collect();
    let image = c["image"].as_str().unwrap_or("controller:latest");
    let (repository, tag) = split_image(image);
    Values {
        manager: values::Manager {
            replicas: model.deployment.value["spec"]["replicas"]
                .as_u64()
                .unwrap_or(1) as u32,
            image: values::Image {
                repository,
                tag,
                pull_policy: values::PullPolicy::IfNotPresent,
            },
            leader_elect: args.contains(&"--leader-elect"),
            watch_namespaces: Vec::new(),
            health_probe: values::Port { port: 8081 },
            args: (args.iter())
                .filter(|a| !MANAGED_FLAGS.contains(&flag_name(a)))
                .map(|a| a.to_string())
                .collect(),
            env,
            image_pull_secrets: Vec::new(),
            pod_security_context: object(&pod["securityContext"]),
            security_context: object(&c["securityContext"]),
            resources: object(&c["resources"]),
            node_selector: BTreeMap::new(),
            tolerations: Vec::new(),
            affinity: BTreeMap::new(),
        },
        rbac: values::Rbac {
            namespaced: model.namespaced,
        },
        rbac_helpers: values::Toggle { enabled: false },
        crd: values::Crd {
            enabled: true,
            keep: true,
        },
        metrics: values::Metrics {
            enabled: true,
            secure: true,
            port: 8443,
        },
        webhook: values::Webhook {
            enabled: model.has_webhooks(),
            port: 9443,
        },
        cert_manager: values::Toggle {
            enabled: model.has_webhooks(),
        },
        prometheus: values::Toggle { enabled: false },
        network_policy: values::Toggle { enabled: false },
    }
}

/// `repo:tag` or `repo@sha256:...` apart (a port in the registry host is not a tag).
pub fn split_image(image: &str) -> (String, String) {
    if let Some((repo, digest)) = image.split_once('@') {
        return (repo.to_string(), digest.to_string());
    }
    match image.rsplit_once(':') {
        Some((repo, tag)) if !tag.contains('/') => (repo.to_string(), tag.to_string()),
        _ => (image.to_string(), "latest".to_string()),
    }
}

/// The manager's Deployment.
fn deployment(model: &Model, p: &str) -> Template {
    let d = &model.deployment.value;
    let c = container(model);
    let pod = &d["spec"]["template"]["spec"];
    let webhooks = model.has_webhooks();
    let tpl = |s: &str| Node::Template(s.to_string());
    let mut args = vec![
        Item::new("--leader-elect").when(".Values.manager.leaderElect"),
        Item::new(tpl(
            "--health-probe-bind-address=:{{ .Values.manager.healthProbe.port }}",
        )),
        Item::new(tpl("--metrics-bind-address=:{{ .Values.metrics.port }}"))
            .when(".Values.metrics.enabled"),
        Item::new("--metrics-bind-address=0").when("not .Values.metrics.enabled"),
        Item::new("--metrics-secure=false").when(all(&[
            ".Values.metrics.enabled",
            "not .Values.metrics.secure",
        ])),
    ];
    if webhooks {
        args.extend([
            Item::new(tpl("--webhook-bind-address=:{{ .Values.webhook.port }}"))
                .when(".Values.webhook.enabled"),
            Item::new("--webhook-bind-address=0").when("not .Values.webhook.enabled"),
            Item::new(seq_lines(&[
                "- --webhook-cert-mode=self-managed",
                &format!("- --webhook-service-name={p}webhook-service"),
            ]))
            .when(all(&[
                ".Values.webhook.enabled",
                "not .Values.certManager.enabled",
            ])),
        ]);
    }
    // With rbac.namespaced, the manager watches where its Roles are (the release's namespace
    // unless manager.watchNamespaces names others).
    args.push(if model.namespaced {
        Item::new(tpl(
            "--watch-namespace={{ join \",\" .Values.manager.watchNamespaces }}",
        ))
        .when(".Values.manager.watchNamespaces")
    } else {
        Item::new(Node::Template(format!(
            "--watch-namespace={{{{ join \",\" {WATCHED_NAMESPACES} }}}}"
        )))
        .when("or .Values.manager.watchNamespaces .Values.rbac.namespaced")
    });
    args.push(Item::new(Node::Lines(vec![
        "{{- range .Values.manager.args }}".into(),
        "- {{ . | quote }}".into(),
        "{{- end }}".into(),
    ])));
    // The downward API's variables from config/manager, then the values' (by name: a map).
    let mut env: Vec<Item> = (c["env"].as_array().into_iter().flatten())
        .filter(|e| e.get("valueFrom").is_some())
        .map(|e| Item::new(Node::from(e.clone())))
        .collect();
    env.push(Item::new(Node::Lines(vec![
        "{{- range $name, $value := .Values.manager.env }}".into(),
        "- name: {{ $name | quote }}".into(),
        "  value: {{ $value | quote }}".into(),
        "{{- end }}".into(),
    ])));
    let port = |name: &str, value: &str| {
        map([
            ("name", Node::from(name)),
            ("containerPort", expr(value)),
            ("protocol", Node::from("TCP")),
        ])
    };
    let mut ports = vec![
        Item::new(port("metrics", ".Values.metrics.port")).when(".Values.metrics.enabled"),
        Item::new(port("health", ".Values.manager.healthProbe.port")),
    ];
    if webhooks {
        ports.push(
            Item::new(port("webhook-server", ".Values.webhook.port"))
                .when(".Values.webhook.enabled"),
        );
    }
    let probe = |v: &Value| {
        let mut n = Node::from(v.clone());
        if let Some(get) = n.get_mut("httpGet") {
            get.set("port", expr(".Values.manager.healthProbe.port"));
        }
        n
    };
    let mut container = vec![
        Entry::new("name", "manager"),
        Entry::new(
            "image",
            tpl(
                "{{ .Values.manager.image.repository }}{{ if hasPrefix \"sha256:\" .Values.manager.image.tag }}@{{ else }}:{{ end }}{{ .Values.manager.image.tag }}",
            ),
        ),
        Entry::new("imagePullPolicy", expr(".Values.manager.image.pullPolicy")),
    ];
    if !c["command"].is_null() {
        container.push(Entry::new("command", Node::from(c["command"].clone())));
    }
    container.extend([
        Entry::new("args", Node::Seq(args)),
        Entry::new("env", Node::Seq(env)),
        Entry::new("ports", Node::Seq(ports)),
        Entry::new(
            "securityContext",
            Node::ToYaml(".Values.manager.securityContext".into()),
        ),
    ]);
    if !c["livenessProbe"].is_null() {
        container.push(Entry::new("livenessProbe", probe(&c["livenessProbe"])));
    }
    if !c["readinessProbe"].is_null() {
        container.push(Entry::new("readinessProbe", probe(&c["readinessProbe"])));
    }
    container.push(Entry::new(
        "resources",
        Node::ToYaml(".Values.manager.resources".into()),
    ));
    let certs = all(&[".Values.webhook.enabled", ".Values.certManager.enabled"]);
    if webhooks {
        container.push(
            Entry::new(
                "volumeMounts",
                seq([map([
                    (
                        "mountPath",
                        Node::from("/tmp/k8s-webhook-server/serving-certs"),
                    ),
                    ("name", Node::from("webhook-certs")),
                    ("readOnly", Node::Data(json!(true))),
                ])]),
            )
            .when(certs.clone()),
        );
    }
    let optional = |key: &str, value: &str| {
        Entry::new(key, Node::ToYaml(format!(".Values.manager.{value}")))
            .when(format!(".Values.manager.{value}"))
    };
    let mut spec = vec![
        Entry::new(
            "securityContext",
            Node::ToYaml(".Values.manager.podSecurityContext".into()),
        ),
        optional("imagePullSecrets", "imagePullSecrets"),
        optional("nodeSelector", "nodeSelector"),
        optional("tolerations", "tolerations"),
        optional("affinity", "affinity"),
        Entry::new("containers", seq([Node::Map(container)])),
        Entry::new(
            "serviceAccountName",
            Node::from(format!(
                "{p}{}",
                pod["serviceAccountName"]
                    .as_str()
                    .unwrap_or("controller-manager")
            )),
        ),
    ];
    if !pod["terminationGracePeriodSeconds"].is_null() {
        spec.push(Entry::new(
            "terminationGracePeriodSeconds",
            Node::Data(pod["terminationGracePeriodSeconds"].clone()),
        ));
    }
    if webhooks {
        spec.push(
            Entry::new(
                "volumes",
                seq([map([
                    ("name", Node::from("webhook-certs")),
                    (
                        "secret",
                        map([("secretName", Node::from("webhook-server-cert"))]),
                    ),
                ])]),
            )
            .when(certs),
        );
    }
    let mut template_meta = Node::from(d["spec"]["template"]["metadata"].clone());
    if let Some(labels) = template_meta.get_mut("labels") {
        labels.set("app.kubernetes.io/instance", expr(".Release.Name"));
    }
    let deployment_object = Object {
        file: model.deployment.file.clone(),
        value: json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": d["metadata"].clone(),
        }),
    };
    let mut node = kustomized(&deployment_object, p);
    node.set(
        "spec",
        map([
            ("replicas", expr(".Values.manager.replicas")),
            ("selector", Node::from(d["spec"]["selector"].clone())),
            (
                "template",
                map([("metadata", template_meta), ("spec", Node::Map(spec))]),
            ),
        ]),
    );
    Template {
        path: "manager/manager.yaml".into(),
        objects: vec![(None, node)],
    }
}

/// Sequence items written as template lines (several flags under one condition).
fn seq_lines(lines: &[&str]) -> Node {
    Node::Lines(lines.iter().map(|l| l.to_string()).collect())
}
