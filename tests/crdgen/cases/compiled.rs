//! Sources the compiler decides and the static reader refuses: attributes whose derive is not
//! there (rustc: "cannot find attribute"), `KubeSchema` where kube-derive refuses it, and
//! `#[cfg]`/`#[cfg_attr]` whose value depends on the build. `tests/crdgen/refusals.rs` checks our
//! verdict, place and message; `tests/crdgen/exact.rs` has rustc's verdict on the first kind.

/// One case: a crate's `src/lib.rs` after [`super::HEAD`].
pub struct Refused {
    pub name: &'static str,
    pub body: String,
    /// Where our refusal points (the first occurrence in `body`) and what it says.
    pub marker: &'static str,
    pub says: &'static [&'static str],
    /// rustc refuses it too (the others compile, but what they mean depends on the build).
    pub rustc_refuses: bool,
}

fn kind(name: &str, derives: &str, attrs: &str, fields: &str, extra: &str) -> String {
    format!(
        "#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, {derives})]\n#[kube(group = \"{}.example.com\", version = \"v1\", kind = \"C\")]\n{attrs}pub struct CSpec {{\n{fields}}}\n{extra}",
        name.replace('_', "-")
    )
}

fn case(
    name: &'static str,
    body: String,
    marker: &'static str,
    says: &'static [&'static str],
    rustc_refuses: bool,
) -> Refused {
    Refused {
        name,
        body,
        marker,
        says,
        rustc_refuses,
    }
}

pub fn refused() -> Vec<Refused> {
    vec![
        case(
            "x_kube_field_on_json_schema",
            kind(
                "x_kube_field_on_json_schema",
                "JsonSchema",
                "",
                "    #[x_kube(validation = \"self > 0\")]\n    pub replicas: i32,\n",
                "",
            ),
            "#[x_kube",
            &["`#[x_kube(...)]`", "`KubeSchema`", "cannot find attribute"],
            true,
        ),
        case(
            "x_kube_type_on_json_schema",
            kind(
                "x_kube_type_on_json_schema",
                "JsonSchema",
                "#[x_kube(validation = \"self.replicas > 0\")]\n",
                "    pub replicas: i32,\n",
                "",
            ),
            "#[x_kube",
            &["on the type", "derive `KubeSchema` instead of `JsonSchema`"],
            true,
        ),
        case(
            "x_kube_on_json_schema_item",
            kind(
                "x_kube_on_json_schema_item",
                "KubeSchema",
                "",
                "    pub item: Item,\n",
                "#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\npub struct Item {\n    #[x_kube(validation = \"self != ''\")]\n    pub name: String,\n}\n",
            ),
            "#[x_kube",
            &["`Item`", "`KubeSchema`"],
            true,
        ),
        case(
            "kube_without_custom_resource",
            kind(
                "kube_without_custom_resource",
                "KubeSchema",
                "",
                "    pub item: Item,\n",
                "#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\n#[kube(namespaced)]\npub struct Item {\n    pub name: String,\n}\n",
            ),
            "#[kube(namespaced)]",
            &["`#[kube(...)]`", "`CustomResource`"],
            true,
        ),
        case(
            "serde_without_serde_derive",
            kind(
                "serde_without_serde_derive",
                "KubeSchema",
                "",
                "    pub item: Item,\n",
                "#[derive(Clone, Debug, KubeSchema)]\n#[serde(rename_all = \"camelCase\")]\npub struct Item {\n    pub first_name: String,\n}\n",
            ),
            "#[serde(rename_all",
            &["`#[serde(...)]`", "`Serialize`"],
            true,
        ),
        case(
            "garde_on_kube_schema",
            kind(
                "garde_on_kube_schema",
                "KubeSchema",
                "",
                "    #[garde(length(min = 1))]\n    pub name: String,\n",
                "",
            ),
            "#[garde",
            &["`#[garde(...)]`", "`JsonSchema`"],
            true,
        ),
        case(
            "kube_schema_and_json_schema",
            kind(
                "kube_schema_and_json_schema",
                "KubeSchema",
                "",
                "    pub item: Item,\n",
                "#[derive(Clone, Debug, Serialize, Deserialize, KubeSchema, JsonSchema)]\npub struct Item {\n    pub name: String,\n}\n",
            ),
            "#[derive(Clone, Debug, Serialize, Deserialize, KubeSchema, JsonSchema)]",
            &["both `KubeSchema` and `JsonSchema`", "E0119"],
            true,
        ),
        case(
            "kube_schema_on_enum",
            kind(
                "kube_schema_on_enum",
                "KubeSchema",
                "",
                "    pub mode: Mode,\n",
                "#[derive(Clone, Debug, Serialize, Deserialize, KubeSchema)]\npub enum Mode {\n    Fast,\n    Safe,\n}\n",
            ),
            "#[derive(Clone, Debug, Serialize, Deserialize, KubeSchema)]",
            &["struct with named fields", "derive `JsonSchema` instead"],
            true,
        ),
        case(
            "cfg_attr_feature_kube",
            kind(
                "cfg_attr_feature_kube",
                "KubeSchema",
                "#[cfg_attr(feature = \"v2\", kube(storage = false))]\n",
                "    pub replicas: i32,\n",
                "",
            ),
            "#[cfg_attr",
            &["depends on the build", "--exact"],
            false,
        ),
        case(
            "cfg_attr_feature_serde",
            kind(
                "cfg_attr_feature_serde",
                "KubeSchema",
                "",
                "    #[cfg_attr(feature = \"wire\", serde(rename = \"n\"))]\n    pub replicas: i32,\n",
                "",
            ),
            "#[cfg_attr",
            &["on a field", "`#[serde]`", "--exact"],
            false,
        ),
        case(
            "cfg_attr_derive",
            "#[derive(Clone, Debug, Serialize, Deserialize)]\n#[cfg_attr(feature = \"crd\", derive(CustomResource, KubeSchema))]\n#[cfg_attr(feature = \"crd\", kube(group = \"cfg-attr-derive.example.com\", version = \"v1\", kind = \"C\"))]\npub struct CSpec {\n    pub replicas: i32,\n}\n".to_string(),
            "#[cfg_attr",
            &["`#[derive]`", "--exact"],
            false,
        ),
        case(
            "cfg_attr_always",
            kind(
                "cfg_attr_always",
                "KubeSchema",
                "#[cfg_attr(all(), serde(rename_all = \"camelCase\"))]\n",
                "    pub max_replicas: i32,\n",
                "",
            ),
            "#[cfg_attr",
            &["always holds", "#[serde(rename_all = \"camelCase\")]"],
            false,
        ),
        case(
            "cfg_field_feature",
            kind(
                "cfg_field_feature",
                "KubeSchema",
                "",
                "    pub replicas: i32,\n    #[cfg(feature = \"extra\")]\n    pub extra: String,\n",
                "",
            ),
            "#[cfg(feature",
            &["on a field", "depends on the build", "--exact"],
            false,
        ),
        case(
            "cfg_variant_target",
            kind(
                "cfg_variant_target",
                "KubeSchema",
                "",
                "    pub mode: Mode,\n",
                "#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\npub enum Mode {\n    Fast,\n    #[cfg(unix)]\n    Safe,\n}\n",
            ),
            "#[cfg(unix)]",
            &["on a variant", "--exact"],
            false,
        ),
        case(
            "cfg_module",
            format!(
                "#[cfg(feature = \"v2\")]\npub mod v2 {{\n    use super::*;\n{}}}\n",
                kind("cfg_module", "KubeSchema", "", "    pub replicas: i32,\n", "")
            ),
            "CSpec {",
            &["module behind a `#[cfg(...)]`", "src/lib.rs:5:1", "--exact"],
            false,
        ),
    ]
}
