//! `operator-rs completion <shell>`: shell completion scripts, generated from the clap definition.

use clap::CommandFactory;

/// `operator-rs completion <shell>`: prints the completion script of `shell`.
pub fn print(shell: clap_complete::Shell) {
    let mut cmd = crate::cli::Cli::command();
    // clap_complete panics when its writer fails (a closed pipe): render, then print.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, "operator-rs", &mut script);
    crate::out!("{}", String::from_utf8_lossy(&script));
}
