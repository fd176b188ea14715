//! The `x-kubernetes-*` combinations kube-apiserver refuses: list-map keys that are not required
//! or defaulted scalars of the items, list-map keys without `list-type: map` (and the reverse),
//! `list-type: set` over non-scalar items, `map-type` on a non-object, `int-or-string` with a type.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray,
};

use super::{Place, Refusal};

const SCALARS: &[&str] = &["string", "integer", "number", "boolean"];

pub(super) fn check(s: &JSONSchemaProps, place: &Place<'_>, out: &mut Vec<Refusal>) {
    let mut refuse = |reason: String, fix: &str| out.push(Refusal::at(place, reason, fix));
    let items = match &s.items {
        Some(JSONSchemaPropsOrArray::Schema(i)) => Some(&**i),
        _ => None,
    };
    match (
        s.x_kubernetes_list_type.as_deref(),
        &s.x_kubernetes_list_map_keys,
    ) {
        (Some("map"), None) => refuse(
            "`x-kubernetes-list-type: map` needs `x-kubernetes-list-map-keys`".into(),
            "add `\"x-kubernetes-list-map-keys\" = [\"name\"]` next to the list type",
        ),
        (Some("map"), Some(keys)) => {
            let Some(items) = items.filter(|i| i.type_.as_deref() == Some("object")) else {
                refuse(
                    "`x-kubernetes-list-type: map` needs items of type object".into(),
                    "use a Vec of structs, or `x-kubernetes-list-type: atomic`",
                );
                return;
            };
            for key in keys {
                let prop = items.properties.as_ref().and_then(|p| p.get(key));
                let Some(prop) = prop else {
                    refuse(
                        format!("the list-map key `{key}` is not a property of the items"),
                        "name a field of the item struct in `x-kubernetes-list-map-keys`",
                    );
                    continue;
                };
                if !prop.type_.as_deref().is_some_and(|t| SCALARS.contains(&t)) {
                    refuse(
                        format!(
                            "the list-map key `{key}` must be a scalar (string, integer, number or boolean)"
                        ),
                        "key the list on a scalar field",
                    );
                }
                let required = items
                    .required
                    .as_ref()
                    .is_some_and(|r| r.iter().any(|n| n == key));
                if !required && prop.default.is_none() {
                    refuse(
                        format!("the list-map key `{key}` must be required or have a default"),
                        "make the key field non-optional (not an `Option`, no `#[serde(default)]`), or give it a default",
                    );
                }
            }
        }
        (Some(_) | None, Some(_)) => refuse(
            "`x-kubernetes-list-map-keys` may only be set with `x-kubernetes-list-type: map`"
                .into(),
            "set `\"x-kubernetes-list-type\" = \"map\"` or drop the keys",
        ),
        (Some("set"), None) => {
            if let Some(i) = items
                && !i.type_.as_deref().is_some_and(|t| SCALARS.contains(&t))
                && i.x_kubernetes_int_or_string != Some(true)
            {
                refuse(
                    "`x-kubernetes-list-type: set` needs scalar items".into(),
                    "use `x-kubernetes-list-type: map` with keys, or `atomic`",
                );
            }
        }
        (Some("atomic"), None) | (None, None) => {}
        (Some(other), None) => refuse(
            format!("`x-kubernetes-list-type: {other}` is not atomic, set or map"),
            "use one of atomic, set, map",
        ),
    }
    if s.x_kubernetes_list_type.is_some() && s.type_.as_deref() != Some("array") {
        refuse(
            "`x-kubernetes-list-type` may only be set on arrays".into(),
            "move it to a Vec field",
        );
    }
    if let Some(m) = s.x_kubernetes_map_type.as_deref() {
        if s.type_.as_deref() != Some("object") {
            refuse(
                "`x-kubernetes-map-type` may only be set on objects".into(),
                "move it to a map or struct field",
            );
        } else if m != "granular" && m != "atomic" {
            refuse(
                format!("`x-kubernetes-map-type: {m}` is not granular or atomic"),
                "use granular or atomic",
            );
        }
    }
    if s.x_kubernetes_int_or_string == Some(true) && s.type_.is_some() {
        refuse(
            "`x-kubernetes-int-or-string: true` may not be combined with a type".into(),
            "drop the type (IntOrString's schema has none)",
        );
    }
    if s.x_kubernetes_embedded_resource == Some(true) && s.type_.as_deref() != Some("object") {
        refuse(
            "`x-kubernetes-embedded-resource: true` needs type object".into(),
            "use it on an object",
        );
    }
}
