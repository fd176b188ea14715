//! `operator-rs completion <shell>`: shell completion scripts, generated from the clap definition.

use clap::CommandFactory;

pub fn print(shell: clap_complete::Shell) {
    let mut cmd = crate::cli::Cli::command();
    clap_complete::generate(shell, &mut cmd, "operator-rs", &mut std::io::stdout());
}
