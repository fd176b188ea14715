//! `#[schemars(schema_with = "f")]` read statically: `f`'s body builds its schema from a JSON
//! literal (`json_schema!({..})`, kube-rs's own pattern for conditions and list types, or
//! `serde_json::from_value(json!({..})).unwrap()`), so the schema is that literal, read from the
//! macro's tokens as serde_json's `json!` would build it. A body that computes anything (calls the
//! generator, interpolates a variable) is refused at that expression, pointing to `--exact`.

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use schemars::Schema;
use serde_json::{Map, Value};
use syn::spanned::Spanned;

use crate::crdgen::error::{CrdgenError, FIX_EXACT};
use crate::crdgen::read::loader::{DefId, ModId};
use crate::crdgen::read::type_info::Model;
use crate::crdgen::read::type_info::values::{Eval, single_expr};
use crate::syntax::Pos;

/// The schema that `path` (a `schema_with` function, written in module `m` at `at`) returns.
pub(crate) fn schema_of_fn(
    krate: &Model,
    path: &str,
    m: ModId,
    self_def: Option<DefId>,
    at: Pos,
) -> Result<Schema, CrdgenError> {
    let (fm, f) = Eval::new(krate).found_fn(path, m, self_def, at, "the `schema_with` function")?;
    let block = krate.body(fm, &f.block)?;
    let refuse = |span: proc_macro2::Span, what: String| CrdgenError::Unsupported {
        loc: krate.mod_loc(fm, span),
        what,
        fix: format!(
            "{FIX_EXACT}, or make `{path}` return `json_schema!({{..}})` of literals only"
        ),
    };
    let body = single_expr(&block).ok_or_else(|| {
        refuse(
            block.stmts.first().map_or(f.block.span(), Spanned::span),
            format!("the body of `{path}`, which is not a single `json_schema!({{..}})`"),
        )
    })?;
    let tokens = json_literal(body).ok_or_else(|| {
        refuse(
            body.span(),
            format!(
                "`{}` in `{path}`, which builds the schema at run time",
                shorten(&quote::quote!(#body).to_string())
            ),
        )
    })?;
    let value = Json { krate, m: fm, path }.value(&tokens.into_iter().collect::<Vec<_>>())?;
    let span = body.span();
    match value {
        Value::Object(_) | Value::Bool(_) => Schema::try_from(value)
            .map_err(|e| refuse(span, format!("the schema `{path}` returns: {e}"))),
        other => Err(refuse(
            span,
            format!("`{path}` returns `{other}`, which is not a schema (an object or a bool)"),
        )),
    }
}

/// The tokens of the JSON literal that `e` turns into a schema, if `e` is one of the forms that
/// only wrap one: `json_schema!(..)`, `from_value(json!(..)).unwrap()`,
/// `Schema::try_from(json!(..)).unwrap()` (or `.expect(..)`).
fn json_literal(e: &syn::Expr) -> Option<TokenStream> {
    let macro_named = |e: &syn::Expr, name: &str| match e {
        syn::Expr::Macro(m) if m.mac.path.segments.last().is_some_and(|s| s.ident == name) => {
            Some(m.mac.tokens.clone())
        }
        _ => None,
    };
    if let Some(t) = macro_named(e, "json_schema") {
        return Some(t);
    }
    let syn::Expr::MethodCall(call) = e else {
        return None;
    };
    if call.method != "unwrap" && call.method != "expect" {
        return None;
    }
    let syn::Expr::Call(inner) = &*call.receiver else {
        return None;
    };
    let syn::Expr::Path(func) = &*inner.func else {
        return None;
    };
    let name = func.path.segments.last()?.ident.to_string();
    if !(name == "from_value" || name == "try_from") || inner.args.len() != 1 {
        return None;
    }
    macro_named(&inner.args[0], "json")
}

/// `what` cut to a line's worth, for a message.
fn shorten(what: &str) -> String {
    match what.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &what[..i]),
        None => what.to_string(),
    }
}

/// serde_json's `json!` grammar over literals: objects with string keys, arrays, strings,
/// numbers (a leading `-` too), `true`, `false`, `null`; trailing commas allowed.
struct Json<'a> {
    krate: &'a Model,
    m: ModId,
    path: &'a str,
}

impl Json<'_> {
    fn refuse(&self, at: &TokenTree, what: &str) -> CrdgenError {
        self.refuse_at(at.span(), what)
    }

    fn refuse_at(&self, at: proc_macro2::Span, what: &str) -> CrdgenError {
        CrdgenError::Unsupported {
            loc: self.krate.mod_loc(self.m, at),
            what: format!(
                "{what} in the schema `{}` returns, which the reader cannot evaluate",
                self.path
            ),
            fix: format!("{FIX_EXACT}, or write a literal there"),
        }
    }

    /// One value that is all of `tokens`.
    fn value(&self, tokens: &[TokenTree]) -> Result<Value, CrdgenError> {
        let Some(first) = tokens.first() else {
            return Ok(Value::Null);
        };
        let (v, used) = match first {
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => (self.object(g)?, 1),
            TokenTree::Group(g) if g.delimiter() == Delimiter::Bracket => (self.array(g)?, 1),
            TokenTree::Group(g) if g.delimiter() == Delimiter::None => {
                (self.value(&g.stream().into_iter().collect::<Vec<_>>())?, 1)
            }
            TokenTree::Ident(i) if i == "null" => (Value::Null, 1),
            TokenTree::Ident(i) if i == "true" => (Value::Bool(true), 1),
            TokenTree::Ident(i) if i == "false" => (Value::Bool(false), 1),
            TokenTree::Literal(l) => (self.literal(first, l, false)?, 1),
            TokenTree::Punct(p) if p.as_char() == '-' => match tokens.get(1) {
                Some(t @ TokenTree::Literal(l)) => (self.literal(t, l, true)?, 2),
                _ => return Err(self.refuse(first, "an expression")),
            },
            _ => return Err(self.refuse(first, "an expression")),
        };
        match tokens.get(used) {
            None => Ok(v),
            Some(t) => Err(self.refuse(t, "an expression")),
        }
    }

    fn literal(
        &self,
        at: &TokenTree,
        l: &proc_macro2::Literal,
        neg: bool,
    ) -> Result<Value, CrdgenError> {
        let bad = || self.refuse(at, "a literal of a kind JSON has not");
        Ok(match syn::Lit::new(l.clone()) {
            syn::Lit::Str(s) if !neg => Value::String(s.value()),
            syn::Lit::Int(i) => {
                let n: i128 = i.base10_parse().map_err(|_| bad())?;
                let n = if neg { -n } else { n };
                if let Ok(u) = u64::try_from(n) {
                    Value::from(u)
                } else {
                    Value::from(i64::try_from(n).map_err(|_| bad())?)
                }
            }
            syn::Lit::Float(f) => {
                let x: f64 = f.base10_parse().map_err(|_| bad())?;
                Value::from(if neg { -x } else { x })
            }
            _ => return Err(bad()),
        })
    }

    fn array(&self, g: &proc_macro2::Group) -> Result<Value, CrdgenError> {
        split_commas(g.stream())
            .iter()
            .map(|item| self.value(item))
            .collect::<Result<_, _>>()
            .map(Value::Array)
    }

    fn object(&self, g: &proc_macro2::Group) -> Result<Value, CrdgenError> {
        let mut map = Map::new();
        for entry in split_commas(g.stream()) {
            let Some(first) = entry.first() else {
                return Err(self.refuse_at(g.span(), "an empty entry"));
            };
            let colon = entry
                .iter()
                .position(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ':'));
            let key = match (colon, first) {
                (Some(1), TokenTree::Literal(l)) => match syn::Lit::new(l.clone()) {
                    syn::Lit::Str(s) => s.value(),
                    _ => return Err(self.refuse(first, "a key that is not a string")),
                },
                _ => return Err(self.refuse(first, "a key that is not a string literal")),
            };
            let value = &entry[2..];
            if value.is_empty() {
                return Err(self.refuse(&entry[1], "a key without a value"));
            }
            map.insert(key, self.value(value)?);
        }
        Ok(Value::Object(map))
    }
}

/// The comma-separated items of a group's tokens (a trailing comma ends no item).
fn split_commas(tokens: TokenStream) -> Vec<Vec<TokenTree>> {
    let mut items = vec![Vec::new()];
    for t in tokens {
        match &t {
            TokenTree::Punct(p) if p.as_char() == ',' => items.push(Vec::new()),
            _ => items.last_mut().expect("never empty").push(t),
        }
    }
    if items.last().is_some_and(Vec::is_empty) {
        items.pop();
    }
    items
}
