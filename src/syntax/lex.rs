//! The lexical facts both byte scanners of Rust source share (the doc-comment pre-pass,
//! [`super::doc_comments`], and the item cutter of the generated-Rust check,
//! `workspace::rust_items`): where a block comment, a quoted literal and a raw string end, and
//! which bytes continue an identifier. Each returns `None` when the text ends first.

/// Whether `b` can continue an identifier (ASCII letters, digits, `_`, and any byte of a
/// non-ASCII character).
pub(crate) fn is_ident_continue(b: u8) -> bool {
    b == b'_' || b.is_ascii_alphanumeric() || b >= 0x80
}

/// The end of the block comment that opens at `from` (they nest).
pub(crate) fn block_comment_end(bytes: &[u8], from: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = from;
    while i + 1 < bytes.len() {
        match (bytes[i], bytes[i + 1]) {
            (b'/', b'*') => {
                depth += 1;
                i += 2;
            }
            (b'*', b'/') => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => i += 1,
        }
    }
    None
}

/// The end of a literal whose opening quote is just before `from` and which closes at `quote`
/// (a backslash escapes the byte after it).
pub(crate) fn quoted_end(bytes: &[u8], from: usize, quote: u8) -> Option<usize> {
    let mut i = from;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b if b == quote => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// When the `"` at `quote` opens a raw string (`r"`, `r#"`, `br##"`, `cr"`...): its number of `#`.
pub(crate) fn raw_string_hashes(bytes: &[u8], quote: usize) -> Option<usize> {
    let hashes = bytes[..quote]
        .iter()
        .rev()
        .take_while(|&&b| b == b'#')
        .count();
    let r = quote.checked_sub(hashes + 1)?;
    let at_word_start = |k: usize| k == 0 || !is_ident_continue(bytes[k - 1]);
    let prefixed = bytes[r] == b'r'
        && (at_word_start(r) || (matches!(bytes[r - 1], b'b' | b'c') && at_word_start(r - 1)));
    prefixed.then_some(hashes)
}

/// The end of a raw string whose opening `"` is just before `from`: the first `"` followed by
/// `hashes` `#`.
pub(crate) fn raw_string_end(bytes: &[u8], from: usize, hashes: usize) -> Option<usize> {
    let mut i = from;
    while i < bytes.len() {
        if bytes[i] == b'"'
            && bytes[i + 1..].len() >= hashes
            && bytes[i + 1..i + 1 + hashes].iter().all(|&b| b == b'#')
        {
            return Some(i + 1 + hashes);
        }
        i += 1;
    }
    None
}
