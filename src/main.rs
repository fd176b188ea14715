//! The `operator-rs` binary: parse the command line, run the command, map errors to exit codes.

use std::ffi::OsString;

use clap::Parser;

/// mimalloc: the tool's short runs are dominated by allocation (see docs/benchmarks-history.md,
/// "Scaffolding and `generate crds`").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The stack of the thread that runs a command: the readers recurse over the user's source, whose
/// nesting they bound (see `syntax::MAX_NESTING`); this leaves a wide margin under that bound,
/// in debug builds too. Only the pages used are ever touched.
const STACK: usize = 256 * 1024 * 1024;

fn main() {
    // The arguments as the OS gives them: `std::env::args` panics on one that is not UTF-8.
    let args: Vec<OsString> = std::env::args_os().collect();
    let cli = match operator_rs::cli::Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        // --help and --version (clap ignores a stream that cannot take them).
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            // clap's message, then a command line that works (exit 2, as clap does).
            let lossy: Vec<String> = (args.iter())
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            let example = operator_rs::cli::example_for(&lossy);
            match operator_rs::cli::not_utf8(&args) {
                Some(refusal) if e.kind() == clap::error::ErrorKind::InvalidUtf8 => {
                    operator_rs::errln!("error: {refusal}\n  e.g. {example}")
                }
                _ => operator_rs::errln!("{e}\nExample:\n  {example}"),
            }
            std::process::exit(2);
        }
    };
    let worker = std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || operator_rs::commands::run(cli));
    let result = match worker {
        Ok(handle) => handle
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
        Err(e) => Err(anyhow::Error::new(e).context("starting the worker thread")),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            operator_rs::errln!("error: {}", operator_rs::output::error_text(&e));
            std::process::exit(2);
        }
    }
}
