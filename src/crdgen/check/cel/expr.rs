//! A CEL expression as kube-apiserver's checker sees it after parsing: the `cel` crate parses it
//! (maintained CEL parser for Rust, optional syntax on, the standard macros expanded as cel-go
//! expands them); this module numbers every node, turns `ns.f(..)` into the qualified function
//! it names, and expands the macros the `cel` crate leaves as calls: the two-variable
//! comprehensions (`all(k, v, p)`, `exists(..)`, `existsOne(..)`, `transformList(..)`,
//! `transformMap(..)`, `transformMapEntry(..)`) and `sortBy`, the way cel-go's extensions do.

use cel::common::ast::{EntryExpr, Expr as CelExpr, IdedExpr, LiteralValue};

use super::types;

/// A literal's kind and, for strings and bytes, its size (runes, bytes).
#[derive(Debug, Clone)]
pub(in crate::crdgen) enum Lit {
    Bool(bool),
    Int(i64),
    Uint,
    Double,
    String(String),
    Bytes(u64),
    Null,
}

#[derive(Debug, Clone)]
pub(in crate::crdgen) enum Node {
    Lit(Lit),
    Ident(String),
    Select {
        operand: Box<E>,
        field: String,
        test: bool,
    },
    Call {
        func: String,
        target: Option<Box<E>>,
        args: Vec<E>,
    },
    List(Vec<E>),
    Map(Vec<(E, E)>),
    /// A message construction (`google.protobuf.Duration{..}`): not typed against the schema.
    Struct(Vec<E>),
    Comp(Box<Comp>),
}

#[derive(Debug, Clone)]
pub(in crate::crdgen) struct Comp {
    pub var: String,
    pub var2: Option<String>,
    pub range: E,
    pub accu: String,
    pub init: E,
    pub cond: E,
    pub step: E,
    pub result: E,
}

/// A node and its id (ids index the checker's and the estimator's tables).
#[derive(Debug, Clone)]
pub(in crate::crdgen) struct E {
    pub id: usize,
    pub node: Node,
}

pub(in crate::crdgen) const ACCU: &str = "@result";

/// A parsed expression: its root and how many ids it uses.
pub(in crate::crdgen) struct Parsed {
    pub root: E,
    pub ids: usize,
}

/// Parse `src` as the API server does (optional syntax on); `Err` is the parser's message.
pub(in crate::crdgen) fn parse(src: &str, locals: &[&str]) -> Result<Parsed, String> {
    if two_arg_exists_one(src) {
        // The `cel` crate expands it as `exists_one`; cel-go has no such macro.
        return Err("undeclared reference to 'existsOne' (in container '')".into());
    }
    let ast = cel::parser::Parser::new()
        .enable_optional_syntax(true)
        .parse(src)
        .map_err(|e| {
            e.to_string()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        })?;
    let mut b = Builder {
        next: 0,
        locals: locals.iter().map(|s| s.to_string()).collect(),
    };
    let root = b.expr(&ast)?;
    Ok(Parsed { root, ids: b.next })
}

struct Builder {
    next: usize,
    /// Names bound by enclosing comprehensions (they shadow namespaces).
    locals: Vec<String>,
}

impl Builder {
    fn mk(&mut self, node: Node) -> E {
        let id = self.next;
        self.next += 1;
        E { id, node }
    }

    fn ident(&mut self, n: &str) -> E {
        self.mk(Node::Ident(n.into()))
    }

    fn call(&mut self, func: &str, args: Vec<E>) -> E {
        self.mk(Node::Call {
            func: func.into(),
            target: None,
            args,
        })
    }

    fn lit(&mut self, l: Lit) -> E {
        self.mk(Node::Lit(l))
    }

    fn expr(&mut self, e: &IdedExpr) -> Result<E, String> {
        Ok(match &e.expr {
            CelExpr::Unspecified => return Err("an empty expression".into()),
            CelExpr::Literal(l) => self.lit(match l {
                LiteralValue::Boolean(b) => Lit::Bool(*b.inner()),
                LiteralValue::Int(i) => Lit::Int(**i),
                LiteralValue::UInt(_) => Lit::Uint,
                LiteralValue::Double(_) => Lit::Double,
                LiteralValue::String(s) => Lit::String(s.to_string()),
                LiteralValue::Bytes(b) => Lit::Bytes(b.len() as u64),
                LiteralValue::Null => Lit::Null,
            }),
            CelExpr::Ident(n) => self.ident(n),
            CelExpr::Select(s) => {
                // `a.b.c` naming a type (`google.protobuf.Timestamp`) stays a select chain.
                let operand = self.expr(&s.operand)?;
                self.mk(Node::Select {
                    operand: Box::new(operand),
                    field: s.field.clone(),
                    test: s.test,
                })
            }
            CelExpr::List(l) => {
                let mut items = Vec::new();
                for x in &l.elements {
                    items.push(self.expr(x)?);
                }
                self.mk(Node::List(items))
            }
            CelExpr::Map(m) => {
                let mut entries = Vec::new();
                for en in &m.entries {
                    if let EntryExpr::MapEntry(me) = &en.expr {
                        let k = self.expr(&me.key)?;
                        let v = self.expr(&me.value)?;
                        entries.push((k, v));
                    }
                }
                self.mk(Node::Map(entries))
            }
            CelExpr::Struct(s) => {
                let mut values = Vec::new();
                for en in &s.entries {
                    if let EntryExpr::StructField(f) = &en.expr {
                        values.push(self.expr(&f.value)?);
                    }
                }
                self.mk(Node::Struct(values))
            }
            CelExpr::Comprehension(c) => {
                let range = self.expr(&c.iter_range)?;
                let init = self.expr(&c.accu_init)?;
                self.locals.push(c.iter_var.clone());
                self.locals.extend(c.iter_var2.clone());
                self.locals.push(c.accu_var.clone());
                let cond = self.expr(&c.loop_cond)?;
                let step = self.expr(&c.loop_step)?;
                let result = self.expr(&c.result)?;
                self.locals
                    .truncate(self.locals.len() - 2 - c.iter_var2.is_some() as usize);
                self.mk(Node::Comp(Box::new(Comp {
                    var: c.iter_var.clone(),
                    var2: c.iter_var2.clone(),
                    range,
                    accu: c.accu_var.clone(),
                    init,
                    cond,
                    step,
                    result,
                })))
            }
            CelExpr::Call(call) => self.call_expr(call)?,
        })
    }

    fn call_expr(&mut self, call: &cel::common::ast::CallExpr) -> Result<E, String> {
        let name = call.func_name.as_str();
        if let Some(t) = &call.target {
            // `ns.f(..)` naming a qualified global function.
            if let Some(ns) = qualified(&t.expr)
                && !self.locals.iter().any(|l| ns.split('.').next() == Some(l))
                && types::is_function(&format!("{ns}.{name}"))
            {
                let mut args = Vec::new();
                for a in &call.args {
                    args.push(self.expr(a)?);
                }
                return Ok(self.call(&format!("{ns}.{name}"), args));
            }
            let ident_arg = |i: usize| match call.args.get(i).map(|a| &a.expr) {
                Some(CelExpr::Ident(v)) => Some(v.clone()),
                _ => None,
            };
            let two_var = matches!(
                name,
                "all"
                    | "exists"
                    | "existsOne"
                    | "transformList"
                    | "transformMap"
                    | "transformMapEntry"
            ) && (call.args.len() == 3
                || (call.args.len() == 4 && name.starts_with("transform")));
            if two_var && let (Some(k), Some(v)) = (ident_arg(0), ident_arg(1)) {
                return self.two_var(name, t, k, v, &call.args[2..]);
            }
            if name == "sortBy"
                && call.args.len() == 2
                && let Some(v) = ident_arg(0)
            {
                return self.sort_by(t, v, &call.args[1]);
            }
            if matches!(name, "optMap" | "optFlatMap")
                && call.args.len() == 2
                && let Some(v) = ident_arg(0)
            {
                return self.opt_map(name == "optMap", t, v, &call.args[1]);
            }
        }
        let target = match &call.target {
            Some(t) => Some(Box::new(self.expr(t)?)),
            None => None,
        };
        let mut args = Vec::new();
        for a in &call.args {
            args.push(self.expr(a)?);
        }
        Ok(self.mk(Node::Call {
            func: name.into(),
            target,
            args,
        }))
    }

    /// The two-variable comprehensions of `ext.TwoVarComprehensions`, expanded as cel-go does.
    fn two_var(
        &mut self,
        name: &str,
        range: &IdedExpr,
        k: String,
        v: String,
        rest: &[IdedExpr],
    ) -> Result<E, String> {
        let range = self.expr(range)?;
        self.locals.extend([k.clone(), v.clone(), ACCU.to_string()]);
        let mut body = Vec::new();
        for r in rest {
            body.push(self.expr(r)?);
        }
        self.locals.truncate(self.locals.len() - 3);
        let accu = |b: &mut Builder| b.ident(ACCU);
        let (init, cond, step, result) = match name {
            "all" | "exists" => {
                let all = name == "all";
                let init = self.lit(Lit::Bool(all));
                let a = accu(self);
                let c = if all { a } else { self.call("!_", vec![a]) };
                let cond = self.call("@not_strictly_false", vec![c]);
                let a = accu(self);
                let op = if all { "_&&_" } else { "_||_" };
                let step = self.call(op, vec![a, body.remove(0)]);
                let result = accu(self);
                (init, cond, step, result)
            }
            "existsOne" => {
                let init = self.lit(Lit::Int(0));
                let cond = self.lit(Lit::Bool(true));
                let a = accu(self);
                let one = self.lit(Lit::Int(1));
                let inc = self.call("_+_", vec![a, one]);
                let a = accu(self);
                let step = self.call("_?_:_", vec![body.remove(0), inc, a]);
                let a = accu(self);
                let one = self.lit(Lit::Int(1));
                let result = self.call("_==_", vec![a, one]);
                (init, cond, step, result)
            }
            _ => {
                let list = name == "transformList";
                let init = if list {
                    self.mk(Node::List(vec![]))
                } else {
                    self.mk(Node::Map(vec![]))
                };
                let cond = self.lit(Lit::Bool(true));
                let value = body.pop().expect("transform value");
                let filter = body.pop();
                let a = accu(self);
                let step = match name {
                    "transformList" => {
                        let l = self.mk(Node::List(vec![value]));
                        self.call("_+_", vec![a, l])
                    }
                    "transformMap" => {
                        let key = self.ident(&k);
                        self.call("cel.@mapInsert", vec![a, key, value])
                    }
                    _ => self.call("cel.@mapInsert", vec![a, value]),
                };
                let step = match filter {
                    Some(f) => {
                        let a = accu(self);
                        self.call("_?_:_", vec![f, step, a])
                    }
                    None => step,
                };
                let result = accu(self);
                (init, cond, step, result)
            }
        };
        Ok(self.mk(Node::Comp(Box::new(Comp {
            var: k,
            var2: Some(v),
            range,
            accu: ACCU.into(),
            init,
            cond,
            step,
            result,
        }))))
    }

    /// `opt.optMap(v, expr)` and `opt.optFlatMap(v, expr)`, the optional library's macros, as
    /// cel-go expands them: `opt.hasValue() ? optional.of(expr) : optional.none()` (`optFlatMap`
    /// without the `optional.of`), `expr` seeing `v` bound to `opt.value()` through a
    /// comprehension over an empty list whose accumulator is `v`.
    fn opt_map(
        &mut self,
        wrap: bool,
        target: &IdedExpr,
        v: String,
        body: &IdedExpr,
    ) -> Result<E, String> {
        const UNUSED: &str = "#unused";
        let has = {
            let t = self.expr(target)?;
            self.mk(Node::Call {
                func: "hasValue".into(),
                target: Some(Box::new(t)),
                args: vec![],
            })
        };
        let init = {
            let t = self.expr(target)?;
            self.mk(Node::Call {
                func: "value".into(),
                target: Some(Box::new(t)),
                args: vec![],
            })
        };
        self.locals.extend([UNUSED.to_string(), v.clone()]);
        let result = self.expr(body)?;
        self.locals.truncate(self.locals.len() - 2);
        let range = self.mk(Node::List(vec![]));
        let cond = self.lit(Lit::Bool(false));
        let step = self.ident(&v);
        let mapped = self.mk(Node::Comp(Box::new(Comp {
            var: UNUSED.into(),
            var2: None,
            range,
            accu: v,
            init,
            cond,
            step,
            result,
        })));
        let some = if wrap {
            self.call("optional.of", vec![mapped])
        } else {
            mapped
        };
        let none = self.call("optional.none", vec![]);
        Ok(self.call("_?_:_", vec![has, some, none]))
    }

    /// `list.sortBy(v, key)` as cel-go's lists extension expands it: a bind of the list to
    /// `@__sortBy_input__`, sorted by the keys `map(v, key)` computes.
    fn sort_by(&mut self, range: &IdedExpr, v: String, key: &IdedExpr) -> Result<E, String> {
        const INPUT: &str = "@__sortBy_input__";
        let list = self.expr(range)?;
        self.locals
            .extend([INPUT.to_string(), v.clone(), ACCU.to_string()]);
        let key = self.expr(key)?;
        self.locals.truncate(self.locals.len() - 3);
        let input = self.ident(INPUT);
        let init = self.mk(Node::List(vec![]));
        let cond = self.lit(Lit::Bool(true));
        let a = self.ident(ACCU);
        let l = self.mk(Node::List(vec![key]));
        let step = self.call("_+_", vec![a, l]);
        let result = self.ident(ACCU);
        let keys = self.mk(Node::Comp(Box::new(Comp {
            var: v,
            var2: None,
            range: input,
            accu: ACCU.into(),
            init,
            cond,
            step,
            result,
        })));
        let target = self.ident(INPUT);
        let sorted = self.mk(Node::Call {
            func: "@sortByAssociatedKeys".into(),
            target: Some(Box::new(target)),
            args: vec![keys],
        });
        let empty = self.mk(Node::List(vec![]));
        let never = self.lit(Lit::Bool(false));
        let step = self.ident(INPUT);
        Ok(self.mk(Node::Comp(Box::new(Comp {
            var: "#unused".into(),
            var2: None,
            range: empty,
            accu: INPUT.into(),
            init: list,
            cond: never,
            step,
            result: sorted,
        }))))
    }
}

/// Whether `src` calls `.existsOne(..)` with two arguments (outside string literals).
fn two_arg_exists_one(src: &str) -> bool {
    let b = src.as_bytes();
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < b.len() {
        match (quote, b[i]) {
            (Some(_), b'\\') => i += 1,
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, c @ (b'\'' | b'"')) => quote = Some(c),
            (None, b'.') if src[i + 1..].starts_with("existsOne") => {
                let rest = src[i + 1 + "existsOne".len()..].trim_start();
                if let Some(args) = rest.strip_prefix('(') {
                    let (mut depth, mut commas) = (0, 0);
                    for c in args.chars() {
                        match c {
                            '(' | '[' | '{' => depth += 1,
                            ')' | ']' | '}' if depth == 0 => break,
                            ')' | ']' | '}' => depth -= 1,
                            ',' if depth == 0 => commas += 1,
                            _ => {}
                        }
                    }
                    if commas == 1 {
                        return true;
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    false
}

/// `a.b.c` as a dotted name, when `e` is an identifier or a chain of selects on one.
fn qualified(e: &CelExpr) -> Option<String> {
    match e {
        CelExpr::Ident(n) => Some(n.clone()),
        CelExpr::Select(s) if !s.test => {
            Some(format!("{}.{}", qualified(&s.operand.expr)?, s.field))
        }
        _ => None,
    }
}

impl E {
    /// The string of a string literal.
    pub fn str_lit(&self) -> Option<&str> {
        match &self.node {
            Node::Lit(Lit::String(s)) => Some(s),
            _ => None,
        }
    }
}
