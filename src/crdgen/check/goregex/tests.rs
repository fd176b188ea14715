//! Go's verdicts (each taken from kube-apiserver 1.36.2, built with Go 1.26) per construct.

use super::{ErrorCode as E, error, matches};

fn refused(p: &str) -> Option<(E, String)> {
    error(p).map(|e| (e.code, e.expr))
}

#[track_caller]
fn bad(p: &str, code: E, expr: &str) {
    assert_eq!(refused(p), Some((code, expr.to_string())), "{p}");
}

#[track_caller]
fn ok(p: &str) {
    assert_eq!(refused(p), None, "{p}");
}

#[test]
fn flags_are_imsu_only() {
    for p in ["(?i)a", "(?i-m)a", "(?)a", "(?s:.)", "(?U)a*", "(?im-sU:a)"] {
        ok(p);
    }
    bad("(?x)a", E::InvalidPerlOp, "(?x");
    bad("(?i-)a", E::InvalidPerlOp, "(?i-)");
    bad("(?-)a", E::InvalidPerlOp, "(?-)");
    bad("(?R)", E::InvalidPerlOp, "(?R");
    bad("(?'n'a)", E::InvalidPerlOp, "(?'");
    bad("(?P=n)", E::InvalidPerlOp, "(?P");
    bad("(?=a)", E::InvalidPerlOp, "(?=");
    bad("(?i", E::InvalidPerlOp, "(?i");
}

#[test]
fn named_groups() {
    ok("(?P<n>a)");
    ok("(?<n>a)");
    ok("(?P<n>a)(?P<n>b)");
    bad("(?P<n!>a)", E::InvalidNamedCapture, "(?P<n!>");
    bad("(?P<>a)", E::InvalidNamedCapture, "(?P<>");
    bad("(?P<name", E::InvalidNamedCapture, "(?P<name");
    bad("(?<é>a)", E::InvalidNamedCapture, "(?<é>");
}

#[test]
fn quoting_and_escapes() {
    for p in [
        "\\Qa.b\\E",
        "\\Qa",
        "\\Q",
        "\\x{10FFFF}",
        "\\x41",
        "\\0",
        "\\07",
        "\\377",
        "\\_",
        "\\z",
        "\\A",
        "\\b",
        "\\B",
        "\\a\\f\\t\\n\\r\\v",
        "\\.\\-\\ ",
    ] {
        ok(p);
    }
    bad("\\Ea", E::InvalidEscape, "\\E");
    bad("\\x{110000}", E::InvalidEscape, "\\x{110000");
    bad("\\x4", E::InvalidEscape, "\\x4");
    bad("\\x", E::InvalidEscape, "\\x");
    bad("\\8", E::InvalidEscape, "\\8");
    bad("\\1", E::InvalidEscape, "\\1");
    bad("\\e", E::InvalidEscape, "\\e");
    bad("\\u0041", E::InvalidEscape, "\\u");
    bad("\\C", E::InvalidEscape, "\\C");
    bad("\\Z", E::InvalidEscape, "\\Z");
    bad("a\\", E::TrailingBackslash, "");
    bad("[\\Q]\\E]", E::InvalidEscape, "\\Q");
}

#[test]
fn classes() {
    for p in [
        "[]a]",
        "[[:word:]]",
        "[[:^alpha:]]",
        "[a-]",
        "[-a]",
        "[\\d-z]",
        "[\\p{Greek}]",
    ] {
        ok(p);
    }
    bad("[z-a]", E::InvalidCharRange, "z-a");
    bad("[a-\\d]", E::InvalidEscape, "\\d");
    bad("[[:foo:]]", E::InvalidCharRange, "[:foo:]");
    bad("[[:alpha:]", E::MissingBracket, "[[:alpha:]");
    bad("[]", E::MissingBracket, "[]");
    bad("[^]", E::MissingBracket, "[^]");
}

#[test]
fn unicode_names_are_go_1_26s() {
    for p in [
        "\\p{Greek}",
        "\\p{greek}",
        "\\p{Letter}",
        "\\p{Cased_Letter}",
        "\\p{lu}",
        "\\p{Any}",
        "\\p{ascii}",
        "\\p{Assigned}",
        "\\p{Cn}",
        "\\p{LC}",
        "\\p{Kawi}",
        "\\pL",
        "\\pl",
        "\\p{^Greek}",
        "\\P{^L}",
        "\\p{Common}",
        "\\p{Nko}",
        "\\p{digit}",
        "\\p{Other}",
    ] {
        ok(p);
    }
    for (p, seq) in [
        ("\\p{Emoji}", "\\p{Emoji}"),
        ("\\p{Garay}", "\\p{Garay}"),
        ("\\p{Old_Italic}", "\\p{Old_Italic}"),
        ("\\p{SignWriting}", "\\p{SignWriting}"),
        ("\\p{Grek}", "\\p{Grek}"),
        ("\\p{Unknown}", "\\p{Unknown}"),
        ("\\p{}", "\\p{}"),
        ("\\p", "\\p"),
        ("\\p{", "\\p{"),
        ("\\pé", "\\pé"),
    ] {
        bad(p, E::InvalidCharRange, seq);
    }
}

#[test]
fn repetition() {
    for p in [
        "a{,5}",
        "x{2}{,3}",
        "a{1000}",
        "(a{100}){10}",
        "a*?",
        "a{01}",
        "(a*)*",
        "^*",
    ] {
        ok(p);
    }
    bad("a{1001}", E::InvalidRepeatSize, "{1001}");
    bad("(a{100}){11}", E::InvalidRepeatSize, "{11}");
    bad("a{1,0}", E::InvalidRepeatSize, "{1,0}");
    bad("a{2}{3}", E::InvalidRepeatOp, "{2}{3}");
    bad("a**", E::InvalidRepeatOp, "**");
    bad("a*??", E::InvalidRepeatOp, "*??");
    bad("*a", E::MissingRepeatArgument, "*");
    bad("(+)", E::MissingRepeatArgument, "+");
    bad("a|*", E::MissingRepeatArgument, "*");
}

#[test]
fn parens_and_limits() {
    bad("(?:a", E::MissingParen, "(?:a");
    bad("a)", E::UnexpectedParen, "a)");
    let deep = |n: usize, open: &str| format!("{}a{}", open.repeat(n), ")".repeat(n));
    ok(&deep(300, "("));
    ok(&deep(999, "("));
    assert_eq!(
        refused(&deep(1000, "(")).map(|e| e.0),
        Some(E::NestingDepth)
    );
    ok(&deep(2000, "(?:"));
    let big = format!("(?:{}){{1000}}", "abcdefghij".repeat(400));
    assert_eq!(refused(&big).map(|e| e.0), Some(E::Large));
}

#[test]
fn matching_is_gos() {
    // ASCII \d \w \s \b; Unicode `.` and case folding.
    assert_eq!(matches("^\\d+$", "١٢"), Some(false));
    assert_eq!(matches("^\\w+$", "é"), Some(false));
    assert_eq!(matches("^\\s$", "\u{a0}"), Some(false));
    assert_eq!(matches("^\\s$", "\u{b}"), Some(false));
    assert_eq!(matches("^[[:space:]]$", "\u{b}"), Some(true));
    assert_eq!(matches("\\bb", "éb"), Some(true));
    assert_eq!(matches("^.$", "é"), Some(true));
    assert_eq!(matches("^.$", "\n"), Some(false));
    assert_eq!(matches("(?s)^.$", "\n"), Some(true));
    assert_eq!(matches("(?i)^k$", "\u{212a}"), Some(true));
    assert_eq!(matches("(?i)^\\w$", "\u{17f}"), Some(true));
    assert_eq!(matches("^\\Qa.b\\E$", "a.b"), Some(true));
    assert_eq!(matches("^\\Qa.b\\E$", "axb"), Some(false));
    assert_eq!(matches("^a{,5}$", "a{,5}"), Some(true));
    assert_eq!(matches("^a{,5}$", "aa"), Some(false));
    assert_eq!(matches("^\\p{Greek}+$", "αβ"), Some(true));
    assert_eq!(matches("^\\p{Greek}+$", "ab"), Some(false));
    assert_eq!(matches("^[^a]$", "\n"), Some(true));
    assert_eq!(matches("a$", "a\n"), Some(false));
    assert_eq!(matches("(?m)a$", "a\n"), Some(true));
    assert_eq!(matches("^\\x{41}\\101$", "AA"), Some(true));
    // A character newer than Unicode 15 under a Unicode class: not judged.
    assert_eq!(matches("^\\p{L}$", "\u{10D50}"), None);
    // Not Go: not judged.
    assert_eq!(matches("(?x)a", "a"), None);
}

#[test]
fn every_table_go_can_name_has_a_class() {
    use super::{CATEGORIES, CATEGORY_ALIASES, SCRIPTS, canonical_name, unicode_table};
    let names = CATEGORIES
        .iter()
        .chain(SCRIPTS)
        .chain(CATEGORY_ALIASES.iter().map(|(a, _)| a));
    let mut reachable = 0;
    for name in names {
        let class = unicode_table(name);
        if canonical_name(name) == *name || CATEGORY_ALIASES.iter().any(|(a, _)| a == name) {
            reachable += 1;
            let surrogates = canonical_name(name) == "Cs" || *name == "Surrogate";
            assert!(
                class.is_some_and(|c| c.ranges().is_empty() == surrogates),
                "{name}"
            );
        } else {
            assert!(class.is_none(), "{name} is not reachable in Go 1.26");
        }
    }
    assert!(reachable > 150, "{reachable}");
}
