//! The `operator-rs` binary: parse the command line, run the command, map errors to exit codes.

use clap::Parser;

/// mimalloc: the tool's short runs are dominated by allocation (see BENCHMARKS.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The stack of the thread that runs a command: the readers recurse over the user's source, whose
/// nesting they bound (see `syntax::MAX_NESTING`); this leaves a wide margin under that bound,
/// in debug builds too. Only the pages used are ever touched.
const STACK: usize = 256 * 1024 * 1024;

fn main() {
    let cli = match operator_rs::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            // clap's message, then a command line that works (exit 2, as clap does).
            let args: Vec<String> = std::env::args().collect();
            eprint!("{e}");
            eprintln!("\nExample:\n  {}", operator_rs::cli::example_for(&args));
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
            eprintln!("error: {e:#}");
            std::process::exit(2);
        }
    }
}
