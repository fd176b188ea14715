//! Type-checks a parsed rule against the schema it sits on, as kube-apiserver's cel-go checker
//! does: `self` (and `oldSelf`, optional with `optionalOldSelf`) typed from the schema's CEL
//! declaration, fields looked up by their escaped names, every call resolved to the overloads its
//! argument types allow, list and map literals homogeneous, regex, duration and timestamp
//! literals valid. It records each node's type and each call's overloads for the cost estimator.

use super::decl::{Decl, DeclKind, Prim};
use super::expr::{Comp, E, Lit, Node, Parsed};
use super::types::{self, DYN, OPTIONAL, Resolved, Ty};

/// What a rule or message expression can refer to.
pub(in crate::crdgen) struct Env<'d> {
    /// The declaration of the node the rule sits on (`self`).
    pub root: &'d Decl,
    /// `optionalOldSelf: true`: `oldSelf` is an `optional_type`.
    pub optional_old_self: bool,
}

pub(in crate::crdgen) struct Checked<'d> {
    pub types: Vec<Ty<'d>>,
    pub overloads: Vec<Vec<&'static str>>,
    pub uses_old_self: bool,
    pub errors: Vec<String>,
}

/// The CEL type of a declared node.
pub(in crate::crdgen) fn ty_of(d: &Decl) -> Ty<'_> {
    match &d.kind {
        DeclKind::Prim(p) => Ty::P(*p),
        DeclKind::List(e) => Ty::List(Box::new(ty_of(e))),
        DeclKind::Map(_, v) => Ty::Map(Box::new(Ty::P(Prim::String)), Box::new(ty_of(v))),
        DeclKind::Object(_) => Ty::Object(d),
    }
}

pub(in crate::crdgen) fn check<'d>(p: &Parsed, env: &Env<'d>) -> Checked<'d> {
    let mut c = Checker {
        env,
        out: Checked {
            types: vec![DYN; p.ids],
            overloads: vec![Vec::new(); p.ids],
            uses_old_self: false,
            errors: Vec::new(),
        },
        scope: Vec::new(),
    };
    c.expr(&p.root);
    c.out
}

struct Checker<'e, 'd> {
    env: &'e Env<'d>,
    out: Checked<'d>,
    scope: Vec<(String, Ty<'d>)>,
}

impl<'d> Checker<'_, 'd> {
    fn err(&mut self, msg: String) -> Ty<'d> {
        if !self.out.errors.contains(&msg) {
            self.out.errors.push(msg);
        }
        Ty::Error
    }

    fn expr(&mut self, e: &E) -> Ty<'d> {
        let t = match &e.node {
            Node::Lit(l) => Ty::P(match l {
                Lit::Bool(_) => Prim::Bool,
                Lit::Int(_) => Prim::Int,
                Lit::Uint => Prim::Uint,
                Lit::Double => Prim::Double,
                Lit::String(_) => Prim::String,
                Lit::Bytes(_) => Prim::Bytes,
                Lit::Null => Prim::Null,
            }),
            Node::Ident(n) => self.ident(n),
            Node::Select {
                operand,
                field,
                test,
            } => {
                let t = self.expr(operand);
                let f = self.field(&t, field);
                if *test { Ty::P(Prim::Bool) } else { f }
            }
            Node::List(items) => {
                let elem = self.homogeneous(items.iter());
                Ty::List(Box::new(elem))
            }
            Node::Map(entries) => {
                let k = self.homogeneous(entries.iter().map(|(k, _)| k));
                let v = self.homogeneous(entries.iter().map(|(_, v)| v));
                Ty::Map(Box::new(k), Box::new(v))
            }
            Node::Struct(values) => {
                for v in values {
                    self.expr(v);
                }
                DYN
            }
            Node::Comp(c) => self.comprehension(c),
            Node::Call { func, target, args } => self.call(e.id, func, target.as_deref(), args),
        };
        self.out.types[e.id] = t.clone();
        t
    }

    fn ident(&mut self, n: &str) -> Ty<'d> {
        if let Some((_, t)) = self.scope.iter().rev().find(|(v, _)| v == n) {
            return t.clone();
        }
        match n {
            "self" => ty_of(self.env.root),
            "oldSelf" => {
                self.out.uses_old_self = true;
                let t = ty_of(self.env.root);
                if self.env.optional_old_self {
                    Ty::optional(t)
                } else {
                    t
                }
            }
            _ => match types::type_ident(n) {
                Some(t) => t,
                None => self.err(format!("undeclared reference to '{n}' (in container '')")),
            },
        }
    }

    /// The type of `t.field` (`Err` message when it has none).
    fn select(&self, t: &Ty<'d>, field: &str) -> Result<Ty<'d>, String> {
        match t {
            Ty::Object(d) => d
                .field(field)
                .map(ty_of)
                .ok_or_else(|| format!("undefined field '{field}'")),
            Ty::Map(_, v) => Ok((**v).clone()),
            Ty::Opaque(OPTIONAL, ps) => Ok(Ty::optional(self.select(&ps[0], field)?)),
            t if t.is_dyn() => Ok(DYN),
            t => Err(format!("type '{t}' does not support field selection")),
        }
    }

    fn field(&mut self, t: &Ty<'d>, field: &str) -> Ty<'d> {
        match self.select(t, field) {
            Ok(t) => t,
            Err(m) => self.err(m),
        }
    }

    /// The element type of a list or map literal: every element of exactly one type (`dyn` is a
    /// type of its own there: `[dyn(x), 1]` is refused).
    fn homogeneous<'x>(&mut self, items: impl Iterator<Item = &'x E>) -> Ty<'d> {
        let mut elem: Option<Ty<'d>> = None;
        for x in items {
            let t = self.expr(x);
            match &elem {
                _ if matches!(t, Ty::Error) => {}
                None => elem = Some(t),
                Some(prev) if prev.same(&t) => {}
                Some(prev) => {
                    let msg = format!("expected type '{prev}' but found '{t}'");
                    self.err(msg);
                }
            }
        }
        elem.unwrap_or(DYN)
    }

    fn comprehension(&mut self, c: &Comp) -> Ty<'d> {
        let range = self.expr(&c.range);
        let (first, second) = match (&range, c.var2.is_some()) {
            (Ty::List(e), false) => ((**e).clone(), None),
            (Ty::List(e), true) => (Ty::P(Prim::Int), Some((**e).clone())),
            (Ty::Map(k, _), false) => ((**k).clone(), None),
            (Ty::Map(k, v), true) => ((**k).clone(), Some((**v).clone())),
            (t, two) if t.is_dyn() => (DYN, two.then_some(DYN)),
            (t, _) => {
                let msg = format!(
                    "expression of type '{t}' cannot be range of a comprehension (must be list, map, or dynamic)"
                );
                let e = self.err(msg);
                (e.clone(), c.var2.as_ref().map(|_| e))
            }
        };
        let init = self.expr(&c.init);
        let empty_init = matches!(&c.init.node, Node::List(l) if l.is_empty())
            || matches!(&c.init.node, Node::Map(m) if m.is_empty());
        self.scope.push((c.accu.clone(), init));
        self.scope.push((c.var.clone(), first));
        if let (Some(v2), Some(t2)) = (&c.var2, second) {
            self.scope.push((v2.clone(), t2));
        }
        self.expr(&c.cond);
        let step = self.expr(&c.step);
        // An empty list or map accumulator takes the type the step gives it.
        if empty_init && matches!(step, Ty::List(_) | Ty::Map(..)) {
            let accu = self.scope.iter_mut().rev().find(|(n, _)| *n == c.accu);
            if let Some((_, t)) = accu {
                *t = step;
            }
        }
        self.scope
            .truncate(self.scope.len() - 1 - c.var2.is_some() as usize);
        let result = self.expr(&c.result);
        self.scope.pop();
        result
    }

    fn call(&mut self, id: usize, func: &str, target: Option<&E>, args: &[E]) -> Ty<'d> {
        if func == "_?._" {
            let t = self.expr(&args[0]);
            let field = args[1].str_lit().unwrap_or_default().to_string();
            self.expr(&args[1]);
            let inner = match &t {
                Ty::Opaque(OPTIONAL, ps) => ps[0].clone(),
                t => t.clone(),
            };
            self.out.overloads[id] = vec!["select_optional_field"];
            return match self.select(&inner, &field) {
                Ok(Ty::Opaque(OPTIONAL, ps)) => Ty::optional(ps[0].clone()),
                Ok(f) => Ty::optional(f),
                Err(m) => self.err(m),
            };
        }
        let mut tys = Vec::new();
        if let Some(t) = target {
            tys.push(self.expr(t));
        }
        for a in args {
            tys.push(self.expr(a));
        }
        if func == "@sortByAssociatedKeys" {
            self.out.overloads[id] = vec!["list_sortByAssociatedKeys"];
            return tys[0].clone();
        }
        if tys.iter().any(|t| matches!(t, Ty::Error)) {
            return Ty::Error;
        }
        self.literal_arguments(func, args);
        match types::resolve(func, target.is_some(), &tys) {
            Resolved::Ok(ids, t) => {
                self.out.overloads[id] = ids;
                t
            }
            Resolved::Undeclared => self.err(format!(
                "undeclared reference to '{func}' (in container '')"
            )),
            Resolved::NoMatch => {
                let list = |ts: &[Ty<'d>]| {
                    ts.iter()
                        .map(|t| t.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                let applied = match target {
                    Some(_) => format!("{}.({})", tys[0], list(&tys[1..])),
                    None => format!("({})", list(&tys)),
                };
                self.err(format!(
                    "found no matching overload for '{func}' applied to '{applied}'"
                ))
            }
        }
    }

    /// cel-go's AST validators of Kubernetes: literal regular expressions, durations and
    /// timestamps must be valid.
    fn literal_arguments(&mut self, func: &str, args: &[E]) {
        // Kubernetes' `find` / `findAll` compile their literal regex when the program is
        // instantiated, and the API server refuses the rule with Go's parse error.
        if matches!(func, "find" | "findAll")
            && let Some(e) = args
                .first()
                .and_then(E::str_lit)
                .and_then(super::super::goregex::error)
        {
            self.err(format!("program instantiation failed: {e} ({})", e.rule()));
            return;
        }
        let Some(lit) = args.last().and_then(E::str_lit) else {
            return;
        };
        if func == "matches"
            && let Some(e) = super::super::goregex::error(lit)
        {
            self.err(format!("invalid matches argument ({e}; {})", e.rule()));
            return;
        }
        let bad = match func {
            "duration" if args.len() == 1 => !valid_duration(lit),
            "timestamp" if args.len() == 1 => !valid_timestamp(lit),
            _ => false,
        };
        if bad {
            self.err(format!("invalid {func} argument"));
        }
    }
}

/// Go's `time.ParseDuration` syntax: an optional sign, then numbers with units.
fn valid_duration(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    if s == "0" {
        return true;
    }
    let mut rest = s;
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number = &rest[..digits];
        if number.is_empty() || number == "." || number.matches('.').count() > 1 {
            return false;
        }
        rest = &rest[digits..];
        let unit = ["ns", "us", "µs", "μs", "ms", "s", "m", "h"]
            .into_iter()
            .filter(|u| rest.starts_with(u))
            .max_by_key(|u| u.len());
        match unit {
            Some(u) => rest = &rest[u.len()..],
            None => return false,
        }
    }
    true
}

/// RFC 3339 (`2006-01-02T15:04:05Z07:00`, fractional seconds allowed).
fn valid_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|x| x.iter().all(u8::is_ascii_digit));
    if b.len() < 20
        || !digits(0..4)
        || b[4] != b'-'
        || !digits(5..7)
        || b[7] != b'-'
        || !digits(8..10)
        || !matches!(b[10], b'T' | b't')
        || !digits(11..13)
        || b[13] != b':'
        || !digits(14..16)
        || b[16] != b':'
        || !digits(17..19)
    {
        return false;
    }
    let num = |r: std::ops::Range<usize>| s[r].parse::<u32>().unwrap_or(99);
    if !(1..=12).contains(&num(5..7))
        || !(1..=31).contains(&num(8..10))
        || num(11..13) > 23
        || num(14..16) > 59
        || num(17..19) > 60
    {
        return false;
    }
    let mut rest = &s[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let n = frac
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(frac.len());
        if n == 0 {
            return false;
        }
        rest = &frac[n..];
    }
    match rest {
        "Z" | "z" => true,
        tz => {
            let t = tz.as_bytes();
            t.len() == 6
                && matches!(t[0], b'+' | b'-')
                && t[1..3].iter().all(u8::is_ascii_digit)
                && t[3] == b':'
                && t[4..6].iter().all(u8::is_ascii_digit)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{valid_duration, valid_timestamp};

    #[test]
    fn durations_and_timestamps_as_go_parses_them() {
        for ok in ["1s", "1h30m", "-1.5h", "0", "300ms", "2us"] {
            assert!(valid_duration(ok), "{ok}");
        }
        for bad in ["1x", "", "1", "h", "1..2s"] {
            assert!(!valid_duration(bad), "{bad}");
        }
        assert!(valid_timestamp("2020-01-01T00:00:00Z"));
        assert!(valid_timestamp("2020-01-01T00:00:00.5+02:00"));
        assert!(!valid_timestamp("2020-13-01T00:00:00Z"));
        assert!(!valid_timestamp("2020-01-01"));
    }
}
