//! What the tool prints, written so that printing never panics: `println!` and `eprintln!` panic
//! when the stream cannot take the text (a full disk, `ENOSPC`; a closed pipe, `EPIPE`, as in
//! `operator-rs generate crds --check | head -1`). A command's outcome is its files and its exit
//! code; a stream that cannot take its messages changes neither, so write errors are ignored.
//! Every message of the tool goes through [`outln!`](crate::outln), [`out!`](crate::out) (stdout) or
//! [`errln!`](crate::errln) (stderr);
//! an error is worded by [`error_text`].

use std::io::Write;

/// An error and its causes as one message: each cause joined after the message's first line
/// (what failed), before its hints (`e.g. ...` lines), and a cause whose text is already said
/// (libraries that repeat their source in their own message) left out.
pub fn error_text(error: &anyhow::Error) -> String {
    let mut chain = error.chain().map(ToString::to_string);
    let mut text = chain.next().unwrap_or_default();
    let mut at = text.find('\n').unwrap_or(text.len());
    for cause in chain {
        if cause.is_empty() || text.contains(&cause) {
            continue;
        }
        let piece = format!(": {cause}");
        text.insert_str(at, &piece);
        at += piece.len();
    }
    text
}

/// Set while a command runs others on its behalf (`import` replays `init` and `create api` in
/// a staging folder): their messages are not the user's.
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Runs `f` with the tool's messages silenced (see [`QUIET`]).
pub fn quietly<T>(f: impl FnOnce() -> T) -> T {
    use std::sync::atomic::Ordering;
    let was = QUIET.swap(true, Ordering::SeqCst);
    let result = f();
    QUIET.store(was, Ordering::SeqCst);
    result
}

fn quiet() -> bool {
    QUIET.load(std::sync::atomic::Ordering::SeqCst)
}

/// Write `args` to stdout, ignoring a stream that cannot take it.
pub fn stdout(args: std::fmt::Arguments<'_>) {
    if quiet() {
        return;
    }
    let mut out = std::io::stdout().lock();
    let _ = out.write_fmt(args).and_then(|()| out.flush());
}

/// Write `args` to stderr, ignoring a stream that cannot take it.
pub fn stderr(args: std::fmt::Arguments<'_>) {
    if quiet() {
        return;
    }
    let _ = std::io::stderr().lock().write_fmt(args);
}

/// `print!` that never panics.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => { $crate::output::stdout(format_args!($($arg)*)) };
}

/// `println!` that never panics.
#[macro_export]
macro_rules! outln {
    () => { $crate::output::stdout(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::output::stdout(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `eprintln!` that never panics.
#[macro_export]
macro_rules! errln {
    () => { $crate::output::stderr(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::output::stderr(format_args!("{}\n", format_args!($($arg)*))) };
}
