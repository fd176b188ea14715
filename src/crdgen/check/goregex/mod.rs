//! Regular expressions as kube-apiserver reads them: Go's `regexp/syntax.Parse(p, syntax.Perl)`
//! (Go 1.26, Unicode 15.0), which compiles a schema's `pattern` and the literal regex of CEL's
//! `matches` / `find` / `findAll`. [`parse`] is a port of that parser's grammar and error cases
//! (flags `imsU` only, `(?P<n>` / `(?<n>`, `\Q..\E`, Go's escapes, Perl, POSIX and Unicode
//! classes under Go's table names, `{n,m}` up to 1000 and its nested product, `{,n}` as text, the
//! nesting and size limits); its tree is translated to an equivalent `regex::bytes` pattern
//! ([`matches`]) so defaults and examples are matched with Go's semantics (ASCII `\d \s \w \b`,
//! Unicode `.` and case folding). Where the two engines' tables may differ (characters assigned
//! after Unicode 15 under a Unicode class) [`matches`] declines to judge.

use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, HirKind};

/// Go's `syntax.ErrorCode`s that `Parse` can return for a valid UTF-8 pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(super) enum ErrorCode {
    #[error("invalid character class range")]
    InvalidCharRange,
    #[error("invalid escape sequence")]
    InvalidEscape,
    #[error("invalid named capture")]
    InvalidNamedCapture,
    #[error("invalid or unsupported Perl syntax")]
    InvalidPerlOp,
    #[error("invalid nested repetition operator")]
    InvalidRepeatOp,
    #[error("invalid repeat count")]
    InvalidRepeatSize,
    #[error("missing closing ]")]
    MissingBracket,
    #[error("missing closing )")]
    MissingParen,
    #[error("missing argument to repetition operator")]
    MissingRepeatArgument,
    #[error("trailing backslash at end of expression")]
    TrailingBackslash,
    #[error("unexpected )")]
    UnexpectedParen,
    #[error("expression nests too deeply")]
    NestingDepth,
    #[error("expression too large")]
    Large,
}

/// A refusal as Go words it: `error parsing regexp: <code>: `<expr>``.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("error parsing regexp: {code}: `{expr}`")]
pub(super) struct GoError {
    pub code: ErrorCode,
    pub expr: String,
}

impl GoError {
    /// The rule broken, with a valid example, for the refusal's fix line.
    pub(super) fn rule(&self) -> &'static str {
        match self.code {
            ErrorCode::InvalidCharRange => {
                "a class range runs low to high (`[a-z]`), POSIX classes are Go's (`[[:alpha:]]`), and `\\p{..}` names a Unicode 15 category or one-word script Go knows (`\\pL`, `\\p{Greek}`, `\\p{Letter}`; not `\\p{Emoji}` nor `\\p{Old_Italic}`)"
            }
            ErrorCode::InvalidEscape => {
                "Go accepts `\\a \\f \\t \\n \\r \\v`, octal `\\0`..`\\377`, `\\x41` / `\\x{10FFFF}`, `\\d \\s \\w \\b \\A \\z \\pL \\Q..\\E` and escaped punctuation (`\\.`); not `\\u0041`, `\\e`, `\\Z` nor backreferences (`\\1`)"
            }
            ErrorCode::InvalidNamedCapture => {
                "a named group is `(?P<name>..)` or `(?<name>..)` with a name of ASCII letters, digits and `_`"
            }
            ErrorCode::InvalidPerlOp => {
                "Go's groups are `(..)`, `(?:..)`, `(?P<name>..)` and the flags `i m s U` (`(?i)`, `(?i-s:..)`); no `(?x)`, lookaround, `(?R)` or atomic groups"
            }
            ErrorCode::InvalidRepeatOp => {
                "a repetition applies to an atom, not to another repetition: write `(?:a*)*` instead of `a**`"
            }
            ErrorCode::InvalidRepeatSize => {
                "`{n,m}` needs n <= m <= 1000, and nested counts multiply to at most 1000 (`(?:a{10}){100}`)"
            }
            ErrorCode::MissingBracket => "close every `[` with `]` (`[]a]` is `]` or `a`)",
            ErrorCode::MissingParen => "close every `(` with `)`",
            ErrorCode::MissingRepeatArgument => {
                "`*`, `+`, `?` and `{n}` follow what they repeat (`a*`); write `\\*` for the character"
            }
            ErrorCode::TrailingBackslash => "end with `\\\\` for a literal backslash",
            ErrorCode::UnexpectedParen => "escape a literal `)` as `\\)`",
            ErrorCode::NestingDepth => "nest groups and repetitions at most 1000 deep",
            ErrorCode::Large => {
                "keep the expression under Go's size limit (about 3.3 million instructions after expanding counted repetitions)"
            }
        }
    }
}

/// Why Go would refuse `pattern`, if it would.
pub(super) fn error(pattern: &str) -> Option<GoError> {
    parse(pattern).err()
}

/// Whether `text` matches `pattern` (unanchored, as Go's `MatchString`); `None` when the pattern
/// is not valid Go or the answer could differ between Go's tables and ours.
pub(super) fn matches(pattern: &str, text: &str) -> Option<bool> {
    let tree = parse(pattern).ok()?;
    if tree.unicode_tables && !text.chars().all(in_unicode_15) {
        return None;
    }
    let mut out = String::new();
    tree.node.emit(&mut out);
    let re = regex::bytes::RegexBuilder::new(&out)
        .nest_limit(4 * MAX_HEIGHT as u32)
        .size_limit(1 << 28)
        .build()
        .ok()?;
    Some(re.is_match(text.as_bytes()))
}

/// Characters assigned in Unicode 15.0 (Go 1.26's tables) or never assigned since: a character
/// regex-syntax's newer tables place in a class Go's tables do not know yet is judged by neither.
fn in_unicode_15(c: char) -> bool {
    use std::sync::LazyLock;
    static NEWER: LazyLock<regex::Regex> =
        LazyLock::new(|| regex::Regex::new(r"\p{Assigned}").expect("valid"));
    static OLD: LazyLock<regex::Regex> =
        LazyLock::new(|| regex::Regex::new(r"\p{Age=V15_0}").expect("valid"));
    let mut buf = [0; 4];
    let s = c.encode_utf8(&mut buf);
    OLD.is_match(s) || !NEWER.is_match(s)
}

/// `maxHeight` of Go's parser.
const MAX_HEIGHT: usize = 1000;
/// `maxRepeat`: the largest count of one `{n,m}` and of nested counts multiplied.
const MAX_REPEAT: i64 = 1000;
/// `maxSize`: 128 MiB of 40-byte instructions.
const MAX_SIZE: i64 = (128 << 20) / 40;

/// A parsed expression with the flags resolved into its nodes (Go's `Regexp` shapes).
#[derive(Debug, Clone)]
enum Node {
    Empty,
    /// One character; `fold` for `(?i)`.
    Lit(char, bool),
    Class(ClassUnicode),
    AnyNotNl,
    Any,
    BeginLine,
    EndLine,
    BeginText,
    EndText,
    WordBoundary,
    NoWordBoundary,
    Capture(Box<Node>),
    Repeat(Box<Node>, Rep),
    Concat(Vec<Node>),
    Alternate(Vec<Node>),
}

#[derive(Debug, Clone, Copy)]
enum Rep {
    Star,
    Plus,
    Quest,
    /// `{min,max}`, max -1 for none.
    Range(i64, i64),
}

struct Parsed {
    node: Node,
    /// Whether a `\p` class or `(?i)` (tables that follow the Unicode version) is used.
    unicode_tables: bool,
}

#[derive(Clone, Copy, PartialEq)]
struct Flags {
    fold: bool,
    one_line: bool,
    dot_nl: bool,
    non_greedy: bool,
}

/// An open group: its capture, the flags to restore at `)`, the alternatives so far and the
/// current concatenation.
struct Frame {
    capture: bool,
    saved: Flags,
    alts: Vec<Node>,
    cur: Vec<Node>,
}

fn err(code: ErrorCode, expr: &str) -> GoError {
    GoError {
        code,
        expr: expr.to_string(),
    }
}

fn is_alnum(c: char) -> bool {
    c.is_ascii_alphanumeric()
}

/// Go's `Parse(s, syntax.Perl)`.
fn parse(whole: &str) -> Result<Parsed, GoError> {
    let mut flags = Flags {
        fold: false,
        one_line: true,
        dot_nl: false,
        non_greedy: false,
    };
    let mut unicode_tables = false;
    let mut stack = vec![Frame {
        capture: false,
        saved: flags,
        alts: vec![],
        cur: vec![],
    }];
    let mut t = whole;
    let mut last_repeat: Option<&str> = None;
    while let Some(c) = t.chars().next() {
        let mut repeat = None;
        match c {
            '(' if t[1..].starts_with('?') => {
                t = perl_flags(t, &mut flags, &mut stack)?;
            }
            '(' => {
                stack.push(Frame {
                    capture: true,
                    saved: flags,
                    alts: vec![],
                    cur: vec![],
                });
                t = &t[1..];
            }
            '|' => {
                let f = stack.last_mut().expect("frame");
                let cur = std::mem::take(&mut f.cur);
                f.alts.push(concat(cur));
                t = &t[1..];
            }
            ')' => {
                if stack.len() < 2 {
                    return Err(err(ErrorCode::UnexpectedParen, whole));
                }
                let f = stack.pop().expect("frame");
                flags = f.saved;
                let inner = finish(f.alts, f.cur);
                let node = if f.capture {
                    Node::Capture(Box::new(inner))
                } else {
                    inner
                };
                stack.last_mut().expect("frame").cur.push(node);
                t = &t[1..];
            }
            '^' => {
                push(
                    &mut stack,
                    if flags.one_line {
                        Node::BeginText
                    } else {
                        Node::BeginLine
                    },
                );
                t = &t[1..];
            }
            '$' => {
                push(
                    &mut stack,
                    if flags.one_line {
                        Node::EndText
                    } else {
                        Node::EndLine
                    },
                );
                t = &t[1..];
            }
            '.' => {
                push(
                    &mut stack,
                    if flags.dot_nl {
                        Node::Any
                    } else {
                        Node::AnyNotNl
                    },
                );
                t = &t[1..];
            }
            '[' => {
                let (class, rest) = parse_class(t, flags, &mut unicode_tables)?;
                push(&mut stack, Node::Class(class));
                t = rest;
            }
            '*' | '+' | '?' => {
                let before = t;
                let op = match c {
                    '*' => Rep::Star,
                    '+' => Rep::Plus,
                    _ => Rep::Quest,
                };
                t = apply_repeat(&mut stack, op, before, &t[1..], last_repeat)?;
                repeat = Some(before);
            }
            '{' => match parse_repeat(t) {
                None => {
                    push(&mut stack, Node::Lit('{', flags.fold));
                    t = &t[1..];
                }
                Some((min, max, after)) => {
                    let before = t;
                    if !(0..=MAX_REPEAT).contains(&min)
                        || max > MAX_REPEAT
                        || (max >= 0 && min > max)
                    {
                        return Err(err(
                            ErrorCode::InvalidRepeatSize,
                            &before[..before.len() - after.len()],
                        ));
                    }
                    t = apply_repeat(&mut stack, Rep::Range(min, max), before, after, last_repeat)?;
                    repeat = Some(before);
                }
            },
            '\\' => {
                let next = t[1..].chars().next();
                let simple = match next {
                    Some('A') => Some(Node::BeginText),
                    Some('b') => Some(Node::WordBoundary),
                    Some('B') => Some(Node::NoWordBoundary),
                    Some('z') => Some(Node::EndText),
                    _ => None,
                };
                if let Some(n) = simple {
                    push(&mut stack, n);
                    t = &t[2..];
                } else if next == Some('C') {
                    return Err(err(ErrorCode::InvalidEscape, &t[..2]));
                } else if next == Some('Q') {
                    let (lit, rest) = t[2..].split_once("\\E").unwrap_or((&t[2..], ""));
                    for c in lit.chars() {
                        push(&mut stack, Node::Lit(c, flags.fold));
                    }
                    t = rest;
                } else if let Some((class, rest)) = unicode_class(t, flags)? {
                    unicode_tables = true;
                    push(&mut stack, Node::Class(class));
                    t = rest;
                } else if let Some((class, rest)) = perl_class(t, flags) {
                    push(&mut stack, Node::Class(class));
                    t = rest;
                } else {
                    let (c, rest) = parse_escape(t)?;
                    push(&mut stack, Node::Lit(c, flags.fold));
                    t = rest;
                }
            }
            c => {
                push(&mut stack, Node::Lit(c, flags.fold));
                t = &t[c.len_utf8()..];
            }
        }
        last_repeat = repeat;
    }
    if stack.len() != 1 {
        return Err(err(ErrorCode::MissingParen, whole));
    }
    let f = stack.pop().expect("frame");
    let node = finish(f.alts, f.cur);
    if height(&node) > MAX_HEIGHT {
        return Err(err(ErrorCode::NestingDepth, whole));
    }
    if size(&node) > MAX_SIZE {
        return Err(err(ErrorCode::Large, whole));
    }
    Ok(Parsed {
        unicode_tables: unicode_tables || uses_fold(&node),
        node,
    })
}

fn push(stack: &mut [Frame], n: Node) {
    stack.last_mut().expect("frame").cur.push(n);
}

/// Go's `repeat`: `op` applied to the last atom; `after` is what follows the operator.
fn apply_repeat<'a>(
    stack: &mut [Frame],
    op: Rep,
    before: &'a str,
    mut after: &'a str,
    last_repeat: Option<&'a str>,
) -> Result<&'a str, GoError> {
    if let Some(rest) = after.strip_prefix('?') {
        after = rest;
    }
    if let Some(last) = last_repeat {
        return Err(err(
            ErrorCode::InvalidRepeatOp,
            &last[..last.len() - after.len()],
        ));
    }
    let cur = &mut stack.last_mut().expect("frame").cur;
    let Some(sub) = cur.pop() else {
        return Err(err(
            ErrorCode::MissingRepeatArgument,
            &before[..before.len() - after.len()],
        ));
    };
    let node = Node::Repeat(Box::new(sub), op);
    if let Rep::Range(min, max) = op
        && (min >= 2 || max >= 2)
        && !repeat_is_valid(&node, MAX_REPEAT)
    {
        return Err(err(
            ErrorCode::InvalidRepeatSize,
            &before[..before.len() - after.len()],
        ));
    }
    cur.push(node);
    Ok(after)
}

/// Go's `repeatIsValid`: nested `{n,m}` counts multiply to at most `n`.
fn repeat_is_valid(node: &Node, mut n: i64) -> bool {
    if let Node::Repeat(_, Rep::Range(min, max)) = node {
        let mut m = *max;
        if m == 0 {
            return true;
        }
        if m < 0 {
            m = *min;
        }
        if m > n {
            return false;
        }
        if m > 0 {
            n /= m;
        }
    }
    children(node).iter().all(|s| repeat_is_valid(s, n))
}

fn children(node: &Node) -> &[Node] {
    match node {
        Node::Capture(s) | Node::Repeat(s, _) => std::slice::from_ref(&**s),
        Node::Concat(v) | Node::Alternate(v) => v,
        _ => &[],
    }
}

/// Go's `parseRepeat`: `{n}`, `{n,}`, `{n,m}` (min -1 when a number is too big); `None` when
/// the text is not of that form (then `{` is a literal).
fn parse_repeat(s: &str) -> Option<(i64, i64, &str)> {
    let s = s.strip_prefix('{')?;
    let (mut min, s) = parse_int(s)?;
    let (max, s) = match s.strip_prefix(',') {
        None => (min, s),
        Some(s) if s.starts_with('}') => (-1, s),
        Some(s) => {
            let (max, s) = parse_int(s)?;
            if max < 0 {
                min = -1;
            }
            (max, s)
        }
    };
    let rest = s.strip_prefix('}')?;
    Some((min, max, rest))
}

/// Go's `parseInt`: decimal digits without a leading zero; -1 when at least 1e8.
fn parse_int(s: &str) -> Option<(i64, &str)> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || (digits >= 2 && s.starts_with('0')) {
        return None;
    }
    let mut n: i64 = 0;
    for b in s[..digits].bytes() {
        if n >= 100_000_000 {
            n = -1;
            break;
        }
        n = n * 10 + i64::from(b - b'0');
    }
    Some((n, &s[digits..]))
}

/// Go's `parsePerlFlags`: `(?P<name>`, `(?<name>`, `(?flags)`, `(?flags:`.
fn perl_flags<'a>(
    s: &'a str,
    flags: &mut Flags,
    stack: &mut Vec<Frame>,
) -> Result<&'a str, GoError> {
    let b = s.as_bytes();
    let starts_with_p = b.len() > 4 && b[2] == b'P' && b[3] == b'<';
    let starts_with_name = b.len() > 3 && b[2] == b'<';
    if starts_with_p || starts_with_name {
        let start = if starts_with_p { 4 } else { 3 };
        let Some(end) = s.find('>') else {
            return Err(err(ErrorCode::InvalidNamedCapture, s));
        };
        let name = &s[start..end];
        if name.is_empty() || !name.chars().all(|c| c == '_' || is_alnum(c)) {
            return Err(err(ErrorCode::InvalidNamedCapture, &s[..=end]));
        }
        stack.push(Frame {
            capture: true,
            saved: *flags,
            alts: vec![],
            cur: vec![],
        });
        return Ok(&s[end + 1..]);
    }
    let mut t = &s[2..];
    let mut new = *flags;
    let mut negated = false;
    let mut saw_flag = false;
    while let Some(c) = t.chars().next() {
        t = &t[c.len_utf8()..];
        let value = !negated;
        match c {
            'i' => new.fold = value,
            'm' => new.one_line = !value,
            's' => new.dot_nl = value,
            'U' => new.non_greedy = value,
            '-' if !negated => {
                negated = true;
                saw_flag = false;
                continue;
            }
            ':' | ')' => {
                if negated && !saw_flag {
                    break;
                }
                if c == ':' {
                    stack.push(Frame {
                        capture: false,
                        saved: *flags,
                        alts: vec![],
                        cur: vec![],
                    });
                }
                *flags = new;
                return Ok(t);
            }
            _ => break,
        }
        saw_flag = true;
    }
    Err(err(ErrorCode::InvalidPerlOp, &s[..s.len() - t.len()]))
}

/// Go's `parseEscape`: one escaped character (`s` starts with `\`).
fn parse_escape(s: &str) -> Result<(char, &str), GoError> {
    let mut t = &s[1..];
    let Some(c) = t.chars().next() else {
        return Err(err(ErrorCode::TrailingBackslash, ""));
    };
    t = &t[c.len_utf8()..];
    let bad = |t: &str| err(ErrorCode::InvalidEscape, &s[..s.len() - t.len()]);
    let octal = |t: &str| {
        t.as_bytes()
            .first()
            .is_some_and(|b| (b'0'..=b'7').contains(b))
    };
    match c {
        '1'..='7' if !octal(t) => Err(bad(t)),
        '0'..='7' => {
            let mut r = c as u32 - '0' as u32;
            for _ in 1..3 {
                if !octal(t) {
                    break;
                }
                r = r * 8 + u32::from(t.as_bytes()[0] - b'0');
                t = &t[1..];
            }
            Ok((char::from_u32(r).expect("octal below 0o777"), t))
        }
        'x' => {
            let Some(c) = t.chars().next() else {
                return Err(bad(t));
            };
            t = &t[c.len_utf8()..];
            if c == '{' {
                let mut r: u32 = 0;
                let mut nhex = 0;
                loop {
                    let Some(c) = t.chars().next() else {
                        return Err(bad(t));
                    };
                    t = &t[c.len_utf8()..];
                    if c == '}' {
                        break;
                    }
                    let Some(v) = c.to_digit(16) else {
                        return Err(bad(t));
                    };
                    r = r * 16 + v;
                    if r > 0x10FFFF {
                        return Err(bad(t));
                    }
                    nhex += 1;
                }
                if nhex == 0 {
                    return Err(bad(t));
                }
                // Go accepts surrogates here; no string can hold one, so U+FFFD stands in.
                return Ok((char::from_u32(r).unwrap_or('\u{FFFD}'), t));
            }
            let x = c.to_digit(16);
            let c2 = t.chars().next();
            if let Some(c2) = c2 {
                t = &t[c2.len_utf8()..];
            }
            match (x, c2.and_then(|c| c.to_digit(16))) {
                (Some(x), Some(y)) => Ok((char::from_u32(x * 16 + y).expect("byte"), t)),
                _ => Err(bad(t)),
            }
        }
        'a' => Ok(('\x07', t)),
        'f' => Ok(('\x0C', t)),
        'n' => Ok(('\n', t)),
        'r' => Ok(('\r', t)),
        't' => Ok(('\t', t)),
        'v' => Ok(('\x0B', t)),
        c if c.is_ascii() && !is_alnum(c) => Ok((c, t)),
        _ => Err(bad(t)),
    }
}

fn class_of(ranges: &[(char, char)]) -> ClassUnicode {
    ClassUnicode::new(ranges.iter().map(|&(a, b)| ClassUnicodeRange::new(a, b)))
}

/// A Go class item: negated when `negate`, case-folded first under `(?i)` (Go's `appendGroup`).
fn group(mut class: ClassUnicode, negate: bool, flags: Flags) -> ClassUnicode {
    if flags.fold {
        class.case_fold_simple();
    }
    if negate {
        class.negate();
    }
    class
}

/// Go's `perlGroup`: `\d \D \s \S \w \W`, ASCII only.
fn perl_class(s: &str, flags: Flags) -> Option<(ClassUnicode, &str)> {
    let c = s.strip_prefix('\\')?.chars().next()?;
    let ranges: &[(char, char)] = match c.to_ascii_lowercase() {
        'd' => &[('0', '9')],
        's' => &[('\t', '\n'), ('\x0C', '\r'), (' ', ' ')],
        'w' => &[('0', '9'), ('A', 'Z'), ('_', '_'), ('a', 'z')],
        _ => return None,
    };
    Some((
        group(class_of(ranges), c.is_ascii_uppercase(), flags),
        &s[2..],
    ))
}

/// Go's `posixGroup` (`[:alpha:]`, `[:^alpha:]`, ...).
fn posix_class(name: &str) -> Option<(&'static [(char, char)], bool)> {
    let (negate, name) = match name.strip_prefix('^') {
        Some(n) => (true, n),
        None => (false, name),
    };
    let ranges: &'static [(char, char)] = match name {
        "alnum" => &[('0', '9'), ('A', 'Z'), ('a', 'z')],
        "alpha" => &[('A', 'Z'), ('a', 'z')],
        "ascii" => &[('\0', '\x7F')],
        "blank" => &[('\t', '\t'), (' ', ' ')],
        "cntrl" => &[('\0', '\x1F'), ('\x7F', '\x7F')],
        "digit" => &[('0', '9')],
        "graph" => &[('!', '~')],
        "lower" => &[('a', 'z')],
        "print" => &[(' ', '~')],
        "punct" => &[('!', '/'), (':', '@'), ('[', '`'), ('{', '~')],
        "space" => &[('\t', '\r'), (' ', ' ')],
        "upper" => &[('A', 'Z')],
        "word" => &[('0', '9'), ('A', 'Z'), ('_', '_'), ('a', 'z')],
        "xdigit" => &[('0', '9'), ('A', 'F'), ('a', 'f')],
        _ => return None,
    };
    Some((ranges, negate))
}

/// Go's `canonicalName`: first letter upper, the rest lower, without `_`, `-` and spaces.
fn canonical_name(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars().filter(|c| !matches!(c, '_' | '-' | ' ')) {
        if out.is_empty() {
            out.push(c.to_ascii_uppercase());
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// Go 1.26's `unicode.Categories` keys (LC is looked up as `Lc`).
const CATEGORIES: &[&str] = &[
    "C", "Cc", "Cf", "Cn", "Co", "Cs", "L", "Ll", "Lm", "Lo", "Lt", "Lu", "M", "Mc", "Me", "Mn",
    "N", "Nd", "Nl", "No", "P", "Pc", "Pd", "Pe", "Pf", "Pi", "Po", "Ps", "S", "Sc", "Sk", "Sm",
    "So", "Z", "Zl", "Zp", "Zs",
];

/// Go 1.26's `unicode.CategoryAliases` (Unicode's long names and aliases of categories).
const CATEGORY_ALIASES: &[(&str, &str)] = &[
    ("Cased_Letter", "LC"),
    ("Close_Punctuation", "Pe"),
    ("Combining_Mark", "M"),
    ("Connector_Punctuation", "Pc"),
    ("Control", "Cc"),
    ("cntrl", "Cc"),
    ("Currency_Symbol", "Sc"),
    ("Dash_Punctuation", "Pd"),
    ("Decimal_Number", "Nd"),
    ("digit", "Nd"),
    ("Enclosing_Mark", "Me"),
    ("Final_Punctuation", "Pf"),
    ("Format", "Cf"),
    ("Initial_Punctuation", "Pi"),
    ("Letter", "L"),
    ("Letter_Number", "Nl"),
    ("Line_Separator", "Zl"),
    ("Lowercase_Letter", "Ll"),
    ("Mark", "M"),
    ("Math_Symbol", "Sm"),
    ("Modifier_Letter", "Lm"),
    ("Modifier_Symbol", "Sk"),
    ("Nonspacing_Mark", "Mn"),
    ("Number", "N"),
    ("Open_Punctuation", "Ps"),
    ("Other", "C"),
    ("Other_Letter", "Lo"),
    ("Other_Number", "No"),
    ("Other_Punctuation", "Po"),
    ("Other_Symbol", "So"),
    ("Paragraph_Separator", "Zp"),
    ("Private_Use", "Co"),
    ("Punctuation", "P"),
    ("punct", "P"),
    ("Separator", "Z"),
    ("Space_Separator", "Zs"),
    ("Spacing_Mark", "Mc"),
    ("Surrogate", "Cs"),
    ("Symbol", "S"),
    ("Titlecase_Letter", "Lt"),
    ("Unassigned", "Cn"),
    ("Uppercase_Letter", "Lu"),
];

/// Go 1.26's `unicode.Scripts` keys (Unicode 15.0). Go looks names up after `canonicalName`, so
/// only the keys already in that form (one word, one capital) can be named.
const SCRIPTS: &[&str] = &[
    "Adlam",
    "Ahom",
    "Anatolian_Hieroglyphs",
    "Arabic",
    "Armenian",
    "Avestan",
    "Balinese",
    "Bamum",
    "Bassa_Vah",
    "Batak",
    "Bengali",
    "Bhaiksuki",
    "Bopomofo",
    "Brahmi",
    "Braille",
    "Buginese",
    "Buhid",
    "Canadian_Aboriginal",
    "Carian",
    "Caucasian_Albanian",
    "Chakma",
    "Cham",
    "Cherokee",
    "Chorasmian",
    "Common",
    "Coptic",
    "Cuneiform",
    "Cypriot",
    "Cypro_Minoan",
    "Cyrillic",
    "Deseret",
    "Devanagari",
    "Dives_Akuru",
    "Dogra",
    "Duployan",
    "Egyptian_Hieroglyphs",
    "Elbasan",
    "Elymaic",
    "Ethiopic",
    "Georgian",
    "Glagolitic",
    "Gothic",
    "Grantha",
    "Greek",
    "Gujarati",
    "Gunjala_Gondi",
    "Gurmukhi",
    "Han",
    "Hangul",
    "Hanifi_Rohingya",
    "Hanunoo",
    "Hatran",
    "Hebrew",
    "Hiragana",
    "Imperial_Aramaic",
    "Inherited",
    "Inscriptional_Pahlavi",
    "Inscriptional_Parthian",
    "Javanese",
    "Kaithi",
    "Kannada",
    "Katakana",
    "Kawi",
    "Kayah_Li",
    "Kharoshthi",
    "Khitan_Small_Script",
    "Khmer",
    "Khojki",
    "Khudawadi",
    "Lao",
    "Latin",
    "Lepcha",
    "Limbu",
    "Linear_A",
    "Linear_B",
    "Lisu",
    "Lycian",
    "Lydian",
    "Mahajani",
    "Makasar",
    "Malayalam",
    "Mandaic",
    "Manichaean",
    "Marchen",
    "Masaram_Gondi",
    "Medefaidrin",
    "Meetei_Mayek",
    "Mende_Kikakui",
    "Meroitic_Cursive",
    "Meroitic_Hieroglyphs",
    "Miao",
    "Modi",
    "Mongolian",
    "Mro",
    "Multani",
    "Myanmar",
    "Nabataean",
    "Nag_Mundari",
    "Nandinagari",
    "New_Tai_Lue",
    "Newa",
    "Nko",
    "Nushu",
    "Nyiakeng_Puachue_Hmong",
    "Ogham",
    "Ol_Chiki",
    "Old_Hungarian",
    "Old_Italic",
    "Old_North_Arabian",
    "Old_Permic",
    "Old_Persian",
    "Old_Sogdian",
    "Old_South_Arabian",
    "Old_Turkic",
    "Old_Uyghur",
    "Oriya",
    "Osage",
    "Osmanya",
    "Pahawh_Hmong",
    "Palmyrene",
    "Pau_Cin_Hau",
    "Phags_Pa",
    "Phoenician",
    "Psalter_Pahlavi",
    "Rejang",
    "Runic",
    "Samaritan",
    "Saurashtra",
    "Sharada",
    "Shavian",
    "Siddham",
    "SignWriting",
    "Sinhala",
    "Sogdian",
    "Sora_Sompeng",
    "Soyombo",
    "Sundanese",
    "Syloti_Nagri",
    "Syriac",
    "Tagalog",
    "Tagbanwa",
    "Tai_Le",
    "Tai_Tham",
    "Tai_Viet",
    "Takri",
    "Tamil",
    "Tangsa",
    "Tangut",
    "Telugu",
    "Thaana",
    "Thai",
    "Tibetan",
    "Tifinagh",
    "Tirhuta",
    "Toto",
    "Ugaritic",
    "Vai",
    "Vithkuqi",
    "Wancho",
    "Warang_Citi",
    "Yezidi",
    "Yi",
    "Zanabazar_Square",
];

/// Go's `unicodeTable`: the class a `\p{name}` names, as regex-syntax's tables give it.
fn unicode_table(name: &str) -> Option<ClassUnicode> {
    let name = canonical_name(name);
    let property = match name.as_str() {
        "Any" => "Any".to_string(),
        "Assigned" => "Assigned".to_string(),
        "Ascii" => "ASCII".to_string(),
        "Lc" => "gc=LC".to_string(),
        n if CATEGORIES.contains(&n) => format!("gc={n}"),
        n if SCRIPTS.contains(&n) => format!("sc={n}"),
        n => {
            let (_, actual) = CATEGORY_ALIASES
                .iter()
                .find(|(alias, _)| canonical_name(alias) == n)?;
            format!("gc={actual}")
        }
    };
    if property == "gc=Cs" {
        // Surrogates: no string holds one (and Go decodes none), so the class is empty.
        return Some(ClassUnicode::empty());
    }
    let hir = regex_syntax::Parser::new()
        .parse(&format!("\\p{{{property}}}"))
        .expect("a property regex-syntax knows");
    match hir.kind() {
        HirKind::Class(Class::Unicode(c)) => Some(c.clone()),
        // A one-character category (Zl, Zp) comes back as that character.
        HirKind::Literal(l) => {
            let c = std::str::from_utf8(&l.0).ok()?.chars().next()?;
            Some(class_of(&[(c, c)]))
        }
        _ => None,
    }
}

/// Go's `parseUnicodeClass`: `\pL`, `\p{Greek}`, `\PL`, `\p{^Greek}`; `Ok(None)` when `s` does
/// not start with `\p` or `\P`.
fn unicode_class(s: &str, flags: Flags) -> Result<Option<(ClassUnicode, &str)>, GoError> {
    let Some(rest) = s.strip_prefix("\\p").or_else(|| s.strip_prefix("\\P")) else {
        return Ok(None);
    };
    let mut negate = s.as_bytes()[1] == b'P';
    let (seq, mut name, rest) = match rest.chars().next() {
        Some('{') => {
            let Some(end) = s.find('}') else {
                return Err(err(ErrorCode::InvalidCharRange, s));
            };
            (&s[..=end], &s[3..end], &s[end + 1..])
        }
        Some(c) => (
            &s[..2 + c.len_utf8()],
            &rest[..c.len_utf8()],
            &rest[c.len_utf8()..],
        ),
        None => (s, "", ""),
    };
    if let Some(n) = name.strip_prefix('^') {
        negate = !negate;
        name = n;
    }
    let Some(class) = unicode_table(name) else {
        return Err(err(ErrorCode::InvalidCharRange, seq));
    };
    Ok(Some((group(class, negate, flags), rest)))
}

/// Go's `parseClass`: `[...]` at the start of `s`.
fn parse_class<'a>(
    s: &'a str,
    flags: Flags,
    unicode_tables: &mut bool,
) -> Result<(ClassUnicode, &'a str), GoError> {
    let mut t = &s[1..];
    let mut negate = false;
    if let Some(rest) = t.strip_prefix('^') {
        negate = true;
        t = rest;
    }
    let mut class = ClassUnicode::empty();
    let mut first = true;
    while t.is_empty() || !t.starts_with(']') || first {
        first = false;
        if t.len() > 2
            && t.starts_with("[:")
            && let Some(i) = t[2..].find(":]")
        {
            let name = &t[..i + 4];
            let Some((ranges, neg)) = posix_class(&t[2..i + 2]) else {
                return Err(err(ErrorCode::InvalidCharRange, name));
            };
            class.union(&group(class_of(ranges), neg, flags));
            t = &t[i + 4..];
            continue;
        }
        if let Some((c, rest)) = unicode_class(t, flags)? {
            *unicode_tables = true;
            class.union(&c);
            t = rest;
            continue;
        }
        if let Some((c, rest)) = perl_class(t, flags) {
            class.union(&c);
            t = rest;
            continue;
        }
        let range_start = t;
        let (lo, rest) = class_char(t, s)?;
        t = rest;
        let mut hi = lo;
        if t.len() >= 2 && t.starts_with('-') && !t[1..].starts_with(']') {
            let (h, rest) = class_char(&t[1..], s)?;
            t = rest;
            hi = h;
            if hi < lo {
                return Err(err(
                    ErrorCode::InvalidCharRange,
                    &range_start[..range_start.len() - t.len()],
                ));
            }
        }
        class.union(&group(class_of(&[(lo, hi)]), false, flags));
    }
    if negate {
        class.negate();
    }
    Ok((class, &t[1..]))
}

/// Go's `parseClassChar`.
fn class_char<'a>(s: &'a str, whole_class: &str) -> Result<(char, &'a str), GoError> {
    match s.chars().next() {
        None => Err(err(ErrorCode::MissingBracket, whole_class)),
        Some('\\') => parse_escape(s),
        Some(c) => Ok((c, &s[c.len_utf8()..])),
    }
}

/// A concatenation as Go collapses it: nested concatenations hoisted, one element alone.
fn concat(items: Vec<Node>) -> Node {
    let mut out = Vec::new();
    for n in items {
        match n {
            Node::Concat(v) => out.extend(v),
            n => out.push(n),
        }
    }
    match out.len() {
        0 => Node::Empty,
        1 => out.pop().expect("one"),
        _ => Node::Concat(out),
    }
}

/// The alternation of a group's branches (the last one being `cur`).
fn finish(mut alts: Vec<Node>, cur: Vec<Node>) -> Node {
    alts.push(concat(cur));
    if alts.len() == 1 {
        return alts.pop().expect("one");
    }
    let mut out = Vec::new();
    for n in alts {
        match n {
            Node::Alternate(v) => out.extend(v),
            n => out.push(n),
        }
    }
    Node::Alternate(out)
}

fn is_char_class(n: &Node) -> bool {
    matches!(
        n,
        Node::Lit(..) | Node::Class(_) | Node::Any | Node::AnyNotNl
    )
}

/// The height of Go's tree: a run of literals is one node, alternatives of single characters
/// one class.
fn height(n: &Node) -> usize {
    match n {
        Node::Concat(v) => {
            if v.iter().all(|n| matches!(n, Node::Lit(..))) {
                return 1;
            }
            1 + v.iter().map(height).max().unwrap_or(0)
        }
        Node::Alternate(v) => {
            if v.iter().all(is_char_class) {
                return 1;
            }
            1 + v.iter().map(height).max().unwrap_or(0)
        }
        Node::Capture(s) | Node::Repeat(s, _) => 1 + height(s),
        _ => 1,
    }
}

/// Go's `calcSize`: the compiled size in instructions.
fn size(n: &Node) -> i64 {
    let s = match n {
        Node::Lit(..) => 1,
        Node::Capture(s) | Node::Repeat(s, Rep::Star) => 2 + size(s),
        Node::Repeat(s, Rep::Plus | Rep::Quest) => 1 + size(s),
        Node::Concat(v) => v.iter().map(size).sum(),
        Node::Alternate(v) => v.iter().map(size).sum::<i64>() + v.len() as i64 - 1,
        Node::Repeat(s, Rep::Range(min, max)) => {
            let sub = size(s);
            match (*min, *max) {
                (0, -1) => 2 + sub,
                (min, -1) => 1 + min * sub,
                (min, max) => max * sub + (max - min),
            }
        }
        _ => 1,
    };
    s.max(1)
}

fn uses_fold(n: &Node) -> bool {
    matches!(n, Node::Lit(_, true)) || children(n).iter().any(uses_fold)
}

impl Node {
    /// The equivalent pattern for `regex::bytes` (Unicode mode, classes spelled out).
    fn emit(&self, out: &mut String) {
        match self {
            Node::Empty => out.push_str("(?:)"),
            Node::Lit(c, false) => emit_char(*c, out),
            Node::Lit(c, true) => {
                let mut class = class_of(&[(*c, *c)]);
                class.case_fold_simple();
                emit_class(&class, out);
            }
            Node::Class(c) => emit_class(c, out),
            Node::AnyNotNl => out.push_str("[^\\n]"),
            Node::Any => out.push_str("(?s:.)"),
            Node::BeginLine => out.push_str("(?m:^)"),
            Node::EndLine => out.push_str("(?m:$)"),
            Node::BeginText => out.push_str("\\A"),
            Node::EndText => out.push_str("\\z"),
            Node::WordBoundary => out.push_str("(?-u:\\b)"),
            Node::NoWordBoundary => out.push_str("(?-u:\\B)"),
            Node::Capture(s) => {
                out.push('(');
                s.emit(out);
                out.push(')');
            }
            Node::Repeat(s, rep) => {
                out.push_str("(?:");
                s.emit(out);
                out.push(')');
                match rep {
                    Rep::Star => out.push('*'),
                    Rep::Plus => out.push('+'),
                    Rep::Quest => out.push('?'),
                    Rep::Range(min, -1) => out.push_str(&format!("{{{min},}}")),
                    Rep::Range(min, max) => out.push_str(&format!("{{{min},{max}}}")),
                }
            }
            Node::Concat(v) => {
                for n in v {
                    out.push_str("(?:");
                    n.emit(out);
                    out.push(')');
                }
            }
            Node::Alternate(v) => {
                for (i, n) in v.iter().enumerate() {
                    if i > 0 {
                        out.push('|');
                    }
                    out.push_str("(?:");
                    n.emit(out);
                    out.push(')');
                }
            }
        }
    }
}

fn emit_char(c: char, out: &mut String) {
    out.push_str(&format!("\\x{{{:X}}}", c as u32));
}

fn emit_class(class: &ClassUnicode, out: &mut String) {
    if class.ranges().is_empty() {
        out.push_str("[^\\x{0}-\\x{10FFFF}]");
        return;
    }
    out.push('[');
    for r in class.iter() {
        emit_char(r.start(), out);
        out.push('-');
        emit_char(r.end(), out);
    }
    out.push(']');
}

#[cfg(test)]
mod tests;
