//! One `x-kubernetes-validations` entry checked as kube-apiserver checks it when a CRD is
//! created (`validation.go` and `schema/cel/compilation.go` of apiextensions-apiserver): its
//! `rule`, `message`, `messageExpression`, `reason` and `fieldPath` fields; the rule compiled
//! against the schema it sits on ([`super::cel::checker`]) and evaluating to a bool; the message
//! expression compiled and evaluating to a string; `oldSelf` only where it can be correlated and
//! `optionalOldSelf` only with it; the estimated cost ([`super::cel::coster`]) of the rule, times how
//! many times the rule can run, and of the message expression, each within the per-expression
//! budget, and both added to the CRD's total.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrBool, ValidationRule,
};

use super::cel::checker::{self, Env};
use super::cel::cost::{self, EXPRESSION_COST_LIMIT};
use super::cel::decl::{Decl, MAX_REQUEST_BYTES};
use super::cel::expr;
use super::cel::types::Ty;
use super::{Place, Refusal};
use crate::crdgen::check::cel::decl::Prim;

/// The reasons a rule may give.
const REASONS: &[&str] = &[
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
];

const FIX_COST: &str = "bound the lists, maps and strings the expression reads with `#[schemars(length(max = N))]` (maxItems/maxProperties/maxLength), or simplify it";

/// Check `rule` on `node` (declared `decl` to CEL); push what the API server would refuse and
/// add the rule's cost to `total`.
pub(super) fn check(
    rule: &ValidationRule,
    node: &JSONSchemaProps,
    decl: Option<&Decl>,
    place: &Place,
    out: &mut Vec<Refusal>,
    total: &mut cost::Total,
) {
    let mut found: Vec<(String, String)> = Vec::new();
    let mut refuse = |reason: String, fix: &str| found.push((reason, fix.to_string()));
    fields(rule, node, &mut refuse);
    match decl {
        _ if !found.is_empty() => {}
        Some(decl) => compile(rule, decl, place, total, &mut |r, f| {
            found.push((r, f.to_string()))
        }),
        None => found.push((
            format!(
                "the rule `{}` sits on a node CEL has no type for (failed to construct type information for x-kubernetes-validations rules: unable to convert structural schema to CEL declarations)",
                rule.rule.trim()
            ),
            "give the node a type (`\"type\" = \"object\"` next to `x-kubernetes-preserve-unknown-fields`), or move the rule to a typed node".into(),
        )),
    }
    out.extend(found.into_iter().map(|(reason, fix)| Refusal {
        path: place.path.clone(),
        reason,
        fix,
        rule: Some(rule.rule.clone()),
        written: None,
    }));
}

/// Compile the rule and its message expression, check their results, oldSelf and costs.
fn compile(
    rule: &ValidationRule,
    decl: &Decl,
    place: &Place,
    total: &mut cost::Total,
    refuse: &mut dyn FnMut(String, &str),
) {
    let src = rule.rule.trim();
    let env = Env {
        root: decl,
        optional_old_self: rule.optional_old_self == Some(true),
    };
    let parsed = match expr::parse(src, &[]) {
        Ok(p) => p,
        Err(e) => {
            refuse(
                format!("the rule `{src}` does not compile: {e}"),
                "fix the CEL syntax of the rule",
            );
            return;
        }
    };
    let checked = checker::check(&parsed, &env);
    if let Some(e) = checked.errors.first() {
        refuse(
            format!("the rule `{src}` does not compile: {e}"),
            "refer only to `self`, `oldSelf`, fields of this schema and the CEL and Kubernetes library functions, with arguments of the types they take",
        );
        return;
    }
    let result = &checked.types[parsed.root.id];
    if !matches!(result, Ty::P(Prim::Bool)) {
        refuse(
            format!("the rule `{src}` evaluates to {result}, and a rule must evaluate to a bool"),
            "make the rule a condition (a comparison, `has(..)`, `.all(..)`...)",
        );
        return;
    }
    if checked.uses_old_self {
        if let Some(list) = &place.uncorrelatable {
            refuse(
                format!(
                    "the rule `{src}` uses oldSelf, which cannot be used on the uncorrelatable portion of the schema within `{list}` (a list that is not `x-kubernetes-list-type: map`)"
                ),
                "move the rule above the list, or make the list a list-map (`x-kubernetes-list-type: map` with `x-kubernetes-list-map-keys`)",
            );
        }
    } else if rule.optional_old_self.is_some() {
        refuse(
            format!(
                "the rule `{src}` sets optionalOldSelf, which may not be set if oldSelf is not used in rule"
            ),
            "drop `.optional_old_self(..)` or use oldSelf in the rule",
        );
    }
    let rule_cost = super::cel::coster::cost(&parsed.root, &checked, decl).max;
    let runs = place
        .cardinality
        .unwrap_or(MAX_REQUEST_BYTES / (decl.min_size + 1));
    let cost = cost::times(rule_cost, runs);
    if cost > EXPRESSION_COST_LIMIT {
        let how_often = match place.cardinality {
            Some(1) => String::new(),
            Some(n) => format!(
                " (it costs {rule_cost} and runs up to {n} times: once per element of the lists and maps above it)"
            ),
            None => format!(
                " (it costs {rule_cost} and runs up to {runs} times: a list or map above it has no maxItems/maxProperties)"
            ),
        };
        refuse(
            format!(
                "the rule `{src}`: estimated rule cost exceeds budget by factor of {}{how_often}",
                cost::factor(cost, EXPRESSION_COST_LIMIT)
            ),
            FIX_COST,
        );
    }
    total.observe(cost, &rule.rule);
    if let Some(m) = rule.message_expression.as_deref().filter(|m| !m.is_empty()) {
        match message_expression(m, &env, decl) {
            Err(e) => refuse(
                format!("the messageExpression `{m}` {e}"),
                "make the message expression a string built from `self`, fields of this schema and library functions",
            ),
            Ok(c) => {
                if c > EXPRESSION_COST_LIMIT {
                    refuse(
                        format!(
                            "the messageExpression `{m}`: estimated messageExpression cost exceeds budget by factor of {}",
                            cost::factor(c, EXPRESSION_COST_LIMIT)
                        ),
                        "bound the strings and lists the message reads (`#[schemars(length(max = N))]`); a value converted with string(..) or joined has no bound: use a field with maxLength, or a static `message`",
                    );
                }
                total.observe(c, &rule.rule);
            }
        }
    }
}

/// The checks of the entry's plain fields (refused before any CEL is compiled).
fn fields(rule: &ValidationRule, node: &JSONSchemaProps, refuse: &mut impl FnMut(String, &str)) {
    let has_newline = |s: &str| s.contains(['\n', '\r']);
    let trimmed_rule = rule.rule.trim();
    let message = rule.message.as_deref().unwrap_or_default();
    if trimmed_rule.is_empty() {
        refuse(
            "a rule is not specified (it is empty)".into(),
            "write the CEL rule",
        );
    } else if !message.is_empty() && message.trim().is_empty() {
        refuse(
            format!(
                "the rule `{trimmed_rule}` has a message that is only whitespace (must be non-empty if specified)"
            ),
            "write the message, or drop it",
        );
    } else if has_newline(message.trim()) {
        refuse(
            format!("the message of the rule `{trimmed_rule}` must not contain line breaks"),
            "write the message on one line",
        );
    } else if has_newline(trimmed_rule) && message.trim().is_empty() {
        refuse(
            format!(
                "the rule `{trimmed_rule}` spans several lines, and then a message must be specified"
            ),
            "add `.message(\"...\")` to the rule, or write it on one line",
        );
    }
    if let Some(m) = &rule.message_expression
        && !m.is_empty()
        && m.trim().is_empty()
    {
        refuse(
            format!(
                "the rule `{trimmed_rule}` has a messageExpression that is only whitespace (must be non-empty if specified)"
            ),
            "write the message expression, or drop it",
        );
    }
    if let Some(r) = &rule.reason
        && !REASONS.contains(&r.as_str())
    {
        refuse(
            format!(
                "the reason `{r}` of the rule `{trimmed_rule}` is not supported (supported: {})",
                REASONS.join(", ")
            ),
            "use one of the supported reasons",
        );
    }
    if let Some(p) = rule.field_path.as_deref().filter(|p| !p.is_empty()) {
        let why = if p.trim().is_empty() {
            Some("must be non-empty if specified".to_string())
        } else if has_newline(p) {
            Some("must not contain line breaks".to_string())
        } else {
            field_path(p, node)
                .err()
                .map(|e| format!("must be a valid path: {e}"))
        };
        if let Some(why) = why {
            refuse(
                format!("the fieldPath `{p}` of the rule `{trimmed_rule}` {why}"),
                "name a field under the rule's schema, as `.field` or `['field']` steps (no list indexes)",
            );
        }
    }
}

/// `ValidFieldPath`: `.name` and `['name']` steps through properties and map keys.
fn field_path(p: &str, mut s: &JSONSchemaProps) -> Result<(), String> {
    let b = p.as_bytes();
    let mut i = 0;
    let token = |i: usize| -> (String, usize) {
        if b[i] == b'\'' {
            let mut j = i + 1;
            while j < b.len() {
                if b[j] == b'\'' && b[j - 1] != b'\\' {
                    return (p[i..=j].to_string(), j + 1);
                }
                j += 1;
            }
            return (p[i..].to_string(), b.len());
        }
        if matches!(b[i], b'.' | b'[' | b']') {
            return (p[i..=i].to_string(), i + 1);
        }
        let mut j = i;
        while j < b.len() && !matches!(b[j], b'.' | b'[' | b']') {
            j += 1;
        }
        (p[i..j].to_string(), j)
    };
    while i < b.len() {
        let (tok, next) = token(i);
        i = next;
        let name = match tok.as_str() {
            "[" => {
                if i >= b.len() {
                    return Err("unexpected end of JSON path".into());
                }
                let (q, next) = token(i);
                i = next;
                if q.len() < 2 || !q.starts_with('\'') || !q.ends_with('\'') {
                    return Err(format!("expected single quoted string but got {q}"));
                }
                let name = unescape_single_quote(&q[1..q.len() - 1])?;
                if i >= b.len() {
                    return Err("unexpected end of JSON path".into());
                }
                let (close, next) = token(i);
                i = next;
                if close != "]" {
                    return Err(format!("expected ] but got {close}"));
                }
                name
            }
            "." => {
                if i >= b.len() {
                    return Err("unexpected end of JSON path".into());
                }
                let (name, next) = token(i);
                i = next;
                name
            }
            other => return Err(format!("expected [ or . but got: {other}")),
        };
        s = if let Some(props) = &s.properties {
            props.get(&name).ok_or("does not refer to a valid field")?
        } else if let Some(JSONSchemaPropsOrBool::Schema(v)) = &s.additional_properties {
            v
        } else {
            return Err("does not refer to a valid field".into());
        };
    }
    Ok(())
}

fn unescape_single_quote(s: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        out.push(match chars.next() {
            Some('a') => '\u{7}',
            Some('b') => '\u{8}',
            Some('f') => '\u{c}',
            Some('n') => '\n',
            Some('r') => '\r',
            Some('t') => '\t',
            Some('v') => '\u{b}',
            Some('\'') => '\'',
            Some('\\') => '\\',
            Some(o) => return Err(format!("invalid string literal: invalid escape char \\{o}")),
            None => '\\',
        });
    }
    Ok(out)
}

/// Compile a message expression; its cost, or why it does not compile.
fn message_expression(m: &str, env: &Env<'_>, decl: &Decl) -> Result<u64, String> {
    let parsed = expr::parse(m, &[]).map_err(|e| format!("does not compile: {e}"))?;
    let checked = checker::check(&parsed, env);
    if let Some(e) = checked.errors.first() {
        return Err(format!("does not compile: {e}"));
    }
    let t = &checked.types[parsed.root.id];
    if !matches!(t, Ty::P(Prim::String)) {
        return Err(format!(
            "evaluates to {t}, and a messageExpression must evaluate to a string"
        ));
    }
    Ok(super::cel::coster::cost(&parsed.root, &checked, decl).max)
}

#[cfg(test)]
mod tests {
    use super::field_path;
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;

    #[test]
    fn field_paths_as_the_api_server_reads_them() {
        let s: JSONSchemaProps = serde_json::from_value(serde_json::json!({
            "type": "object",
            "properties": {
                "a": {"type": "object", "properties": {"b.c": {"type": "string"}}},
                "m": {"type": "object", "additionalProperties": {"type": "string"}}
            }
        }))
        .unwrap();
        assert!(field_path(".a", &s).is_ok());
        assert!(field_path(".a['b.c']", &s).is_ok());
        assert!(field_path(".m.anything", &s).is_ok());
        assert!(field_path("a", &s).is_err());
        assert!(field_path(".x", &s).is_err());
        assert!(field_path(".a[0]", &s).is_err());
        assert!(field_path(".a.", &s).is_err());
    }
}
