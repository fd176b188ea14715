//! CRDs kube-apiserver refuses and CRDs it accepts, as Rust sources, shared by
//! `tests/crdgen_refusals.rs` (our verdict, message and line) and `tests/crdgen_apiserver.rs` (the
//! real API server's verdict on the same CRDs).
#![allow(dead_code)]

use operator_rs::project::{LAYOUT, Project};

pub const HEAD: &str = "use kube::{CustomResource, KubeSchema};\nuse kube::core::{Message, Rule};\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n";
/// Lines of [`HEAD`].
pub const HEAD_LINES: usize = 4;

pub fn project() -> Project {
    Project {
        version: "3".into(),
        domain: "example.com".into(),
        repo: String::new(),
        project_name: "cases".into(),
        crate_name: "cases".into(),
        layout: vec![LAYOUT.into()],
        cli_version: "0.1.0".into(),
        k8s_openapi_feature: "v1_37".into(),
        resources: Vec::new(),
        crd: Default::default(),
    }
}

/// One case: a kind `C` in group `<name>.example.com`.
pub struct Case {
    pub name: &'static str,
    /// The types after [`HEAD`].
    pub body: String,
    /// For a refusal: where the error points (first occurrence in `body`) and what it says.
    pub refusal: Option<(&'static str, &'static [&'static str])>,
}

fn kind(name: &str, spec: &str, extra: &str) -> String {
    format!(
        "#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, KubeSchema)]\n#[kube(group = \"{}.example.com\", version = \"v1\", kind = \"C\")]\npub struct CSpec {{\n{spec}}}\n{extra}",
        name.replace('_', "-")
    )
}

fn refused(
    name: &'static str,
    spec: &str,
    extra: &str,
    marker: &'static str,
    says: &'static [&'static str],
) -> Case {
    Case {
        name,
        body: kind(name, spec, extra),
        refusal: Some((marker, says)),
    }
}

fn accepted(name: &'static str, spec: &str, extra: &str) -> Case {
    Case {
        name,
        body: kind(name, spec, extra),
        refusal: None,
    }
}

const ITEM: &str = "#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\npub struct Item {\n    pub name: String,\n    pub port: i32,\n    pub label: Option<String>,\n}\n";

pub fn cases() -> Vec<Case> {
    vec![
        refused(
            "cel_syntax",
            "    #[x_kube(validation = \"self >\")]\n    pub replicas: i32,\n",
            "",
            "\"self >\"",
            &["does not compile", "self >"],
        ),
        refused(
            "cel_undefined_field",
            "    #[x_kube(validation = \"self.nope == 'x'\")]\n    pub item: Item,\n",
            ITEM,
            "\"self.nope",
            &["undefined field 'nope'"],
        ),
        refused(
            "cel_undeclared_variable",
            "    #[x_kube(validation = \"object.replicas > 0\")]\n    pub replicas: i32,\n",
            "",
            "\"object.",
            &["undeclared reference to 'object'"],
        ),
        refused(
            "cel_unknown_function",
            "    #[x_kube(validation = \"self.frobnicate()\")]\n    pub name: String,\n",
            "",
            "\"self.frob",
            &["undeclared reference to 'frobnicate'"],
        ),
        refused(
            "cel_scalar_select",
            "    #[x_kube(validation = \"self.size > 1\")]\n    pub name: String,\n",
            "",
            "\"self.size",
            &["does not support field selection"],
        ),
        refused(
            "cel_not_bool",
            "    #[x_kube(validation = \"self.name\")]\n    pub item: Item,\n",
            ITEM,
            "\"self.name\"",
            &["evaluates to string, not bool"],
        ),
        refused(
            "cel_old_self_in_list",
            "    pub items: Vec<Versioned>,\n",
            "#[derive(Clone, Debug, Serialize, Deserialize, KubeSchema)]\npub struct Versioned {\n    #[x_kube(validation = \"self == oldSelf\")]\n    pub name: String,\n}\n",
            "\"self == oldSelf\"",
            &["uncorrelatable"],
        ),
        refused(
            "cel_optional_old_self_unused",
            "    #[x_kube(validation = Rule::new(\"self > 0\").optional_old_self(true))]\n    pub replicas: i32,\n",
            "",
            "Rule::new(\"self > 0\")",
            &["optionalOldSelf", "does not use oldSelf"],
        ),
        refused(
            "cel_message_expression",
            "    #[x_kube(validation = Rule::new(\"self > 0\").message(Message::Expression(\"'unterminated\".into())))]\n    pub replicas: i32,\n",
            "",
            "Rule::new(\"self > 0\").message",
            &["messageExpression", "does not compile"],
        ),
        refused(
            "cel_cost",
            "    #[x_kube(validation = \"self.all(x, self.all(y, x == y))\")]\n    pub names: Vec<String>,\n",
            "",
            "\"self.all(x",
            &["estimated cost", "exceeds the budget"],
        ),
        refused(
            "kube_rule_on_root",
            "    pub replicas: i32,\n",
            "",
            "\"self.spec.nope",
            &["undefined field 'nope'"],
        ),
        refused(
            "list_map_key_optional",
            "    #[schemars(extend(\"x-kubernetes-list-type\" = \"map\", \"x-kubernetes-list-map-keys\" = [\"label\"]))]\n    pub items: Vec<Item>,\n",
            ITEM,
            "CSpec",
            &["list-map key `label` must be required or have a default"],
        ),
        refused(
            "list_map_keys_without_map",
            "    #[schemars(extend(\"x-kubernetes-list-type\" = \"atomic\", \"x-kubernetes-list-map-keys\" = [\"name\"]))]\n    pub items: Vec<Item>,\n",
            ITEM,
            "CSpec",
            &["`x-kubernetes-list-map-keys` may only be set with `x-kubernetes-list-type: map`"],
        ),
        refused(
            "list_set_of_objects",
            "    #[schemars(extend(\"x-kubernetes-list-type\" = \"set\"))]\n    pub items: Vec<Item>,\n",
            ITEM,
            "CSpec",
            &["`x-kubernetes-list-type: set` needs scalar items"],
        ),
        accepted(
            "ok_rules",
            "    #[x_kube(validation = \"self >= 0 && self <= 100\")]\n    pub replicas: i32,\n    #[x_kube(validation = Rule::new(\"self == oldSelf\").message(\"immutable\"))]\n    pub name: String,\n    #[x_kube(validation = \"has(self.label) ? self.label.startsWith('a') : true\")]\n    pub item: Item,\n    #[schemars(length(max = 16))]\n    #[x_kube(validation = \"self.all(x, x.size() < 64)\")]\n    pub names: Vec<String>,\n    #[schemars(length(max = 63))]\n    #[x_kube(validation = \"self.matches('^[a-z]+$')\")]\n    pub slug: String,\n    #[x_kube(validation = Rule::new(\"self.size() > 0\").message(Message::Expression(\"'tags must not be empty'\".into())))]\n    pub tags: Vec<String>,\n",
            ITEM,
        ),
        accepted(
            "ok_list_map",
            "    #[schemars(extend(\"x-kubernetes-list-type\" = \"map\", \"x-kubernetes-list-map-keys\" = [\"name\", \"port\"]))]\n    pub items: Vec<Item>,\n    #[schemars(extend(\"x-kubernetes-list-type\" = \"set\"))]\n    pub names: Vec<String>,\n",
            ITEM,
        ),
    ]
    .into_iter()
    .map(|mut c| {
        if c.name == "kube_rule_on_root" {
            c.body = c.body.replace(
                "kind = \"C\")]",
                "kind = \"C\", validation = \"self.spec.nope == 1\")]",
            );
        }
        c
    })
    .collect()
}

/// A temp crate with `HEAD` + `body` as its `src/lib.rs`.
pub fn crate_of(body: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), format!("{HEAD}{body}")).unwrap();
    std::fs::write(dir.path().join("PROJECT"), project().render().unwrap()).unwrap();
    dir
}

/// The 1-based line and column of the first `marker` in the crate's `src/lib.rs`.
pub fn pos(body: &str, marker: &str) -> (usize, usize) {
    for (i, l) in body.lines().enumerate() {
        if let Some(c) = l.find(marker) {
            return (i + 1 + HEAD_LINES, c + 1);
        }
    }
    panic!("marker {marker} not in body")
}
