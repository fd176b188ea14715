//! The objects the API server judges for a kind version: the project's samples, and boundary
//! objects generated from the version's schema, for every bounded field (a value at and just
//! outside each numeric, length and item-count bound, a pattern and a format miss, an enum
//! miss, each required field missing, and each object with defaulted fields given with its
//! required fields only, so the API server fills the defaults in).

use serde_json::{Map, Value, json};

/// One object to dry-run, and what it tries (`sample`, or `<path>: <mutation>`).
pub struct Case {
    pub what: String,
    pub object: Value,
}

/// A step into a schema: a property, an item of a list, a value of a map.
#[derive(Clone, Debug)]
enum Step {
    Prop(String),
    Item,
    Key,
}

/// What a case does at its path.
enum Change {
    Set(Value),
    Remove(String),
    /// The object at the path with its required fields only (defaults filled in).
    Minimal,
}

/// Every case of the version `version` (a CRD's `spec.versions[i]`) of `crd`: `samples` of it,
/// and boundaries of its schema outside the schema paths `skip` (as `.properties.spec...`).
pub fn cases(crd: &Value, version: &Value, samples: &[Value], skip: &[&str]) -> Vec<Case> {
    let group = crd["spec"]["group"].as_str().unwrap_or("");
    let kind = crd["spec"]["names"]["kind"].as_str().unwrap_or("");
    let name = version["name"].as_str().unwrap_or("");
    let api_version = format!("{group}/{name}");
    let schema = &version["schema"]["openAPIV3Schema"];
    let mine: Vec<&Value> = samples
        .iter()
        .filter(|s| s["apiVersion"] == api_version.as_str() && s["kind"] == kind)
        .collect();
    let mut out: Vec<Case> = mine
        .iter()
        .map(|s| Case {
            what: format!("{kind} {name}: sample {}", s["metadata"]["name"]),
            object: (*s).clone(),
        })
        .collect();
    let mut base = minimal(schema);
    base["apiVersion"] = json!(api_version);
    base["kind"] = json!(kind);
    base["metadata"] = json!({"name": "boundary"});
    // The object with its required fields only is judged (it gets the defaults); the changes
    // are made to the first sample (its empty parts made as that one), else to it.
    out.push(Case {
        what: format!("{kind} {name}: its required fields only"),
        object: base.clone(),
    });
    let base = match mine.first() {
        Some(sample) => {
            let mut sample = (*sample).clone();
            for (key, value) in base.as_object().into_iter().flatten() {
                if sample[key.as_str()].is_null() {
                    sample[key.as_str()] = value.clone();
                }
            }
            sample
        }
        None => base,
    };
    let mut changes = Vec::new();
    // Status is not written on create where it is a subresource: nothing to judge there.
    let status_too = version["subresources"]["status"].is_null();
    for (key, sub) in schema["properties"].as_object().into_iter().flatten() {
        if matches!(key.as_str(), "apiVersion" | "kind" | "metadata")
            || (key == "status" && !status_too)
        {
            continue;
        }
        walk(
            sub,
            &mut vec![Step::Prop(key.clone())],
            &format!(".properties.{key}"),
            skip,
            &mut changes,
        );
    }
    for (path, what, change) in changes {
        let mut object = base.clone();
        if apply(&mut object, schema, &path, change) {
            out.push(Case {
                what: format!("{kind} {name}: {} {what}", shown(&path)),
                object,
            });
        }
    }
    out
}

fn shown(path: &[Step]) -> String {
    path.iter()
        .map(|s| match s {
            Step::Prop(p) => format!(".{p}"),
            Step::Item => "[0]".into(),
            Step::Key => "[k]".into(),
        })
        .collect()
}

type Changes = Vec<(Vec<Step>, String, Change)>;

/// The changes of `schema` (at `path`, schema path `at`) and of everything under it.
fn walk(schema: &Value, path: &mut Vec<Step>, at: &str, skip: &[&str], out: &mut Changes) {
    if skip.iter().any(|s| format!("{at}.").contains(s))
        || schema["x-kubernetes-preserve-unknown-fields"] == true
    {
        return;
    }
    let mut push = |what: String, change: Change| out.push((path.clone(), what, change));
    let number = |v: &Value| v.as_f64();
    let integer = schema["type"] == "integer";
    let step = if integer { 1.0 } else { 0.5 };
    let num = |x: f64| {
        if integer { json!(x as i64) } else { json!(x) }
    };
    if let Some(min) = number(&schema["minimum"]) {
        let exclusive = schema["exclusiveMinimum"] == true;
        push(format!("= {} (the minimum)", min), Change::Set(num(min)));
        let below = if exclusive { min } else { min - step };
        push(
            format!("= {below} (below the minimum)"),
            Change::Set(num(below)),
        );
    }
    if let Some(max) = number(&schema["maximum"]) {
        let exclusive = schema["exclusiveMaximum"] == true;
        push(format!("= {} (the maximum)", max), Change::Set(num(max)));
        let above = if exclusive { max } else { max + step };
        push(
            format!("= {above} (above the maximum)"),
            Change::Set(num(above)),
        );
    }
    if let Some(m) = number(&schema["multipleOf"]) {
        push(
            format!("= {} (no multiple)", m * 1.5),
            Change::Set(num(m * 1.5 + 1.0)),
        );
    }
    let text = |n: u64| Value::String("a".repeat(n as usize));
    if let Some(min) = schema["minLength"].as_u64()
        && min > 0
    {
        push(
            format!("of length {} (too short)", min - 1),
            Change::Set(text(min - 1)),
        );
        push(
            format!("of length {min} (the least)"),
            Change::Set(text(min)),
        );
    }
    if let Some(max) = schema["maxLength"].as_u64()
        && max < 100_000
    {
        push(
            format!("of length {max} (the most)"),
            Change::Set(text(max)),
        );
        push(
            format!("of length {} (too long)", max + 1),
            Change::Set(text(max + 1)),
        );
    }
    if schema["pattern"].is_string() {
        push("= \"#~\" (a pattern miss)".into(), Change::Set(json!("#~")));
    }
    if schema["type"] == "string" && schema["format"].is_string() {
        push("= \"%%\" (a format miss)".into(), Change::Set(json!("%%")));
    }
    if let Some(values) = schema["enum"].as_array() {
        let miss = match values.first() {
            Some(Value::Number(_)) => {
                let most = values.iter().filter_map(Value::as_f64).fold(0.0, f64::max);
                num(most + 1.0)
            }
            _ => json!("not-in-the-enum"),
        };
        push(format!("= {miss} (an enum miss)"), Change::Set(miss));
    }
    let items = |n: u64| {
        Value::Array(
            (0..n)
                .map(|i| distinct(minimal(&schema["items"]), i))
                .collect(),
        )
    };
    if let Some(min) = schema["minItems"].as_u64()
        && min > 0
    {
        push(
            format!("with {} items (too few)", min - 1),
            Change::Set(items(min - 1)),
        );
    }
    if let Some(max) = schema["maxItems"].as_u64()
        && max < 1000
    {
        push(
            format!("with {} items (too many)", max + 1),
            Change::Set(items(max + 1)),
        );
    }
    let entries = |n: u64| {
        let value = minimal(&schema["additionalProperties"]);
        Value::Object((0..n).map(|i| (format!("k{i}"), value.clone())).collect())
    };
    if let Some(min) = schema["minProperties"].as_u64()
        && min > 0
    {
        push(
            format!("with {} entries (too few)", min - 1),
            Change::Set(entries(min - 1)),
        );
    }
    if let Some(max) = schema["maxProperties"].as_u64()
        && max < 1000
    {
        push(
            format!("with {} entries (too many)", max + 1),
            Change::Set(entries(max + 1)),
        );
    }
    let properties = schema["properties"].as_object();
    for field in schema["required"].as_array().into_iter().flatten() {
        if let Some(f) = field.as_str() {
            push(
                format!("without {f} (required)"),
                Change::Remove(f.to_string()),
            );
        }
    }
    if properties.is_some_and(|p| p.values().any(|s| !s["default"].is_null())) {
        push(
            "with its required fields only (defaults)".into(),
            Change::Minimal,
        );
    }
    for (key, sub) in properties.into_iter().flatten() {
        path.push(Step::Prop(key.clone()));
        walk(sub, path, &format!("{at}.properties.{key}"), skip, out);
        path.pop();
    }
    if schema["items"].is_object() {
        path.push(Step::Item);
        walk(&schema["items"], path, &format!("{at}.items"), skip, out);
        path.pop();
    }
    if schema["additionalProperties"].is_object() {
        path.push(Step::Key);
        let sub = &schema["additionalProperties"];
        walk(sub, path, &format!("{at}.additionalProperties"), skip, out);
        path.pop();
    }
}

/// The `i`th of several items made from one value: a string or number made distinct (a set's
/// items must be), an object as it is.
fn distinct(v: Value, i: u64) -> Value {
    match v {
        Value::String(s) if i > 0 => Value::String(format!("{s}{i}")),
        Value::Number(n) if i > 0 => json!(n.as_f64().unwrap_or(0.0) as i64 + i as i64),
        other => other,
    }
}

/// The least value `schema` accepts as far as its bounds say: its default, its first enum
/// value, the minimum, a string of its least length, an object of its required fields.
pub fn minimal(schema: &Value) -> Value {
    if !schema["default"].is_null() {
        return schema["default"].clone();
    }
    if let Some(first) = schema["enum"].as_array().and_then(|v| v.first()) {
        return first.clone();
    }
    if schema["x-kubernetes-int-or-string"] == true {
        return json!(1);
    }
    match schema["type"].as_str() {
        Some("string") => {
            let n = schema["minLength"].as_u64().unwrap_or(1).max(1);
            Value::String("a".repeat(n as usize))
        }
        Some("integer") | Some("number") => {
            let mut v = schema["minimum"].as_f64().unwrap_or(0.0).max(
                schema["maximum"]
                    .as_f64()
                    .map(|m| m.min(0.0))
                    .unwrap_or(0.0),
            );
            if schema["exclusiveMinimum"] == true {
                v += 1.0;
            }
            if schema["type"] == "integer" {
                json!(v as i64)
            } else {
                json!(v)
            }
        }
        Some("boolean") => json!(false),
        Some("array") => {
            let n = schema["minItems"].as_u64().unwrap_or(0);
            Value::Array(
                (0..n)
                    .map(|i| distinct(minimal(&schema["items"]), i))
                    .collect(),
            )
        }
        _ => {
            let mut map = Map::new();
            for f in schema["required"].as_array().into_iter().flatten() {
                if let Some(f) = f.as_str() {
                    map.insert(f.to_string(), minimal(&schema["properties"][f]));
                }
            }
            Value::Object(map)
        }
    }
}

/// `change` at `path` of `object` (whose schema is `schema`), making the objects and lists on
/// the way as [`minimal`] makes them; false when the object has something else there.
fn apply(object: &mut Value, schema: &Value, path: &[Step], change: Change) -> bool {
    let mut node = object;
    let mut s = schema;
    for step in path {
        let child_schema = match step {
            Step::Prop(p) => &s["properties"][p],
            Step::Item => &s["items"],
            Step::Key => &s["additionalProperties"],
        };
        if node.is_null() {
            *node = minimal(s);
        }
        node = match step {
            Step::Prop(p) => {
                let Some(map) = node.as_object_mut() else {
                    return false;
                };
                map.entry(p.clone())
                    .or_insert_with(|| minimal(child_schema))
            }
            Step::Item => {
                let Some(items) = node.as_array_mut() else {
                    return false;
                };
                if items.is_empty() {
                    items.push(minimal(child_schema));
                }
                &mut items[0]
            }
            Step::Key => {
                let Some(map) = node.as_object_mut() else {
                    return false;
                };
                if map.is_empty() {
                    map.insert("k".into(), minimal(child_schema));
                }
                map.values_mut().next().expect("an entry")
            }
        };
        s = child_schema;
    }
    match change {
        Change::Set(v) => *node = v,
        Change::Minimal => *node = minimal(s),
        Change::Remove(f) => {
            if node.is_null() {
                *node = minimal(s);
            }
            let Some(map) = node.as_object_mut() else {
                return false;
            };
            map.remove(&f);
        }
    }
    true
}

/// The object the API server returned, without what differs between two creates of it (uid,
/// times, managed fields).
pub fn comparable(mut v: Value) -> Value {
    if let Some(meta) = v["metadata"].as_object_mut() {
        for k in [
            "uid",
            "creationTimestamp",
            "managedFields",
            "resourceVersion",
        ] {
            meta.remove(k);
        }
    }
    v
}
