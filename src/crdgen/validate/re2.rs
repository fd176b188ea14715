//! Regular expressions checked as Go's `regexp` (RE2) parses them, which kube-apiserver uses for
//! `pattern` and for literal `matches(..)` arguments: regex-syntax's parser (the same syntax
//! family, maintained) plus the two limits RE2 adds: no repetition directly applied to a
//! repetition (`a**`, `a+*`, `a{2}{3}`), and no repeat count above 1000.

use regex_syntax::ast::{Ast, RepetitionKind, RepetitionRange};

/// Why Go would refuse `pattern`, if it would.
pub(super) fn error(pattern: &str) -> Option<String> {
    let ast = match regex_syntax::ast::parse::Parser::new().parse(pattern) {
        Ok(a) => a,
        Err(e) => return Some(last_line(&e.to_string())),
    };
    if let Some(e) = limits(&ast) {
        return Some(e);
    }
    regex_syntax::Parser::new()
        .parse(pattern)
        .err()
        .map(|e| last_line(&e.to_string()))
}

fn last_line(s: &str) -> String {
    s.lines().last().unwrap_or_default().trim().to_string()
}

fn limits(ast: &Ast) -> Option<String> {
    match ast {
        Ast::Repetition(r) => {
            if matches!(*r.ast, Ast::Repetition(_)) {
                return Some("invalid nested repetition operator".into());
            }
            if let RepetitionKind::Range(range) = &r.op.kind {
                let n = match range {
                    RepetitionRange::Exactly(n) | RepetitionRange::AtLeast(n) => *n,
                    RepetitionRange::Bounded(a, b) => (*a).max(*b),
                };
                if n > 1000 {
                    return Some("invalid repeat count".into());
                }
            }
            limits(&r.ast)
        }
        Ast::Group(g) => limits(&g.ast),
        Ast::Alternation(a) => a.asts.iter().find_map(limits),
        Ast::Concat(c) => c.asts.iter().find_map(limits),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::error;

    #[test]
    fn refuses_what_go_refuses() {
        for bad in ["a**", "a+*", "a{2}{3}", "a{1001}", "[", "(?<x"] {
            assert!(error(bad).is_some(), "{bad}");
        }
        for ok in [
            "a*?",
            "(a*)*",
            "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
            "\\pN",
            "(?P<x>a)",
            "a{1000}",
        ] {
            assert_eq!(error(ok), None, "{ok}");
        }
    }
}
