//! The arguments of `#[serde(...)]` and `#[derive(...)]` read straight from the text.
//!
//! Generated API types (kopium's, `create api`'s) carry both on nearly every type and field:
//! they were 60 % of the tokens proc-macro2 lexed and syn parsed in a crate of real-world CRD
//! types. Their common forms are simple (`default`, `rename = "x"`, `skip_serializing_if =
//! "Option::is_none"`; `Clone, Debug, ::serde::Serialize`), so they are read here, with their
//! places, and the attribute is set aside before lexing (see [`super::doc_comments`]). Anything
//! outside these forms (a nested list, an expression, an escape in a string, a comment, a raw or
//! non-ASCII identifier) is not read here: the attribute stays in the text for syn, so its verdict
//! and its errors are syn's.

use super::pos::Pos;

/// The attributes read here: the name in `#[name(...)]`.
pub(crate) const NAMES: [&str; 2] = ["serde", "derive"];

/// What one attribute said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Args {
    /// `#[serde(...)]`: its items, in order.
    Serde(Vec<Meta>),
    /// `#[derive(...)]`: its paths, in order.
    Derive(Vec<DerivePath>),
}

/// One item of `#[serde(...)]`: `name`, `!name` or `name = literal`, at the place of its name (of
/// the `!` for `!name`), as syn's spans give it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Meta {
    pub name: String,
    pub pos: Pos,
    pub arg: Arg,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Arg {
    Flag,
    Not,
    Lit(Lit),
}

/// A literal as written (a string with its quotes), at its place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Lit {
    pub text: String,
    pub pos: Pos,
    pub kind: LitKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LitKind {
    /// A string without escapes: its value is the text between the quotes.
    Str,
    Int,
    Float,
    Bool,
}

impl Lit {
    /// The value of a string literal.
    pub fn str_value(&self) -> Option<&str> {
        match self.kind {
            LitKind::Str => Some(&self.text[1..self.text.len() - 1]),
            _ => None,
        }
    }
}

/// A path of `#[derive(...)]` (identifiers as written; raw ones are left to syn).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DerivePath {
    pub leading_colon: bool,
    pub segments: Vec<String>,
}

/// The attributes set aside from a file (see [`super::doc_comments`]), by the place of their `#`:
/// in the text syn parses each is `#[serde]` or `#[derive]` there.
#[derive(Debug, Default)]
pub(crate) struct SetAsideAttrs {
    places: Vec<(Pos, Option<Args>)>,
}

impl SetAsideAttrs {
    pub(crate) fn push(&mut self, at: Pos, args: Args) {
        self.places.push((at, Some(args)));
    }

    /// What the attribute set aside at `at` said (once: it is moved out).
    pub fn take(&mut self, at: Pos) -> Option<Args> {
        let i = self.places.binary_search_by_key(&at, |(p, _)| *p).ok()?;
        self.places[i].1.take()
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.places.len()
    }

    #[cfg(test)]
    pub fn get(&self, at: Pos) -> Option<&Args> {
        let i = self.places.binary_search_by_key(&at, |(p, _)| *p).ok()?;
        self.places[i].1.as_ref()
    }
}

/// An attribute read: what it said, where it ends (after its `]`), and the line count there.
pub(crate) struct Read {
    pub args: Args,
    pub end: usize,
    pub line: usize,
    pub line_start: usize,
}

/// Reads the attribute `#[name(...)]` whose `(` is at `open` (`line` and `line_start`: the line of
/// `open` and where it starts). `None`: not in the forms read here.
pub(crate) fn read(
    source: &str,
    name: &str,
    open: usize,
    line: usize,
    line_start: usize,
) -> Option<Read> {
    let mut c = Cursor {
        source,
        bytes: source.as_bytes(),
        i: open + 1,
        line,
        line_start,
    };
    let args = match name {
        "serde" => Args::Serde(c.list(Cursor::meta)?),
        "derive" => Args::Derive(c.list(Cursor::derive_path)?),
        _ => return None,
    };
    // `c` is after the `)`: the attribute closes right there.
    (c.bytes.get(c.i) == Some(&b']')).then(|| Read {
        args,
        end: c.i + 1,
        line: c.line,
        line_start: c.line_start,
    })
}

struct Cursor<'a> {
    source: &'a str,
    bytes: &'a [u8],
    i: usize,
    line: usize,
    line_start: usize,
}

impl Cursor<'_> {
    fn pos(&self) -> Pos {
        let before = &self.bytes[self.line_start..self.i];
        let column = if before.is_ascii() {
            before.len()
        } else {
            self.source[self.line_start..self.i].chars().count()
        };
        Pos {
            line: self.line,
            column,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.i).copied()
    }

    /// Skips whitespace; `None` at a comment (left to syn).
    fn space(&mut self) -> Option<()> {
        while let Some(b) = self.peek() {
            match b {
                b'\n' => {
                    self.i += 1;
                    self.line += 1;
                    self.line_start = self.i;
                }
                b' ' | b'\t' | b'\r' => self.i += 1,
                b'/' => return None,
                _ => break,
            }
        }
        Some(())
    }

    /// `item (, item)* ,?` up to and past the `)`.
    fn list<T>(&mut self, mut item: impl FnMut(&mut Self) -> Option<T>) -> Option<Vec<T>> {
        let mut out = Vec::new();
        loop {
            self.space()?;
            if self.peek()? == b')' {
                self.i += 1;
                return Some(out);
            }
            out.push(item(self)?);
            self.space()?;
            match self.peek()? {
                b',' => self.i += 1,
                b')' => {
                    self.i += 1;
                    return Some(out);
                }
                _ => return None,
            }
        }
    }

    /// An ASCII identifier (not `_`, not raw, not a prefix of a literal such as `r"` or `b'`).
    fn ident(&mut self) -> Option<&str> {
        let start = self.i;
        if !self.peek()?.is_ascii_alphabetic() && self.peek()? != b'_' {
            return None;
        }
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            self.i += 1;
        }
        let ident = &self.source[start..self.i];
        let next = self.peek().unwrap_or(b' ');
        if ident == "_" || next >= 0x80 || matches!(next, b'#' | b'"' | b'\'') {
            return None;
        }
        Some(ident)
    }

    fn meta(&mut self) -> Option<Meta> {
        let pos = self.pos();
        if self.peek()? == b'!' {
            self.i += 1;
            self.space()?;
            let name = self.ident()?.to_string();
            return Some(Meta {
                name,
                pos,
                arg: Arg::Not,
            });
        }
        let name = self.ident()?.to_string();
        self.space()?;
        if self.peek() != Some(b'=') {
            return Some(Meta {
                name,
                pos,
                arg: Arg::Flag,
            });
        }
        self.i += 1;
        if self.peek() == Some(b'=') {
            return None;
        }
        self.space()?;
        let lit = self.lit()?;
        Some(Meta {
            name,
            pos,
            arg: Arg::Lit(lit),
        })
    }

    /// A string without escapes, a decimal integer or float without suffix, `true` or `false`.
    fn lit(&mut self) -> Option<Lit> {
        let pos = self.pos();
        let start = self.i;
        let kind = match self.peek()? {
            b'"' => {
                self.i += 1;
                loop {
                    match self.peek()? {
                        b'"' => break,
                        b'\\' | b'\r' => return None,
                        b'\n' => {
                            self.i += 1;
                            self.line += 1;
                            self.line_start = self.i;
                        }
                        _ => self.i += 1,
                    }
                }
                self.i += 1;
                LitKind::Str
            }
            b'0'..=b'9' => {
                let digits = |c: &mut Self| {
                    while c.peek().is_some_and(|b| b.is_ascii_digit() || b == b'_') {
                        c.i += 1;
                    }
                };
                digits(self);
                let fraction = self.peek() == Some(b'.')
                    && self.bytes.get(self.i + 1).is_some_and(u8::is_ascii_digit);
                if fraction {
                    self.i += 1;
                    digits(self);
                }
                if self.peek() == Some(b'.') {
                    return None;
                }
                if fraction {
                    LitKind::Float
                } else {
                    LitKind::Int
                }
            }
            _ => match self.ident()? {
                "true" | "false" => LitKind::Bool,
                _ => return None,
            },
        };
        // A suffix (`"x"suffix`, `10u8`, `1e3`) is left to syn.
        if self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80)
        {
            return None;
        }
        Some(Lit {
            text: self.source[start..self.i].to_string(),
            pos,
            kind,
        })
    }

    fn derive_path(&mut self) -> Option<DerivePath> {
        let leading_colon = self.colons();
        let mut segments = Vec::new();
        loop {
            self.space()?;
            segments.push(self.ident()?.to_string());
            self.space()?;
            if !self.colons() {
                return Some(DerivePath {
                    leading_colon,
                    segments,
                });
            }
        }
    }

    fn colons(&mut self) -> bool {
        let at = self.bytes.get(self.i..self.i + 2) == Some(b"::");
        if at {
            self.i += 2;
        }
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(text: &str) -> Option<Args> {
        let name = NAMES.iter().find(|n| text[2..].starts_with(*n))?;
        let r = read(text, name, 2 + name.len(), 1, 0)?;
        assert_eq!(r.end, text.len(), "{text}");
        Some(r.args)
    }

    fn at(line: usize, column: usize) -> Pos {
        Pos { line, column }
    }

    #[test]
    fn the_common_forms_are_read_with_their_places() {
        let Some(Args::Serde(items)) =
            read_all("#[serde(default, !x,\n  rename = \"a é\", n = 1_0, f = 2.5, b = true, )]")
        else {
            panic!()
        };
        let names: Vec<_> = items.iter().map(|m| (&m.name[..], m.pos)).collect();
        assert_eq!(
            names,
            [
                ("default", at(1, 8)),
                ("x", at(1, 17)),
                ("rename", at(2, 2)),
                ("n", at(2, 18)),
                ("f", at(2, 27)),
                ("b", at(2, 36)),
            ]
        );
        let Arg::Lit(lit) = &items[2].arg else {
            panic!()
        };
        assert_eq!((lit.str_value(), lit.pos), (Some("a é"), at(2, 11)));
        assert_eq!(items[1].arg, Arg::Not);
        assert_eq!(
            read_all("#[derive(Clone, ::serde :: Serialize)]"),
            Some(Args::Derive(vec![
                DerivePath {
                    leading_colon: false,
                    segments: vec!["Clone".into()]
                },
                DerivePath {
                    leading_colon: true,
                    segments: vec!["serde".into(), "Serialize".into()]
                },
            ]))
        );
        assert_eq!(read_all("#[serde()]"), Some(Args::Serde(Vec::new())));
    }

    #[test]
    fn other_forms_are_left_to_syn() {
        for text in [
            "#[serde(rename(serialize = \"a\"))]",
            "#[serde(rename = \"a\\\"b\")]",
            "#[serde(rename = r\"a\")]",
            "#[serde(rename = \"a\"suffix)]",
            "#[serde(n = 10u8)]",
            "#[serde(n = 1e3)]",
            "#[serde(n = 1..2)]",
            "#[serde(n = -1)]",
            "#[serde(n = x)]",
            "#[serde(n == 1)]",
            "#[serde(r#type)]",
            "#[serde(_)]",
            "#[serde(é)]",
            "#[serde(a /* c */)]",
            "#[serde(a b)]",
            "#[serde(a,,)]",
            "#[serde(a) ]",
            "#[serde(rename = \"open)]",
            "#[derive(Vec<u8>)]",
            "#[derive(a::)]",
        ] {
            assert_eq!(read_all(text), None, "{text}");
        }
    }
}
