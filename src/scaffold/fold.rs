//! Folds the `{% if %}` chains of a template whose conditions are already known from the
//! context, before tera parses it: only the chosen branch is left.
//!
//! A controller template holds three flavours (plain, deploy-image, built-in kind) whose
//! branches interleave; tera's pest parser costs tens of thousands of instructions per tag, and
//! parsing the branches a run never renders was a third of `create api`. A chain is folded only
//! when every condition is made of `and`, `or`, `not` and names holding booleans in the
//! context (or `name is [not] defined`), outside loops and macros, and not reassigned by a
//! `set`. Tera's whitespace control is kept exactly: the chain's tags are replaced by empty
//! `raw` blocks carrying the same `-` markers, so the output is byte-identical (the
//! `renders_like_the_original` test compares every embedded template in many contexts).

use std::collections::HashSet;

/// One piece of a template: literal text, or a tag/expression/comment/raw block.
#[derive(Debug)]
struct Piece<'a> {
    text: &'a str,
    tag: Tag<'a>,
    /// `{%-`: trims the whitespace before the tag.
    left: bool,
    /// `-%}`: trims the whitespace after it.
    right: bool,
}

#[derive(Debug, PartialEq)]
enum Tag<'a> {
    Text,
    If(&'a str),
    Elif(&'a str),
    Else,
    EndIf,
    /// `for` or `macro`: their bodies are left alone (a loop variable may shadow a name).
    Open,
    Close,
    /// Anything else: expressions, comments, `set`, raw blocks.
    Other,
}

/// The template `body` with every foldable `if` chain replaced by its chosen branch.
pub fn fold(body: &str, ctx: &tera::Context) -> String {
    let pieces = split(body);
    let shadowed: HashSet<&str> = pieces
        .iter()
        .filter(|p| p.tag == Tag::Other)
        .filter_map(|p| assigned_name(p.text))
        .collect();
    let mut out = String::with_capacity(body.len());
    let mut folder = Folder {
        pieces: &pieces,
        ctx,
        shadowed,
        out: &mut out,
    };
    let mut i = 0;
    while i < pieces.len() {
        i = folder.piece(i, false);
    }
    out
}

struct Folder<'p, 'a> {
    pieces: &'p [Piece<'a>],
    ctx: &'p tera::Context,
    shadowed: HashSet<&'a str>,
    out: &'p mut String,
}

impl Folder<'_, '_> {
    /// Emits piece `i` (a whole chain when it opens one); returns the index after it.
    fn piece(&mut self, i: usize, in_loop: bool) -> usize {
        match self.pieces[i].tag {
            Tag::If(_) => self.chain(i, in_loop),
            Tag::Open => {
                self.out.push_str(self.pieces[i].text);
                let mut j = i + 1;
                while j < self.pieces.len() && self.pieces[j].tag != Tag::Close {
                    j = self.piece(j, true);
                }
                if j < self.pieces.len() {
                    self.out.push_str(self.pieces[j].text);
                }
                j + 1
            }
            _ => {
                self.out.push_str(self.pieces[i].text);
                i + 1
            }
        }
    }

    /// Emits pieces from `i` up to the next `elif`/`else`/`endif` of this level.
    fn body(&mut self, mut i: usize, in_loop: bool) -> usize {
        while i < self.pieces.len()
            && !matches!(self.pieces[i].tag, Tag::Elif(_) | Tag::Else | Tag::EndIf)
        {
            i = self.piece(i, in_loop);
        }
        i
    }

    /// An `if` chain starting at `i`.
    fn chain(&mut self, i: usize, in_loop: bool) -> usize {
        // The tags of the chain: if, elif..., else?, endif.
        let mut tags = vec![i];
        let mut j = i + 1;
        let mut depth = 0;
        while j < self.pieces.len() {
            match self.pieces[j].tag {
                Tag::If(_) => depth += 1,
                Tag::EndIf if depth > 0 => depth -= 1,
                Tag::Elif(_) | Tag::Else if depth == 0 => tags.push(j),
                Tag::EndIf => {
                    tags.push(j);
                    break;
                }
                _ => {}
            }
            j += 1;
        }
        let end = *tags.last().unwrap();
        if self.pieces[end].tag != Tag::EndIf {
            // Unterminated: left as it is, for tera to report.
            for piece in &self.pieces[i..] {
                self.out.push_str(piece.text);
            }
            return self.pieces.len();
        }
        let chosen = if in_loop { None } else { self.choose(&tags) };
        match chosen {
            Some(branch) => {
                let (open, endif) = (&self.pieces[i], &self.pieces[end]);
                let (first, close) = match branch {
                    Some(b) => (self.pieces[tags[b]].right, self.pieces[tags[b + 1]].left),
                    None => (endif.right, false),
                };
                push_barrier(self.out, open.left, first);
                if let Some(b) = branch {
                    self.body(tags[b] + 1, in_loop);
                    push_barrier(self.out, close, endif.right);
                }
            }
            None => {
                // Kept as it is; chains inside its branches may still fold.
                for (n, &t) in tags.iter().enumerate() {
                    self.out.push_str(self.pieces[t].text);
                    if n + 1 < tags.len() {
                        self.body(t + 1, in_loop);
                    }
                }
            }
        }
        end + 1
    }

    /// Which branch of the chain renders: `Some(Some(n))` the n-th, `Some(None)` none,
    /// `None` when a condition is not known.
    fn choose(&self, tags: &[usize]) -> Option<Option<usize>> {
        let mut chosen = None;
        for (n, &t) in tags[..tags.len() - 1].iter().enumerate() {
            let holds = match self.pieces[t].tag {
                Tag::If(c) | Tag::Elif(c) => self.eval(c)?,
                _ => true,
            };
            if holds && chosen.is_none() {
                chosen = Some(n);
            }
        }
        Some(chosen)
    }

    /// `a or b and not c` (and binds tighter than or), over booleans of the context.
    fn eval(&self, condition: &str) -> Option<bool> {
        let words: Vec<&str> = condition.split_whitespace().collect();
        let mut any = false;
        for alternative in words.split(|w| *w == "or") {
            let mut all = true;
            for term in alternative.split(|w| *w == "and") {
                all &= self.term(term)?;
            }
            any |= all;
        }
        Some(any)
    }

    fn term(&self, term: &[&str]) -> Option<bool> {
        match term {
            ["not", rest @ ..] => self.term(rest).map(|b| !b),
            [name] => self.name(name)??.as_bool(),
            [name, "is", "defined"] => Some(self.name(name)?.is_some()),
            [name, "is", "not", "defined"] => Some(self.name(name)?.is_none()),
            _ => None,
        }
    }

    /// The value of a plain name of the context: `Some(None)` when it is missing, `None` when
    /// it is not known before rendering (an expression, or a name a `set` assigns).
    fn name(&self, name: &str) -> Option<Option<&tera::Value>> {
        let plain = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        (plain && !self.shadowed.contains(name)).then(|| self.ctx.get(name))
    }
}

/// An empty raw block standing for a folded tag: tera trims around it as around the tag.
fn push_barrier(out: &mut String, left: bool, right: bool) {
    out.push_str(if left { "{%- raw %}" } else { "{% raw %}" });
    out.push_str(if right {
        "{% endraw -%}"
    } else {
        "{% endraw %}"
    });
}

/// The name a `{% set name = ... %}` / `{% set_global name = ... %}` assigns.
fn assigned_name(text: &str) -> Option<&str> {
    let inner = text
        .strip_prefix("{%")?
        .trim_start_matches('-')
        .trim_start();
    let rest = inner
        .strip_prefix("set_global ")
        .or_else(|| inner.strip_prefix("set "))?;
    rest.split(|c: char| c == '=' || c.is_whitespace())
        .find(|w| !w.is_empty())
}

/// Cuts a template into text, tags, expressions, comments and raw blocks.
fn split(body: &str) -> Vec<Piece<'_>> {
    let bytes = body.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let text = |s| Piece {
        text: s,
        tag: Tag::Text,
        left: false,
        right: false,
    };
    while i < body.len() {
        let mut j = i;
        while j + 1 < body.len()
            && !(bytes[j] == b'{' && matches!(bytes[j + 1], b'{' | b'%' | b'#'))
        {
            j += 1;
        }
        if j + 1 >= body.len() {
            out.push(text(&body[i..]));
            break;
        }
        if j > i {
            out.push(text(&body[i..j]));
        }
        let close = match bytes[j + 1] {
            b'{' => "}}",
            b'%' => "%}",
            _ => "#}",
        };
        let Some(mut end) = body[j + 2..].find(close).map(|e| j + 2 + e + 2) else {
            // Unclosed: left to tera, which reports it.
            out.push(text(&body[j..]));
            break;
        };
        let inner = &body[j + 2..end - 2];
        let (left, right) = (inner.starts_with('-'), inner.ends_with('-'));
        let words: Vec<&str> = inner.trim_matches('-').split_whitespace().collect();
        let tag = if close != "%}" {
            Tag::Other
        } else {
            match words.first().copied().unwrap_or_default() {
                "if" => Tag::If(&inner.trim_matches('-').trim()[2..]),
                "elif" => Tag::Elif(&inner.trim_matches('-').trim()[4..]),
                "else" => Tag::Else,
                "endif" => Tag::EndIf,
                "for" | "macro" => Tag::Open,
                "endfor" | "endmacro" => Tag::Close,
                "raw" => {
                    // Through its `endraw`, as one piece.
                    end = body[end..]
                        .find("endraw")
                        .and_then(|e| body[end + e..].find("%}").map(|c| end + e + c + 2))
                        .unwrap_or(body.len());
                    Tag::Other
                }
                _ => Tag::Other,
            }
        };
        out.push(Piece {
            text: &body[j..end],
            tag,
            left,
            right,
        });
        i = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> tera::Context {
        let mut c = tera::Context::new();
        c.insert("a", &true);
        c.insert("b", &false);
        c.insert("s", "text");
        c
    }

    fn same(template: &str) -> String {
        let ctx = ctx();
        let folded = fold(template, &ctx);
        let want = tera::Tera::one_off(template, &ctx, false).unwrap();
        let got = tera::Tera::one_off(&folded, &ctx, false).unwrap();
        assert_eq!(got, want, "folded: {folded}");
        folded
    }

    #[test]
    fn known_chains_fold_to_their_branch() {
        let folded = same(
            "x {%- if b -%} B {%- elif not b and a -%}\n C {{ s }}\n {%- else %} D {% endif -%}  y",
        );
        assert!(!folded.contains("if"), "{folded}");
        assert!(!folded.contains(" D "), "{folded}");
        same("1\n{% if b %}no{% endif %}\n2");
        same("1\n{%- if b or a %} yes {%- endif %}\n2");
        same("{% if s is defined and z is not defined %}d{% endif %}");
    }

    #[test]
    fn whitespace_control_is_kept_around_nested_tags() {
        same("a  \n{%- if a %}{%- if s %}\n  in {% endif -%}\n{% endif -%}\n   b");
        same("a\n  {% if a -%}\n {{ s }}\n  {%- endif %}\n  b");
        same("a {% if a %}\n{%- set t = 1 -%}\n{% endif %} {{ s }}");
    }

    #[test]
    fn unknown_conditions_loops_and_shadowed_names_are_left_to_tera() {
        let folded = same("{% if s | length > 2 %}{% if a %}A{% endif %}{% endif %}");
        assert!(
            folded.starts_with("{% if s | length > 2 %}{% raw %}"),
            "{folded}"
        );
        let folded = same("{% for a in [1] %}{% if a %}{{ a }}{% endif %}{% endfor %}");
        assert!(folded.contains("{% if a %}"), "{folded}");
        let folded = same("{% set b = true %}{% if b %}B{% endif %}");
        assert!(folded.contains("{% if b %}"), "{folded}");
        let folded = same("{% if s %}S{% endif %}{% raw %}{% if a %}{% endraw %}");
        assert!(folded.contains("{% if s %}"), "{folded}");
    }
}
