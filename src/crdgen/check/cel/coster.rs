//! The static cost of a checked rule, estimated as kube-apiserver estimates it: cel-go's
//! `checker.Cost` (v0.26, `checker/cost.go`) with has() free, the list and set extensions' own
//! estimators, and Kubernetes' `library.CostEstimator` (`k8s.io/apiserver/pkg/cel/library/
//! cost.go`) sizing values through the schema's CEL declaration. This is a port: the same
//! traversal, the same size tracking (paths through the declaration, literal sizes, entry sizes
//! of list and map literals), the same factors and rounding, so the worst case it returns is the
//! API server's to the unit (checked against the real one in `tests/apiserver/crds.rs`).

use std::collections::HashMap;

use super::checker::Checked;
use super::decl::Decl;
use super::expr::{ACCU, Comp, E, Lit, Node};
use super::types::{OPTIONAL, Ty};

/// `common.StringTraversalCostFactor`.
const STRING_TRAVERSAL: f64 = 0.1;
/// `common.RegexStringLengthCostFactor`.
const REGEX_LENGTH: f64 = 0.25;
/// `cel.MaxNameFormatRegexSize`.
const MAX_NAME_FORMAT_REGEX: f64 = 128.0;
/// `cel.MaxFormatSize`.
const MAX_FORMAT_SIZE: u64 = 64;
const LIST_CREATE: u64 = 10;
const MAP_CREATE: u64 = 30;
const STRUCT_CREATE: u64 = 40;

/// A range: of sizes, or of costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::crdgen) struct Est {
    pub min: u64,
    pub max: u64,
}

const UNKNOWN: Est = Est {
    min: 0,
    max: u64::MAX,
};

fn fixed(n: u64) -> Est {
    Est { min: n, max: n }
}

fn by_factor(x: u64, f: f64) -> u64 {
    let xf = x as f64;
    if xf > 0.0 && f > 0.0 && xf > u64::MAX as f64 / f {
        return u64::MAX;
    }
    let c = (xf * f).ceil();
    if c >= 18446744073709551616.0 {
        u64::MAX
    } else {
        c as u64
    }
}

impl Est {
    fn add(self, o: Est) -> Est {
        Est {
            min: self.min.saturating_add(o.min),
            max: self.max.saturating_add(o.max),
        }
    }
    fn mul(self, o: Est) -> Est {
        Est {
            min: self.min.saturating_mul(o.min),
            max: self.max.saturating_mul(o.max),
        }
    }
    fn factor(self, f: f64) -> Est {
        Est {
            min: by_factor(self.min, f),
            max: by_factor(self.max, f),
        }
    }
    fn union(self, o: Est) -> Est {
        Est {
            min: self.min.min(o.min),
            max: self.max.max(o.max),
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct EntrySize {
    list: bool,
    key: Est,
    val: Est,
}

fn entry_union(a: Option<EntrySize>, b: Option<EntrySize>) -> Option<EntrySize> {
    let (a, b) = (a?, b?);
    Some(EntrySize {
        list: a.list,
        key: a.key.union(b.key),
        val: a.val.union(b.val),
    })
}

#[derive(Debug, Clone)]
struct LocalVar {
    path: Vec<String>,
    size: Option<Est>,
    entry: Option<EntrySize>,
}

/// `checker.AstNode`: what an estimator sees of an argument.
struct AstNode<'x, 'd> {
    path: Vec<String>,
    ty: Ty<'d>,
    expr: Option<&'x E>,
    size: Option<Est>,
}

/// The worst-case cost range of `e`, checked as `checked`, on a node declared `root`.
pub(in crate::crdgen) fn cost(e: &E, checked: &Checked<'_>, root: &Decl) -> Est {
    let mut c = Coster {
        checked,
        root,
        paths: HashMap::new(),
        sizes: HashMap::new(),
        entries: HashMap::new(),
        locals: HashMap::new(),
    };
    c.cost(e)
}

struct Coster<'c, 'd> {
    checked: &'c Checked<'d>,
    root: &'c Decl,
    paths: HashMap<usize, Vec<String>>,
    sizes: HashMap<usize, Est>,
    entries: HashMap<usize, EntrySize>,
    locals: HashMap<String, Vec<LocalVar>>,
}

/// `isBind`: an empty range, a false condition, an accumulator of its own.
fn is_bind(c: &Comp) -> bool {
    matches!(&c.range.node, Node::List(l) if l.is_empty())
        && matches!(c.cond.node, Node::Lit(Lit::Bool(false)))
        && c.accu != ACCU
}

impl<'c, 'd> Coster<'c, 'd> {
    fn ty(&self, e: &E) -> Ty<'d> {
        self.checked.types[e.id].clone()
    }

    fn local(&self, name: &str) -> Option<&LocalVar> {
        self.locals.get(name).and_then(|v| v.last())
    }

    fn push(&mut self, name: &str, v: LocalVar) {
        self.locals.entry(name.into()).or_default().push(v);
    }

    fn pop(&mut self, name: &str) {
        if let Some(v) = self.locals.get_mut(name) {
            v.pop();
        }
    }

    fn path(&self, e: &E) -> Vec<String> {
        if let Node::Ident(n) = &e.node
            && let Some(v) = self.local(n)
        {
            return v.path.clone();
        }
        self.paths.get(&e.id).cloned().unwrap_or_default()
    }

    /// The Kubernetes size estimator: the declared bound of the node a path leads to.
    fn estimate_size(&self, path: &[String]) -> Option<Est> {
        if path.is_empty() {
            return None;
        }
        let mut d = self.root;
        for step in &path[1..] {
            d = d.step(step)?;
        }
        Some(Est {
            min: 0,
            max: d.max_elements,
        })
    }

    fn compute_size(&mut self, e: &E) -> Option<Est> {
        if let Some(s) = self.sizes.get(&e.id) {
            return Some(*s);
        }
        let literal = match &e.node {
            Node::Lit(Lit::String(s)) => Some(s.chars().count() as u64),
            Node::Lit(Lit::Bytes(n)) => Some(*n),
            Node::Lit(_) => Some(1),
            Node::List(l) => Some(l.len() as u64),
            Node::Map(m) => Some(m.len() as u64),
            _ => None,
        };
        if let Some(n) = literal {
            return Some(fixed(n));
        }
        if let Some(s) = self.estimate_size(&self.path(e)) {
            self.sizes.insert(e.id, s);
            return Some(s);
        }
        if self.ty(e).is_scalar() {
            return Some(fixed(1));
        }
        if let Node::Ident(n) = &e.node
            && let Some(v) = self.local(n)
        {
            return v.size;
        }
        None
    }

    fn size_or_unknown(&mut self, e: &E) -> Est {
        self.compute_size(e).unwrap_or(UNKNOWN)
    }

    fn entry_size(&self, e: &E) -> Option<EntrySize> {
        if let Some(s) = self.entries.get(&e.id) {
            return Some(*s);
        }
        if let Node::Ident(n) = &e.node {
            return self.local(n).and_then(|v| v.entry);
        }
        None
    }

    fn node<'x>(&mut self, e: &'x E) -> AstNode<'x, 'd> {
        let mut path = self.path(e);
        if path.first().is_some_and(|p| p == ACCU || p == "__result__") {
            path.clear();
        }
        AstNode {
            path,
            ty: self.ty(e),
            expr: Some(e),
            size: self.compute_size(e),
        }
    }

    /// `library.CostEstimator.sizeEstimate` (and the extensions' `estimateSize`).
    fn node_size(&self, n: &AstNode<'_, '_>) -> Est {
        n.size
            .or_else(|| self.estimate_size(&n.path))
            .unwrap_or(UNKNOWN)
    }

    fn cost(&mut self, e: &E) -> Est {
        match &e.node {
            Node::Lit(_) => fixed(0),
            Node::Ident(n) => {
                let path = match self.local(n) {
                    Some(v) => v.path.clone(),
                    None => vec![n.clone()],
                };
                self.paths.insert(e.id, path);
                fixed(1)
            }
            Node::Select {
                operand,
                field,
                test,
            } => {
                if *test {
                    // has() is free (PresenceTestHasCost(false)).
                    return self.cost(operand);
                }
                let mut sum = self.cost(operand);
                if matches!(self.ty(operand), Ty::Map(..) | Ty::Object(_) | Ty::Param(_)) {
                    sum = sum.add(fixed(1));
                }
                let mut path = self.path(operand);
                path.push(field.clone());
                self.paths.insert(e.id, path);
                sum
            }
            Node::Call { func, target, args } => self.call(e, func, target.as_deref(), args),
            Node::List(items) => {
                let mut sum = fixed(0);
                let mut item = Est {
                    min: if items.is_empty() { 0 } else { u64::MAX },
                    max: 0,
                };
                for x in items {
                    sum = sum.add(self.cost(x));
                    let s = self.size_or_unknown(x);
                    item = item.union(s);
                }
                self.entries.insert(
                    e.id,
                    EntrySize {
                        list: true,
                        key: fixed(1),
                        val: item,
                    },
                );
                sum.add(fixed(LIST_CREATE))
            }
            Node::Map(entries) => {
                let mut sum = fixed(0);
                let empty = if entries.is_empty() { 0 } else { u64::MAX };
                let mut key = Est { min: empty, max: 0 };
                let mut val = Est { min: empty, max: 0 };
                for (k, v) in entries {
                    sum = sum.add(self.cost(k)).add(self.cost(v));
                    let ks = self.size_or_unknown(k);
                    key = key.union(ks);
                    let vs = self.size_or_unknown(v);
                    val = val.union(vs);
                }
                self.entries.insert(
                    e.id,
                    EntrySize {
                        list: false,
                        key,
                        val,
                    },
                );
                sum.add(fixed(MAP_CREATE))
            }
            Node::Struct(values) => {
                let mut sum = fixed(0);
                for v in values {
                    sum = sum.add(self.cost(v));
                }
                sum.add(fixed(STRUCT_CREATE))
            }
            Node::Comp(c) if is_bind(c) => self.bind(e, c),
            Node::Comp(c) => self.comprehension(e, c),
        }
    }

    /// `costBind`: a bind is evaluated lazily, once.
    fn bind(&mut self, e: &E, c: &Comp) -> Est {
        let mut sum = self.cost(&c.range).add(self.cost(&c.init));
        let accu = LocalVar {
            path: self.path(&c.init),
            size: self.compute_size(&c.init),
            entry: self.entry_size(&c.init),
        };
        self.push(&c.accu, accu);
        sum = sum.add(self.cost(&c.result));
        self.pop(&c.accu);
        if let Some(s) = self.compute_size(&c.result) {
            self.sizes.insert(e.id, s);
        }
        if let Some(s) = self.entry_size(&c.result) {
            self.entries.insert(e.id, s);
        }
        sum
    }

    fn comprehension(&mut self, e: &E, c: &Comp) -> Est {
        let mut sum = self.cost(&c.range);
        sum = sum.add(self.cost(&c.init));
        let accu = LocalVar {
            path: self.path(&c.init),
            size: self.compute_size(&c.init),
            entry: self.entry_size(&c.init),
        };
        self.push(&c.accu, accu);
        let entry = self.entry_size(&c.range);
        let list = entry
            .map(|s| s.list)
            .unwrap_or(matches!(self.ty(&c.range), Ty::List(_)));
        let range_path = self.path(&c.range);
        let with = |sub: &str| {
            let mut p = range_path.clone();
            p.push(sub.into());
            p
        };
        match &c.var2 {
            Some(v2) => {
                let key = LocalVar {
                    path: with(if list { "@indices" } else { "@keys" }),
                    size: entry.map(|s| s.key),
                    entry: None,
                };
                let value = LocalVar {
                    path: with(if list { "@items" } else { "@values" }),
                    size: entry.map(|s| s.val),
                    entry: None,
                };
                self.push(&c.var, key);
                self.push(v2, value);
            }
            None => {
                let single = LocalVar {
                    path: with(if list { "@items" } else { "@keys" }),
                    size: entry.map(|s| if list { s.val } else { s.key }),
                    entry: None,
                };
                self.push(&c.var, single);
            }
        }
        let loop_cost = self.cost(&c.cond);
        let step_cost = self.cost(&c.step);
        self.pop(&c.var);
        if let Some(v2) = &c.var2 {
            self.pop(v2);
        }
        sum = sum.add(self.cost(&c.result));
        self.pop(&c.accu);
        let range_count = self.size_or_unknown(&c.range);
        sum = sum.add(range_count.mul(step_cost.add(loop_cost)));
        match &c.init.node {
            Node::Lit(_) => {
                if let Some(s) = self.compute_size(&c.init) {
                    self.sizes.insert(e.id, s);
                }
            }
            Node::List(_) | Node::Map(_) => {
                self.sizes.insert(e.id, range_count);
                if let Some(s) = self.entry_size(&c.step) {
                    self.entries.insert(e.id, s);
                }
            }
            _ => {}
        }
        sum
    }

    fn call(&mut self, e: &E, func: &str, target: Option<&E>, args: &[E]) -> Est {
        if func == "dyn" && args.len() == 1 {
            let c = self.cost(&args[0]);
            if let Some(s) = self.compute_size(&args[0]) {
                self.sizes.insert(e.id, s);
            }
            if let Some(s) = self.entry_size(&args[0]) {
                self.entries.insert(e.id, s);
            }
            return fixed(1).add(c);
        }
        let mut arg_costs = Vec::new();
        let mut arg_nodes = Vec::new();
        for a in args {
            arg_costs.push(self.cost(a));
            arg_nodes.push(self.node(a));
        }
        let ids = self.checked.overloads[e.id].clone();
        if ids.is_empty() {
            return fixed(0);
        }
        let mut sum = fixed(0);
        let target_node = match target {
            Some(t) => {
                sum = sum.add(self.cost(t));
                Some(self.node(t))
            }
            None => None,
        };
        let mut fn_cost = Est {
            min: u64::MAX,
            max: 0,
        };
        let mut result: Option<Est> = None;
        for id in ids {
            let (c, r) =
                self.function_cost(e, func, id, target_node.as_ref(), &arg_nodes, &arg_costs);
            fn_cost = fn_cost.union(c);
            if let Some(r) = r {
                result = Some(match result {
                    None => r,
                    Some(prev) => prev.union(r),
                });
            }
            if let ("index_list" | "index_map", Some(list)) = (id, args.first()) {
                result = self.entry_size(list).map(|s| s.val);
                let mut p = self.path(list);
                p.push(
                    if id == "index_list" {
                        "@items"
                    } else {
                        "@values"
                    }
                    .into(),
                );
                self.paths.insert(e.id, p);
            }
            if result.is_none() {
                result = self.compute_size(e);
            }
        }
        if let Some(r) = result {
            self.sizes.insert(e.id, r);
        }
        sum.add(fn_cost)
    }

    /// `coster.functionCost`: the extensions' estimators, then Kubernetes', then cel-go's own.
    fn function_cost(
        &mut self,
        e: &E,
        func: &str,
        id: &str,
        target: Option<&AstNode<'_, 'd>>,
        args: &[AstNode<'_, 'd>],
        arg_costs: &[Est],
    ) -> (Est, Option<Est>) {
        let arg_sum = arg_costs.iter().fold(fixed(0), |a, c| a.add(*c));
        if let Some((c, r)) = self.extension_cost(id, target, args) {
            return (c.add(arg_sum), r);
        }
        if let Some((c, r)) = self.kubernetes_cost(func, id, target, args) {
            return (c.add(arg_sum), r);
        }
        let size = |n: &AstNode<'_, '_>| n.size.unwrap_or(UNKNOWN);
        match id {
            "string_format" if target.is_some() => {
                let t = size(target.expect("target"));
                return (t.factor(STRING_TRAVERSAL).add(arg_sum), None);
            }
            "string_to_bytes" if args.len() == 1 => {
                let sz = size(&args[0]);
                let r = Est {
                    min: sz.min,
                    max: sz.max.saturating_mul(4),
                };
                return (sz.factor(STRING_TRAVERSAL).add(arg_sum), Some(r));
            }
            "bytes_to_string" if args.len() == 1 => {
                let sz = size(&args[0]);
                let r = Est {
                    min: sz.min / 4,
                    max: sz.max,
                };
                return (sz.factor(STRING_TRAVERSAL).add(arg_sum), Some(r));
            }
            "strings_quote" if args.len() == 1 => {
                let sz = size(&args[0]);
                let r = Est {
                    min: sz.min.saturating_add(2),
                    max: sz.max.saturating_mul(2).saturating_add(2),
                };
                return (sz.factor(STRING_TRAVERSAL).add(arg_sum), Some(r));
            }
            "starts_with_string" | "ends_with_string" if args.len() == 1 => {
                return (size(&args[0]).factor(STRING_TRAVERSAL).add(arg_sum), None);
            }
            "in_list" if args.len() == 2 => {
                return (size(&args[1]).factor(1.0).add(arg_sum), None);
            }
            "matches_string" if target.is_some() && args.len() == 1 => {
                let s = size(target.expect("target"))
                    .add(fixed(1))
                    .factor(STRING_TRAVERSAL);
                let r = size(&args[0]).factor(REGEX_LENGTH);
                return (s.mul(r).add(arg_sum), None);
            }
            "contains_string" if target.is_some() && args.len() == 1 => {
                let s = size(target.expect("target")).factor(STRING_TRAVERSAL);
                let sub = size(&args[0]).factor(STRING_TRAVERSAL);
                return (s.mul(sub).add(arg_sum), None);
            }
            "logical_or" | "logical_and" => {
                let (l, r) = (arg_costs[0], arg_costs[1]);
                return (
                    Est {
                        min: l.min,
                        max: l.add(r).max,
                    },
                    None,
                );
            }
            "conditional" => {
                let s = size(&args[1]).union(size(&args[2]));
                let a1 = args[1].expr.and_then(|x| self.entry_size(x));
                let a2 = args[2].expr.and_then(|x| self.entry_size(x));
                if let Some(en) = entry_union(a1, a2) {
                    self.entries.insert(e.id, en);
                }
                let c = arg_costs[0].add(arg_costs[1].union(arg_costs[2]));
                return (c, Some(s));
            }
            "add_string" | "add_bytes" | "add_list" if args.len() == 2 => {
                let r = size(&args[0]).add(size(&args[1]));
                let a0 = args[0].expr.and_then(|x| self.entry_size(x));
                let a1 = args[1].expr.and_then(|x| self.entry_size(x));
                if let Some(en) = entry_union(a0, a1) {
                    self.entries.insert(e.id, en);
                }
                let c = if id == "add_list" {
                    fixed(1)
                } else {
                    r.factor(STRING_TRAVERSAL)
                };
                return (c.add(arg_sum), Some(r));
            }
            "less_string"
            | "greater_string"
            | "less_equals_string"
            | "greater_equals_string"
            | "less_bytes"
            | "greater_bytes"
            | "less_equals_bytes"
            | "greater_equals_bytes"
            | "equals"
            | "not_equals" => {
                let smallest = size(&args[0]).max.min(size(&args[1]).max);
                let c = Est {
                    min: u64::from(smallest > 0),
                    max: smallest,
                };
                return (c.factor(STRING_TRAVERSAL).add(arg_sum), None);
            }
            _ => {}
        }
        (fixed(1).add(arg_sum), None)
    }

    /// The estimators the lists (v3) and sets extensions register for their overloads.
    fn extension_cost(
        &self,
        id: &str,
        target: Option<&AstNode<'_, 'd>>,
        args: &[AstNode<'_, 'd>],
    ) -> Option<(Est, Option<Est>)> {
        let allocating = |factor: f64, size: Est| {
            let c = size.factor(factor).add(fixed(1)).add(fixed(LIST_CREATE));
            Some((c, Some(size)))
        };
        let int_lit = |n: &AstNode<'_, '_>, default: u64| match n.expr.map(|e| &e.node) {
            Some(Node::Lit(Lit::Int(i))) => *i as u64,
            _ => default,
        };
        let elem_is_text = |t: &Ty<'_>| {
            matches!(
                t.param(),
                Some(Ty::P(super::decl::Prim::String | super::decl::Prim::Bytes))
            )
        };
        match id {
            "list_slice" => {
                let (t, [a, b]) = (target?, args) else {
                    return None;
                };
                let sz = self.node_size(t);
                let (start, end) = (int_lit(a, 0), int_lit(b, sz.max));
                allocating(1.0, fixed(end.wrapping_sub(start)))
            }
            "list_flatten" | "list_flatten_int" => {
                let t = target?;
                let depth = args.first().map_or(1, |a| int_lit(a, u64::MAX));
                allocating(depth as f64, self.node_size(t))
            }
            "lists_range" => allocating(1.0, fixed(int_lit(args.first()?, u64::MAX))),
            "list_reverse" => allocating(1.0, self.node_size(target?)),
            "list_distinct" => {
                let sz = self.node_size(target?);
                allocating(2.0, sz.mul(sz))
            }
            "list_sort" => {
                let t = target?;
                let sz = self.node_size(t);
                let f = if elem_is_text(&t.ty) { 2.1 } else { 2.0 };
                allocating(f, sz.mul(sz))
            }
            "list_sortByAssociatedKeys" => {
                let keys = args.first()?;
                let sz = self.node_size(keys);
                let f = if elem_is_text(&keys.ty) { 2.1 } else { 2.0 };
                allocating(f, sz.mul(sz))
            }
            "list_sets_contains_list"
            | "list_sets_intersects_list"
            | "list_sets_equivalent_list" => {
                let [a, b] = args else { return None };
                let f = if id == "list_sets_equivalent_list" {
                    2.0
                } else {
                    1.0
                };
                let c = self
                    .node_size(a)
                    .mul(self.node_size(b))
                    .factor(f)
                    .add(fixed(1));
                Some((c, None))
            }
            _ => None,
        }
    }

    /// The element of a list node, as `listElementNode` builds it.
    fn list_element<'x>(&self, list: &AstNode<'x, 'd>) -> Option<AstNode<'x, 'd>> {
        let elem = match &list.ty {
            Ty::List(e) => (**e).clone(),
            Ty::Map(k, _) => (**k).clone(),
            Ty::Opaque(_, ps) if !ps.is_empty() => ps[0].clone(),
            Ty::Type(t) => (**t).clone(),
            _ => return None,
        };
        let mut path = list.path.clone();
        if !path.is_empty() {
            path.push("@items".into());
        }
        Some(AstNode {
            path,
            ty: elem,
            expr: None,
            size: None,
        })
    }

    /// `library.CostEstimator.EstimateCallCost` of kube-apiserver.
    fn kubernetes_cost(
        &self,
        func: &str,
        id: &str,
        target: Option<&AstNode<'_, 'd>>,
        args: &[AstNode<'_, 'd>],
    ) -> Option<(Est, Option<Est>)> {
        let one = || Some((fixed(1), None));
        let traversal = |n: &AstNode<'_, '_>| self.node_size(n).factor(STRING_TRAVERSAL);
        match func {
            "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf" => {
                let t = target?;
                if let Some(el) = self.list_element(t) {
                    let mut el_cost = fixed(1);
                    if matches!(
                        el.ty,
                        Ty::P(super::decl::Prim::String | super::decl::Prim::Bytes)
                    ) {
                        el_cost = el_cost.add(self.node_size(&el).factor(STRING_TRAVERSAL));
                    }
                    Some((self.node_size(t).mul(el_cost), None))
                } else {
                    Some((traversal(t), None))
                }
            }
            "url" | "jsonpatch.escapeKey" if args.len() == 1 => {
                let sz = self.node_size(&args[0]);
                Some((sz.factor(STRING_TRAVERSAL), Some(sz)))
            }
            "lowerAscii" | "upperAscii" | "substring" | "trim" => {
                let sz = self.node_size(target?);
                Some((sz.factor(STRING_TRAVERSAL), Some(sz)))
            }
            "replace" => {
                let t = target?;
                if args.len() < 2 {
                    return None;
                }
                let sz = self.node_size(t);
                let to_replace = self.node_size(&args[0]);
                let with = self.node_size(&args[1]);
                let (mut count, mut retained) = (fixed(0), fixed(0));
                if to_replace.min == 0 {
                    count.max = sz.max.saturating_add(1);
                    retained.max = sz.max;
                } else if with.max <= to_replace.min {
                    retained.max = sz.max;
                } else {
                    count.max = (sz.max as f64 / to_replace.min as f64).ceil() as u64;
                }
                if to_replace.max == 0 {
                    count.min = sz.min.saturating_add(1);
                    retained.min = sz.min;
                } else if to_replace.max <= with.min {
                    retained.min = sz.min;
                } else {
                    count.min = (sz.min as f64 / to_replace.max as f64).ceil() as u64;
                }
                let size = count.mul(with).add(retained);
                Some((sz.factor(2.0 * STRING_TRAVERSAL), Some(size)))
            }
            "split" => {
                let sz = self.node_size(target?);
                let mut max = sz.max;
                if let Some(Node::Lit(Lit::Int(i))) =
                    args.get(1).and_then(|a| a.expr).map(|e| &e.node)
                {
                    max = *i as u64;
                }
                Some((sz.factor(2.0 * STRING_TRAVERSAL), Some(Est { min: 0, max })))
            }
            "join" => {
                let t = target?;
                let list = self.node_size(t);
                let mut sz = fixed(0);
                if let Some(el) = self.list_element(t) {
                    sz = list.mul(self.node_size(&el));
                }
                if let Some(sep) = args.first() {
                    let seps = Est {
                        min: list.min.saturating_sub(1),
                        max: list.max.saturating_sub(1),
                    };
                    sz = sz.add(self.node_size(sep).mul(seps));
                }
                Some((sz.factor(STRING_TRAVERSAL), Some(sz)))
            }
            "find" | "findAll" => {
                let t = target?;
                let re = args.first()?;
                let sz = self.node_size(t);
                let s = sz.add(fixed(1)).factor(STRING_TRAVERSAL);
                let r = self.node_size(re).factor(REGEX_LENGTH);
                Some((
                    s.mul(r),
                    Some(Est {
                        min: 0,
                        max: sz.max,
                    }),
                ))
            }
            "cidr" | "isIP" | "isCIDR" | "quantity" | "isQuantity" | "semver" | "isSemver" => {
                Some((traversal(args.first()?), None))
            }
            "ip" if id == "cidr_ip" => one(),
            "ip" => Some((traversal(args.first()?), None)),
            "ip.isCanonical" => Some((
                self.node_size(args.first()?).factor(2.0 * STRING_TRAVERSAL),
                None,
            )),
            "masked"
            | "prefixLength"
            | "family"
            | "isUnspecified"
            | "isLoopback"
            | "isLinkLocalMulticast"
            | "isLinkLocalUnicast"
            | "isGlobalUnicast" => one(),
            "containsIP" | "containsCIDR" => {
                let arg = args.first()?;
                let ip = Est { min: 4, max: 16 };
                let mut c = ip.add(ip).factor(STRING_TRAVERSAL);
                if func == "containsCIDR" {
                    c = c.add(ip.factor(STRING_TRAVERSAL)).add(fixed(1));
                }
                if id == "cidr_contains_ip_string" || id == "cidr_contains_cidr_string" {
                    c = c.add(self.node_size(arg).factor(STRING_TRAVERSAL));
                }
                Some((c, None))
            }
            "validate" => {
                let sz = self.node_size(args.first()?);
                let c = sz
                    .factor(STRING_TRAVERSAL)
                    .factor(MAX_NAME_FORMAT_REGEX * REGEX_LENGTH);
                Some((c, None))
            }
            "format.named" | "sign" | "asInteger" | "isInteger" | "asApproximateFloat"
            | "isGreaterThan" | "isLessThan" | "compareTo" | "add" | "sub" | "major" | "minor"
            | "patch" | "getScheme" | "getHostname" | "getHost" | "getPort" | "getEscapedPath"
            | "getQuery" => one(),
            "_==_" if args.len() == 2 && args[0].ty.same(&args[1].ty) => match &args[0].ty {
                Ty::Opaque(
                    "net.IP" | "net.CIDR" | "kubernetes.Quantity" | "kubernetes.Semver",
                    _,
                ) => one(),
                Ty::Opaque("kubernetes.NamedFormat", _) => Some((
                    Est {
                        min: 1,
                        max: MAX_FORMAT_SIZE,
                    }
                    .factor(STRING_TRAVERSAL),
                    None,
                )),
                Ty::Opaque("kubernetes.URL", _) => {
                    // kube-apiserver reads the right-hand side's size twice.
                    let size = args[1].size.map_or(fixed(1), |r| r.union(r));
                    Some((
                        Est {
                            min: 1,
                            max: size.max,
                        }
                        .factor(STRING_TRAVERSAL),
                        None,
                    ))
                }
                _ => None,
            },
            _ => {
                let _ = OPTIONAL;
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;
    use serde_json::json;

    use super::super::checker::{self, Env};
    use super::super::{cost, decl, expr};
    use super::Est;

    /// The estimated cost of `rule` on a node of `schema` (the root of a resource's spec).
    fn estimate(rule: &str, schema: serde_json::Value) -> Est {
        let schema: JSONSchemaProps = serde_json::from_value(schema).unwrap();
        let root = decl::decl(&schema, false).expect("CEL has a type for the schema");
        let parsed = expr::parse(rule, &[]).unwrap();
        let env = Env {
            root: &root,
            optional_old_self: false,
        };
        let checked = checker::check(&parsed, &env);
        assert!(checked.errors.is_empty(), "{rule}: {:?}", checked.errors);
        super::cost(&parsed.root, &checked, &root)
    }

    fn object(properties: serde_json::Value) -> serde_json::Value {
        json!({"type": "object", "properties": properties})
    }

    fn list_of_ints(max_items: Option<u64>) -> serde_json::Value {
        let mut list = json!({"type": "array", "items": {"type": "integer"}});
        if let Some(n) = max_items {
            list["maxItems"] = json!(n);
        }
        object(json!({ "items": list }))
    }

    fn string(max_length: Option<u64>) -> serde_json::Value {
        let mut s = json!({"type": "string"});
        if let Some(n) = max_length {
            s["maxLength"] = json!(n);
        }
        object(json!({ "name": s }))
    }

    #[test]
    fn identifiers_selections_and_comparisons_cost_one_each_and_constants_nothing() {
        let spec = object(json!({"replicas": {"type": "integer"}}));
        // cel-go: `self` 1, `.replicas` 1, `0` 0, `_>_` 1.
        assert_eq!(
            estimate("self.replicas > 0", spec.clone()),
            Est { min: 3, max: 3 }
        );
        // `has()` is free (Kubernetes' estimator), `_||_` short-circuits: its minimum is
        // its left side's.
        let e = estimate("!has(self.replicas) || self.replicas > 0", spec);
        assert!(e.min < e.max, "{e:?}");
    }

    #[test]
    fn a_comprehension_costs_in_proportion_to_the_list_s_max_items() {
        let ten = estimate("self.items.all(x, x > 0)", list_of_ints(Some(10)));
        let hundred = estimate("self.items.all(x, x > 0)", list_of_ints(Some(100)));
        assert!(ten.max > 10, "{ten:?}");
        // The per-item cost is the same; only the iteration count changes.
        let per_item = (hundred.max - ten.max) / 90;
        assert!(per_item > 0);
        assert_eq!(ten.max + per_item * 90, hundred.max, "{ten:?} {hundred:?}");
    }

    #[test]
    fn an_unbounded_list_is_sized_from_the_request_limit() {
        let bounded = estimate("self.items.all(x, x > 0)", list_of_ints(Some(1000)));
        let unbounded = estimate("self.items.all(x, x > 0)", list_of_ints(None));
        // An int takes at least one byte and its separator in a 3 MiB request.
        assert!(
            unbounded.max > bounded.max * 1000,
            "{unbounded:?} {bounded:?}"
        );
    }

    #[test]
    fn nested_comprehensions_over_unbounded_lists_exceed_the_rule_budget() {
        let rule = "self.items.all(x, self.items.all(y, x != y))";
        assert!(estimate(rule, list_of_ints(None)).max > cost::EXPRESSION_COST_LIMIT);
        assert!(estimate(rule, list_of_ints(Some(100))).max < cost::EXPRESSION_COST_LIMIT);
    }

    #[test]
    fn string_functions_cost_by_the_string_s_max_length() {
        // `contains` traverses the string: a tenth of its size (common.StringTraversalCostFactor),
        // its size in bytes, 4 per character of maxLength (UTF-8's widest).
        let short = estimate("self.name.contains('x')", string(Some(100)));
        let long = estimate("self.name.contains('x')", string(Some(10_000)));
        assert_eq!((short.max, long.max), (2 + 400 / 10, 2 + 40_000 / 10));
        // `size()` does not depend on the length.
        assert_eq!(
            estimate("self.name.size() < 10", string(Some(100))),
            estimate("self.name.size() < 10", string(Some(10_000)))
        );
    }

    #[test]
    fn a_regex_costs_by_the_string_s_length_and_the_pattern_s() {
        let small = estimate("self.name.matches('^[a-z]+$')", string(Some(100)));
        let large = estimate("self.name.matches('^[a-z]+$')", string(Some(1_000)));
        assert!(large.max > small.max, "{small:?} {large:?}");
        let longer_pattern = estimate(
            "self.name.matches('^[a-z]+[0-9]*[a-z]*$')",
            string(Some(1_000)),
        );
        assert!(
            longer_pattern.max > large.max,
            "{large:?} {longer_pattern:?}"
        );
    }
}
