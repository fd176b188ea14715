//! The `operator-rs` binary: parse the command line, run the command, map errors to exit codes.

use clap::Parser;

/// mimalloc: the tool's short runs are dominated by allocation (see BENCHMARKS.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let cli = operator_rs::cli::Cli::parse();
    match operator_rs::commands::run(cli) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::exit(2);
        }
    }
}
