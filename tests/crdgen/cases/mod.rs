//! CRDs kube-apiserver refuses and CRDs it accepts, as Rust sources, shared by
//! `tests/crdgen/refusals.rs` (our verdict, message and line) and `tests/apiserver/crds.rs` (the
//! real API server's verdict on the same CRDs).
#![allow(dead_code)]

pub mod compiled;
pub mod recorded;
pub mod schemas;

use operator_rs::project::{LAYOUT, Project};

pub const HEAD: &str = "use kube::{CustomResource, KubeSchema};\nuse kube::core::{Message, Reason, Rule};\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n";
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
        cli_source: String::new(),
        scaffold: None,
        commands: Vec::new(),
        k8s_openapi_feature: "v1_37".into(),
        namespaced: false,
        multigroup: false,
        sharded: false,
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
            &["evaluates to string", "must evaluate to a bool"],
        ),
        refused(
            "cel_old_self_in_list",
            "    pub items: Vec<Versioned>,\n",
            "#[derive(Clone, Debug, Serialize, Deserialize, KubeSchema)]\npub struct Versioned {\n    #[schemars(length(max = 63))]\n    #[x_kube(validation = \"self == oldSelf\")]\n    pub name: String,\n}\n",
            "\"self == oldSelf\"",
            &["uncorrelatable"],
        ),
        refused(
            "cel_optional_old_self_unused",
            "    #[x_kube(validation = Rule::new(\"self > 0\").optional_old_self(true))]\n    pub replicas: i32,\n",
            "",
            "Rule::new(\"self > 0\")",
            &["optionalOldSelf", "oldSelf is not used"],
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
            &["estimated rule cost exceeds budget by factor of more than 100x"],
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
            "extend(\"x-kubernetes-list-type\" = \"map\"",
            &["must have a default or be a required property"],
        ),
        refused(
            "list_map_keys_without_map",
            "    #[schemars(extend(\"x-kubernetes-list-type\" = \"atomic\", \"x-kubernetes-list-map-keys\" = [\"name\"]))]\n    pub items: Vec<Item>,\n",
            ITEM,
            "extend(\"x-kubernetes-list-type\" = \"atomic\"",
            &["x-kubernetes-list-type must be map if x-kubernetes-list-map-keys is non-empty"],
        ),
        refused(
            "list_set_of_objects",
            "    #[schemars(extend(\"x-kubernetes-list-type\" = \"set\"))]\n    pub items: Vec<Item>,\n",
            ITEM,
            "extend(\"x-kubernetes-list-type\" = \"set\"",
            &["x-kubernetes-map-type must be atomic as item of a list with x-kubernetes-list-type=set"],
        ),
        refused(
            "cel_type_mismatch",
            "    #[x_kube(validation = \"self == 'x'\")]\n    pub replicas: i32,\n",
            "",
            "\"self == 'x'\"",
            &["found no matching overload for '_==_' applied to '(int, string)'"],
        ),
        refused(
            "cel_message_expression_cost",
            "    #[x_kube(validation = Rule::new(\"self.size() > 0\").message(Message::Expression(\"'got ' + string(self)\".into())))]\n    pub name: String,\n",
            "",
            "Rule::new(\"self.size() > 0\")",
            &["estimated messageExpression cost exceeds budget by factor of more than 100x"],
        ),
        refused(
            "cel_cost_in_unbounded_list",
            "    pub items: Vec<Named>,\n",
            "#[derive(Clone, Debug, Serialize, Deserialize, KubeSchema)]\npub struct Named {\n    #[x_kube(validation = \"self.startsWith('a') && self.contains('b')\")]\n    pub name: String,\n}\n",
            "\"self.startsWith('a')",
            &["estimated rule cost exceeds budget", "a list or map above it has no maxItems/maxProperties"],
        ),
        accepted(
            "cel_cost_in_bounded_list",
            "    #[schemars(length(max = 100))]\n    pub items: Vec<Named>,\n",
            "#[derive(Clone, Debug, Serialize, Deserialize, KubeSchema)]\npub struct Named {\n    #[schemars(length(max = 253))]\n    #[x_kube(validation = \"self.startsWith('a') && self.contains('b')\")]\n    pub name: String,\n}\n",
        ),
        refused(
            "cel_optional_old_self_false",
            "    #[x_kube(validation = Rule::new(\"self > 0\").optional_old_self(false))]\n    pub replicas: i32,\n",
            "",
            "Rule::new(\"self > 0\")",
            &["optionalOldSelf", "oldSelf is not used"],
        ),
        accepted(
            "cel_optional_old_self_used",
            "    #[x_kube(validation = Rule::new(\"!oldSelf.hasValue() || self >= oldSelf.value()\").optional_old_self(true))]\n    pub replicas: i32,\n",
            "",
        ),
        // The optional library's macros, as kube-rs's `crd_derive_schema` example writes an
        // immutable field.
        accepted(
            "cel_opt_map_optional_old_self",
            "    #[serde(default)]\n    #[x_kube(validation = Rule::new(\"oldSelf.optMap(o, o == self).orValue(true)\").optional_old_self(true).message(\"Immutable after creation\"))]\n    pub immutable: Option<String>,\n",
            "",
        ),
        accepted(
            "cel_opt_flat_map",
            "    #[x_kube(validation = \"self.?name.optFlatMap(n, n == '' ? optional.none() : optional.of(n)).orValue('x') != 'y'\")]\n    pub item: Item,\n",
            ITEM,
        ),
        refused(
            "cel_opt_map_variable_out_of_scope",
            "    #[x_kube(validation = Rule::new(\"oldSelf.optMap(o, o == self).orValue(o)\").optional_old_self(true))]\n    pub immutable: String,\n",
            "",
            "Rule::new(\"oldSelf.optMap",
            &["undeclared reference to 'o'"],
        ),
        refused(
            "cel_field_path_invalid",
            "    #[x_kube(validation = Rule::new(\"self.name != ''\").field_path(\".nope\"))]\n    pub item: Item,\n",
            ITEM,
            "Rule::new(\"self.name != ''\")",
            &["fieldPath `.nope`", "must be a valid path"],
        ),
        accepted(
            "cel_field_path_valid",
            "    #[x_kube(validation = Rule::new(\"self.name != ''\").field_path(\".name\").reason(Reason::FieldValueForbidden))]\n    pub item: Item,\n",
            ITEM,
        ),
        refused(
            "cel_message_line_break",
            "    #[x_kube(validation = Rule::new(\"self > 0\").message(\"must be\\npositive\"))]\n    pub replicas: i32,\n",
            "",
            "Rule::new(\"self > 0\")",
            &["must not contain line breaks"],
        ),
        refused(
            "pattern_invalid",
            "    #[schemars(regex(pattern = \"a**\"))]\n    pub name: String,\n",
            "",
            "regex(pattern",
            &["pattern must be a valid regular expression"],
        ),
        accepted(
            "set_of_atomic_structs",
            "    #[schemars(extend(\"x-kubernetes-list-type\" = \"set\"))]\n    pub items: Vec<Atomic>,\n",
            "#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\n#[schemars(extend(\"x-kubernetes-map-type\" = \"atomic\"))]\npub struct Atomic {\n    pub name: String,\n}\n",
        ),
        // kube's structural rewrite drops the `additionalProperties: false` schemars writes.
        accepted(
            "deny_unknown_fields",
            "    pub strict: Strict,\n",
            "#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\n#[serde(deny_unknown_fields)]\npub struct Strict {\n    pub a: String,\n}\n",
        ),
        refused(
            "default_too_long",
            "    #[serde(default = \"default_name\")]\n    #[schemars(length(max = 3))]\n    pub name: String,\n",
            "fn default_name() -> String {\n    \"toolong\".into()\n}\n",
            "default = \"default_name\"",
            &["default: Too long: may not be more than 3"],
        ),
        refused(
            "default_out_of_range",
            "    #[serde(default = \"default_replicas\")]\n    #[schemars(range(min = 1, max = 5))]\n    pub replicas: i32,\n",
            "fn default_replicas() -> i32 {\n    0\n}\n",
            "default = \"default_replicas\"",
            &["default: Invalid value: 0: in body should be greater than or equal to 1"],
        ),
        refused(
            "default_fails_rule",
            "    #[serde(default = \"no_replicas\")]\n    #[x_kube(validation = \"self > 0\")]\n    pub replicas: i32,\n",
            "fn no_replicas() -> i32 {\n    0\n}\n",
            "default = \"no_replicas\"",
            &["default: Invalid value: 0: failed rule: self > 0"],
        ),
        // A refusal of a field's type points at the field: found through the kind's types by
        // the refused place's path (nested, in a list, flattened, in the status).
        refused(
            "untyped_field",
            "    pub replicas: i32,\n    pub anything: serde_json::Value,\n",
            "",
            "anything:",
            &["version v1, `.spec.anything`: type: must not be empty for specified object fields"],
        ),
        refused(
            "untyped_field_in_list_items",
            "    pub holders: Vec<Holder>,\n",
            "#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\n#[serde(rename_all = \"camelCase\")]\npub struct Holder {\n    pub name: String,\n    pub raw_value: Option<serde_json::Value>,\n}\n",
            "raw_value:",
            &["`.spec.holders[*].rawValue`: type: must not be empty"],
        ),
        refused(
            "untyped_field_flattened",
            "    pub replicas: i32,\n    #[serde(flatten)]\n    pub extra: Extra,\n",
            "#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\npub struct Extra {\n    pub loose: serde_json::Value,\n}\n",
            "loose:",
            &["`.spec.loose`: type: must not be empty"],
        ),
        refused(
            "tuple_in_map_values",
            "    pub replicas: i32,\n    pub windows: std::collections::BTreeMap<String, Window>,\n",
            "#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\npub struct Window {\n    pub hours: (u8, u8),\n}\n",
            "hours:",
            &["`.spec.windows.*.hours`: items must be a schema object and not an array"],
        ),
        refused(
            "untyped_status_field",
            "    pub replicas: i32,\n",
            "#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\npub struct CStatus {\n    pub ready: bool,\n    pub details: Vec<Detail>,\n}\n#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\npub struct Detail {\n    pub payload: serde_json::Value,\n}\n",
            "payload:",
            &["`.status.details[*].payload`: type: must not be empty"],
        ),
        // Two fields get the same default; the second's is refused, and the error points at it.
        refused(
            "default_same_value_twice",
            "    #[serde(default = \"zero_a\")]\n    pub a: i32,\n    #[serde(default = \"zero_b\")]\n    #[schemars(range(min = 1))]\n    pub b: i32,\n",
            "fn zero_a() -> i32 {\n    0\n}\nfn zero_b() -> i32 {\n    0\n}\n",
            "default = \"zero_b\"",
            &["version v1, `.spec.b`: default: Invalid value: 0: in body should be greater than or equal to 1"],
        ),
        // A container's `#[serde(default)]` fills its fields from its `Default`.
        refused(
            "default_of_container",
            "    pub limits: Limits,\n",
            "#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\n#[serde(default)]\npub struct Limits {\n    #[schemars(range(min = 1))]\n    pub max: i32,\n}\nimpl Default for Limits {\n    fn default() -> Self {\n        Limits { max: 0 }\n    }\n}\n",
            "default)]",
            &["`.spec.limits.max`: default: Invalid value: 0"],
        ),
        refused(
            "cel_rule_two_lines",
            "    #[x_kube(validation = \"self > 0 &&\n        self < 10\")]\n    pub replicas: i32,\n",
            "",
            "\"self > 0 &&",
            &["spans several lines, and then a message must be specified"],
        ),
        accepted(
            "cel_rule_two_lines_message",
            "    #[x_kube(validation = Rule::new(\"self > 0 &&\n        self < 10\").message(\"between 1 and 9\"))]\n    pub replicas: i32,\n",
            "",
        ),
        refused(
            "cel_message_expression_int",
            "    #[x_kube(validation = Rule::new(\"self > 0\").message(Message::Expression(\"self\".into())))]\n    pub replicas: i32,\n",
            "",
            "Rule::new(\"self > 0\")",
            &["evaluates to int, and a messageExpression must evaluate to a string"],
        ),
        refused(
            "map_type_on_list",
            "    #[schemars(extend(\"x-kubernetes-map-type\" = \"atomic\"))]\n    pub names: Vec<String>,\n",
            "",
            "extend(\"x-kubernetes-map-type\"",
            &["type must be object if x-kubernetes-map-type is specified"],
        ),
        refused(
            "list_type_on_string",
            "    #[schemars(extend(\"x-kubernetes-list-type\" = \"set\"))]\n    pub name: String,\n",
            "",
            "extend(\"x-kubernetes-list-type\"",
            &["type must be array if x-kubernetes-list-type is specified"],
        ),
        // kube's structural rewrite drops the `uniqueItems: true` schemars writes for sets.
        accepted(
            "unique_items",
            "    pub names: std::collections::BTreeSet<String>,\n",
            "",
        ),
        refused(
            "root_rule_labels",
            "    pub replicas: i32,\n",
            "",
            "\"self.metadata.labels",
            &["undefined field 'labels'"],
        ),
        accepted(
            "root_rule_name",
            "    pub replicas: i32,\n",
            "",
        ),
        refused(
            "printcolumn_type",
            "    pub replicas: i32,\n",
            "",
            "printcolumn(",
            &["printer column `Replicas`: type: must be one of boolean,date,integer,number,string"],
        ),
        refused(
            "selectable_unknown_field",
            "    pub tier: String,\n",
            "",
            "selectable = ",
            &["selectable field `.spec.nope`: is an invalid path: does not refer to a valid field"],
        ),
        refused(
            "selectable_object",
            "    pub item: Item,\n",
            ITEM,
            "selectable = ",
            &["must point to a field of type string, boolean or integer"],
        ),
        refused(
            "selectable_without_dot",
            "    pub tier: String,\n",
            "",
            "selectable = ",
            &["selectable field `spec.tier`: is an invalid path: expected [ or . but got: spec"],
        ),
        accepted(
            "selectable_string",
            "    pub tier: String,\n",
            "",
        ),
        refused(
            "scale_outside_spec",
            "    pub replicas: i32,\n",
            "#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\npub struct CStatus {\n    pub replicas: i32,\n}\n",
            "scale = ",
            &["scale.specReplicasPath `.replicas`: should be a json path under .spec"],
        ),
        refused(
            "deprecation_warning_line_break",
            "    pub replicas: i32,\n",
            "",
            "deprecated = ",
            &["deprecationWarning: must only contain printable UTF-8 characters"],
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
        let kube_attr = match c.name {
            "printcolumn_type" => Some(
                r#"printcolumn(name = "Replicas", type_ = "int", json_path = ".spec.replicas")"#,
            ),
            "selectable_unknown_field" => Some(r#"selectable = ".spec.nope""#),
            "selectable_object" => Some(r#"selectable = ".spec.item""#),
            "selectable_string" => Some(r#"selectable = ".spec.tier""#),
            // kube-rs's own example `crd_derive` writes its selectable field so.
            "selectable_without_dot" => Some(r#"selectable = "spec.tier""#),
            "scale_outside_spec" => Some(
                r##"status = "CStatus", scale = r#"{"specReplicasPath":".replicas","statusReplicasPath":".status.replicas"}"#"##,
            ),
            "deprecation_warning_line_break" => Some(r#"deprecated = "v1 is old,\nuse v2""#),
            "untyped_status_field" => Some(r#"status = "CStatus""#),
            _ => None,
        };
        if let Some(a) = kube_attr {
            c.body = c
                .body
                .replace("kind = \"C\")]", &format!("kind = \"C\", {a})]"));
        }
        let root_rule = match c.name {
            "root_rule_labels" => Some("self.metadata.labels.size() < 10"),
            "root_rule_name" => Some("self.metadata.name.size() < 64 && self.kind == 'C'"),
            _ => None,
        };
        if let Some(r) = root_rule {
            c.body = c
                .body
                .replace("kind = \"C\")]", &format!("kind = \"C\", validation = \"{r}\")]"));
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
