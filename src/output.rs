//! What the tool prints, written so that printing never panics: `println!` and `eprintln!` panic
//! when the stream cannot take the text (a full disk, `ENOSPC`; a closed pipe, `EPIPE`, as in
//! `operator-rs generate crds --check | head -1`). A command's outcome is its files and its exit
//! code; a stream that cannot take its messages changes neither, so write errors are ignored.
//! Every message of the tool goes through [`outln!`], [`out!`] (stdout) or [`errln!`] (stderr).

use std::io::Write;

/// Write `args` to stdout, ignoring a stream that cannot take it.
pub fn stdout(args: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_fmt(args).and_then(|()| out.flush());
}

/// Write `args` to stderr, ignoring a stream that cannot take it.
pub fn stderr(args: std::fmt::Arguments<'_>) {
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
