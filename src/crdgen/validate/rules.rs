//! One `x-kubernetes-validations` rule compiled against the schema it sits on, as kube-apiserver
//! compiles it: the `cel` crate parses the rule and its `messageExpression` (maintained CEL parser
//! for Rust, with the macros expanded as cel-go expands them); this module then resolves every
//! variable, field and function the way the API server's type checker does (`self`/`oldSelf`
//! only, fields of the schema, the CEL standard library plus Kubernetes' libraries), and estimates
//! the rule's cost against the API server's budget.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool, ValidationRule,
};

use cel::common::ast::{Expr, IdedExpr};

use super::cost::{self, RULE_COST_LIMIT};
use super::{Place, Refusal};

/// Functions and operators of CEL's standard library, its extensions and Kubernetes' libraries
/// (`k8s.io/apiserver/pkg/cel/library`) that CRD rules can call, by name.
const FUNCTIONS: &[&str] = &[
    // Operators, as the parser names them.
    "_?_:_",
    "_&&_",
    "_||_",
    "!_",
    "_-_",
    "_+_",
    "_*_",
    "_/_",
    "_%_",
    "_==_",
    "_!=_",
    "_>=_",
    "_<=_",
    "_>_",
    "_<_",
    "-_",
    "_[_]",
    "_[?_]",
    "_?._",
    "@in",
    "@not_strictly_false",
    // Standard library.
    "size",
    "contains",
    "startsWith",
    "endsWith",
    "matches",
    "int",
    "uint",
    "double",
    "string",
    "bytes",
    "bool",
    "duration",
    "timestamp",
    "type",
    "dyn",
    "getDate",
    "getDayOfMonth",
    "getDayOfWeek",
    "getDayOfYear",
    "getFullYear",
    "getHours",
    "getMilliseconds",
    "getMinutes",
    "getMonth",
    "getSeconds",
    // Strings extension.
    "charAt",
    "indexOf",
    "lastIndexOf",
    "lowerAscii",
    "upperAscii",
    "replace",
    "split",
    "substring",
    "trim",
    "join",
    "reverse",
    "quote",
    "format",
    // Kubernetes: lists, regex, URLs, IPs/CIDRs, quantities, semver, named formats.
    "isSorted",
    "sum",
    "min",
    "max",
    "find",
    "findAll",
    "url",
    "isURL",
    "getScheme",
    "getHost",
    "getHostname",
    "getPort",
    "getEscapedPath",
    "getQuery",
    "ip",
    "isIP",
    "cidr",
    "isCIDR",
    "family",
    "isUnspecified",
    "isLoopback",
    "isLinkLocalMulticast",
    "isLinkLocalUnicast",
    "isGlobalUnicast",
    "containsIP",
    "containsCIDR",
    "prefixLength",
    "masked",
    "quantity",
    "isQuantity",
    "sign",
    "isGreaterThan",
    "isLessThan",
    "compareTo",
    "asApproximateFloat",
    "asInteger",
    "isInteger",
    "add",
    "sub",
    "semver",
    "isSemver",
    "major",
    "minor",
    "patch",
    "named",
    "validate",
    "escapeKey",
    // Macros kept as calls, sets, math, encoders, optionals.
    "transformList",
    "transformMap",
    "transformMapEntry",
    "equivalent",
    "intersects",
    "greatest",
    "least",
    "ceil",
    "floor",
    "round",
    "trunc",
    "abs",
    "isInf",
    "isNaN",
    "isFinite",
    "bitAnd",
    "bitOr",
    "bitXor",
    "bitNot",
    "bitShiftLeft",
    "bitShiftRight",
    "sqrt",
    "encode",
    "decode",
    "of",
    "none",
    "ofNonZeroValue",
    "hasValue",
    "value",
    "orValue",
    "or",
    "range",
    "slice",
    "flatten",
    "distinct",
    "sort",
    "sortBy",
    "first",
    "last",
];
/// Namespaces of the libraries above (`sets.contains(..)` parses as a call on `sets`).
const NAMESPACES: &[&str] = &[
    "sets",
    "math",
    "strings",
    "base64",
    "optional",
    "lists",
    "format",
    "jsonpatch",
];
/// Functions whose cost grows with the length of the string they read.
const STRING_TRAVERSING: &[&str] = &[
    "contains",
    "startsWith",
    "endsWith",
    "matches",
    "find",
    "findAll",
    "split",
    "replace",
    "lowerAscii",
    "upperAscii",
    "trim",
    "indexOf",
    "lastIndexOf",
    "substring",
    "_==_",
    "_!=_",
    "_+_",
    "url",
    "isURL",
    "ip",
    "isIP",
    "cidr",
    "isCIDR",
    "quantity",
    "isQuantity",
    "semver",
    "isSemver",
];

#[derive(Clone, Copy)]
enum Ty<'a> {
    Schema(&'a JSONSchemaProps),
    Dyn,
}

struct Checker<'a> {
    node: &'a JSONSchemaProps,
    /// The schema of the whole object (its root has apiVersion, kind and metadata).
    root: &'a JSONSchemaProps,
    scope: Vec<(String, Ty<'a>)>,
    uses_old_self: bool,
    errors: Vec<String>,
}

/// Check `rule` on `node`; push what the API server would refuse.
pub(super) fn check<'a>(
    rule: &ValidationRule,
    node: &'a JSONSchemaProps,
    place: &Place<'a>,
    out: &mut Vec<Refusal>,
) {
    let mut refuse = |reason: String, fix: &str| {
        out.push(Refusal {
            path: place.path.clone(),
            reason,
            fix: fix.into(),
            rule: Some(rule.rule.clone()),
        })
    };
    let program = match cel::Program::compile(&rule.rule) {
        Ok(p) => p,
        Err(e) => {
            refuse(
                format!(
                    "the rule `{}` does not compile: {}",
                    rule.rule,
                    one_line(&e.to_string())
                ),
                "fix the CEL syntax of the rule",
            );
            return;
        }
    };
    let mut c = Checker {
        node,
        root: place.root,
        scope: Vec::new(),
        uses_old_self: false,
        errors: Vec::new(),
    };
    let (ty, cost) = c.expr(&program.expression().expr);
    for e in c.errors.drain(..) {
        refuse(
            format!("the rule `{}` does not compile: {e}", rule.rule),
            "refer only to `self`, `oldSelf`, fields of this schema and CEL/Kubernetes library functions",
        );
    }
    if let Ty::Schema(s) = ty
        && let Some(t) = s.type_.as_deref()
        && t != "boolean"
    {
        refuse(
            format!("the rule `{}` evaluates to {t}, not bool", rule.rule),
            "make the rule a condition (e.g. a comparison)",
        );
    }
    if c.uses_old_self && !place.correlatable {
        refuse(
            format!(
                "the rule `{}` uses oldSelf, which cannot be used on the uncorrelatable portion of the schema (inside a list that is not `x-kubernetes-list-type: map`)",
                rule.rule
            ),
            "move the rule above the list, or make the list a list-map (`x-kubernetes-list-type: map` with `x-kubernetes-list-map-keys`)",
        );
    }
    if rule.optional_old_self == Some(true) && !c.uses_old_self {
        refuse(
            format!(
                "the rule `{}` sets optionalOldSelf but does not use oldSelf",
                rule.rule
            ),
            "drop `.optional_old_self(true)` or use oldSelf in the rule",
        );
    }
    if let Some(m) = &rule.message_expression {
        match cel::Program::compile(m) {
            Err(e) => refuse(
                format!(
                    "the messageExpression `{m}` does not compile: {}",
                    one_line(&e.to_string())
                ),
                "fix the CEL syntax of the message expression",
            ),
            Ok(p) => {
                let mut mc = Checker {
                    node,
                    root: place.root,
                    scope: Vec::new(),
                    uses_old_self: false,
                    errors: Vec::new(),
                };
                mc.expr(&p.expression().expr);
                for e in mc.errors {
                    refuse(
                        format!("the messageExpression `{m}` does not compile: {e}"),
                        "refer only to `self`, fields of this schema and library functions",
                    );
                }
            }
        }
    }
    if cost > RULE_COST_LIMIT {
        refuse(
            format!(
                "the estimated cost of the rule `{}` exceeds the budget by a factor of {:.1}x",
                rule.rule,
                cost / RULE_COST_LIMIT
            ),
            "bound the lists, maps and strings the rule reads with `#[schemars(length(max = N))]` (maxItems/maxProperties/maxLength), or simplify the rule",
        );
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A CEL field name back to the property it escapes (`__dash__` for `-`, `__dot__` for `.`...).
fn unescape(field: &str) -> String {
    field
        .replace("__underscores__", "\u{0}")
        .replace("__dot__", ".")
        .replace("__dash__", "-")
        .replace("__slash__", "/")
        .replace('\u{0}', "__")
}

impl<'a> Checker<'a> {
    fn expr(&mut self, e: &Expr) -> (Ty<'a>, f64) {
        match e {
            Expr::Ident(name) => (self.ident(name), 1.0),
            Expr::Select(sel) => {
                let (t, c) = self.expr(&sel.operand.expr);
                let field = self.field(t, &sel.field);
                // `has(x.f)` is a select that tests presence: a bool.
                (if sel.test { Ty::Dyn } else { field }, c + 1.0)
            }
            Expr::Literal(_) | Expr::Unspecified => (Ty::Dyn, 0.0),
            Expr::List(l) => (Ty::Dyn, 1.0 + self.sum(l.elements.iter())),
            Expr::Map(m) => {
                let mut c = 1.0;
                for entry in &m.entries {
                    if let cel::common::ast::EntryExpr::MapEntry(me) = &entry.expr {
                        c += self.expr(&me.key.expr).1 + self.expr(&me.value.expr).1;
                    }
                }
                (Ty::Dyn, c)
            }
            Expr::Struct(_) => (Ty::Dyn, 1.0),
            Expr::Call(call) => self.call(call),
            Expr::Comprehension(comp) => {
                let (range, range_cost) = self.expr(&comp.iter_range.expr);
                let (elem, n) = match range {
                    Ty::Schema(s) => element(s),
                    Ty::Dyn => (Ty::Dyn, 1.0),
                };
                let init = self.expr(&comp.accu_init.expr).1;
                self.scope.push((comp.iter_var.clone(), elem));
                if let Some(v2) = &comp.iter_var2 {
                    self.scope.push((v2.clone(), Ty::Dyn));
                }
                self.scope.push((comp.accu_var.clone(), Ty::Dyn));
                let body = self.expr(&comp.loop_cond.expr).1 + self.expr(&comp.loop_step.expr).1;
                let (rt, result) = self.expr(&comp.result.expr);
                self.scope.pop();
                if comp.iter_var2.is_some() {
                    self.scope.pop();
                }
                self.scope.pop();
                (rt, range_cost + init + n * (body + 1.0) + result)
            }
        }
    }

    fn sum<'e>(&mut self, es: impl Iterator<Item = &'e IdedExpr>) -> f64 {
        es.map(|e| self.expr(&e.expr).1).sum()
    }

    fn ident(&mut self, name: &str) -> Ty<'a> {
        if let Some((_, t)) = self.scope.iter().rev().find(|(n, _)| n == name) {
            return *t;
        }
        match name {
            "self" => Ty::Schema(self.node),
            "oldSelf" => {
                self.uses_old_self = true;
                Ty::Schema(self.node)
            }
            _ => {
                self.errors
                    .push(format!("undeclared reference to '{name}'"));
                Ty::Dyn
            }
        }
    }

    fn field(&mut self, t: Ty<'a>, field: &str) -> Ty<'a> {
        let Ty::Schema(s) = t else { return Ty::Dyn };
        if let Some(props) = &s.properties
            && let Some(p) = props.get(field).or_else(|| props.get(&unescape(field)))
        {
            return Ty::Schema(p);
        }
        if let Some(JSONSchemaPropsOrBool::Schema(v)) = &s.additional_properties {
            return Ty::Schema(v);
        }
        // The root (and an embedded resource) also has apiVersion, kind and metadata.
        let object_meta = matches!(field, "apiVersion" | "kind" | "metadata")
            && (std::ptr::eq(s, self.root) || s.x_kubernetes_embedded_resource == Some(true));
        if object_meta
            || s.x_kubernetes_preserve_unknown_fields == Some(true)
            || s.x_kubernetes_embedded_resource == Some(true)
            || s.additional_properties.is_some()
        {
            return Ty::Dyn;
        }
        match s.type_.as_deref() {
            Some("object") => self.errors.push(format!("undefined field '{field}'")),
            Some(other) => self
                .errors
                .push(format!("type '{other}' does not support field selection")),
            None => return Ty::Dyn,
        }
        Ty::Dyn
    }

    fn call(&mut self, call: &cel::common::ast::CallExpr) -> (Ty<'a>, f64) {
        let mut target_ty = None;
        let mut cost = 1.0;
        if let Some(t) = &call.target {
            if let Expr::Ident(ns) = &t.expr
                && NAMESPACES.contains(&ns.as_str())
                && !self.scope.iter().any(|(n, _)| n == ns)
            {
                // A library namespace, not a variable.
            } else {
                let (ty, c) = self.expr(&t.expr);
                target_ty = Some(ty);
                cost += c;
            }
        }
        let mut arg_tys = Vec::new();
        for a in &call.args {
            let (ty, c) = self.expr(&a.expr);
            arg_tys.push(ty);
            cost += c;
        }
        let name = call.func_name.as_str();
        if !FUNCTIONS.contains(&name) {
            self.errors
                .push(format!("undeclared reference to '{name}'"));
        }
        if STRING_TRAVERSING.contains(&name) {
            let len = target_ty
                .into_iter()
                .chain(arg_tys.iter().copied())
                .filter_map(|t| match t {
                    Ty::Schema(s) if s.type_.as_deref() == Some("string") => {
                        Some(cost::max_length(s))
                    }
                    _ => None,
                })
                .fold(0.0, f64::max);
            let mut traversal = (len * 0.1).ceil();
            // A regular expression costs per character of the string times its own length / 4.
            if matches!(name, "matches" | "find" | "findAll")
                && let Some(pattern) = call.args.last()
                && let Expr::Literal(cel::common::ast::LiteralValue::String(p)) = &pattern.expr
            {
                traversal *= (p.len() as f64 * 0.25).ceil().max(1.0);
            }
            cost += traversal;
        }
        let ty = match (name, target_ty, arg_tys.first()) {
            ("_[_]", None, Some(Ty::Schema(s))) => element(s).0,
            _ => Ty::Dyn,
        };
        (ty, cost)
    }
}

/// The element type of a list or map schema (map: its keys, strings), and how many it can hold.
fn element(s: &JSONSchemaProps) -> (Ty<'_>, f64) {
    match (&s.items, &s.additional_properties) {
        (Some(JSONSchemaPropsOrArray::Schema(i)), _) => (Ty::Schema(i), cost::max_items(s)),
        (_, Some(_)) => (Ty::Dyn, cost::max_properties(s)),
        _ if s.type_.as_deref() == Some("object") => (
            Ty::Dyn,
            s.properties.as_ref().map_or(1.0, |p| p.len() as f64),
        ),
        _ => (Ty::Dyn, 1.0),
    }
}
