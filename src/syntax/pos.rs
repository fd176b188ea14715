//! A place in a Rust file (line, and column in characters, as proc-macro2 counts them), for what
//! is read without proc-macro2, and syn's parse of a piece of a file at its own place.

use proc_macro2::Span;

/// A line (1-based) and a column (0-based, in characters): proc-macro2's `LineColumn`, so that
/// places read from the text and places of syn's spans compare and print alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Pos {
    pub line: usize,
    pub column: usize,
}

impl From<Span> for Pos {
    fn from(span: Span) -> Self {
        let start = span.start();
        Pos {
            line: start.line,
            column: start.column,
        }
    }
}

/// Parses `text`, which begins at `at` in its file, with syn: every span it gives starts at the
/// file's own line and column (the text is put there by blank lines and spaces before it). For the
/// rare piece read without proc-macro2 that is then needed as syn's tree.
pub(crate) fn parse_at<T: syn::parse::Parse>(text: &str, at: Pos) -> syn::Result<T> {
    let mut placed = String::with_capacity(at.line + at.column + text.len());
    placed.extend(std::iter::repeat_n('\n', at.line.saturating_sub(1)));
    placed.extend(std::iter::repeat_n(' ', at.column));
    placed.push_str(text);
    syn::parse_str(&placed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::spanned::Spanned;

    #[test]
    fn a_piece_parsed_at_its_place_keeps_the_files_lines_and_columns() {
        let at = Pos {
            line: 7,
            column: 12,
        };
        let e: syn::Expr = parse_at("\"a\"", at).unwrap();
        assert_eq!(Pos::from(e.span()), at);
        let e: syn::Expr = parse_at("f(\n  x)", at).unwrap();
        let syn::Expr::Call(call) = e else { panic!() };
        assert_eq!(Pos::from(call.args[0].span()), Pos { line: 8, column: 2 });
        let err = parse_at::<syn::Expr>("f(x\n y)", at).unwrap_err();
        assert_eq!(Pos::from(err.span()), Pos { line: 8, column: 1 });
    }
}
