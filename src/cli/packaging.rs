//! `hfkit completions` and `hfkit man`: what a package installs beside the binary, generated
//! from the command line's own definition (clap_complete, clap_mangen), so they never drift
//! from `--help`.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use clap_complete::Shell;
use clap_mangen::Man;

use super::error::{CliError, EXIT_OK};

/// The name the binary is installed as.
const BIN: &str = "hfkit";

/// Print a shell completion script for hfkit to stdout. Install it where the shell looks:
/// bash `~/.local/share/bash-completion/completions/hfkit`, zsh a directory of `$fpath` as
/// `_hfkit`, fish `~/.config/fish/completions/hfkit.fish`, PowerShell: `. <file>` in $PROFILE.
#[derive(Debug, Args)]
#[command(after_help = examples!(
    "hfkit completions bash | head -n 3",
    "hfkit completions zsh > /tmp/_hfkit && ls /tmp/_hfkit",
))]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Print the manual page of hfkit (or of one of its commands) in roff to stdout, or write every
/// page into a directory (hfkit.1, hfkit-import.1, hfkit-hfile-info.1, ...) for `man` to find
/// (e.g. `/usr/local/share/man/man1`, or with `man -M`).
#[derive(Debug, Args)]
#[command(after_help = examples!(
    "hfkit man | head -n 4",
    "hfkit man hfile info | grep -A1 '^.SH NAME'",
    "hfkit man --dir /tmp/hfkit-man",
))]
pub struct ManArgs {
    /// The command whose page to print (e.g. `import`, `hfile info`); none: hfkit's own page.
    pub command: Vec<String>,
    /// Write the pages of the command and of all its subcommands into DIR (created if
    /// missing), one `<name>.1` each, and print their paths.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

pub fn completions(args: CompletionsArgs, out: &mut dyn Write) -> Result<i32, CliError> {
    // clap_complete panics when its writer fails (a closed pipe): render into memory, write
    // here, where a failed write is an error like any other.
    let mut script = Vec::new();
    clap_complete::generate(
        args.shell,
        &mut super::help::help_command(),
        BIN,
        &mut script,
    );
    out.write_all(&script)?;
    Ok(EXIT_OK)
}

pub fn man(args: ManArgs, out: &mut dyn Write) -> Result<i32, CliError> {
    let mut root = super::help::help_command().disable_help_subcommand(true);
    // Sets every subcommand's display name (`hfkit-hfile-info`), which names its page.
    root.build();
    let mut cmd = &root;
    let mut path = BIN.to_string();
    for name in &args.command {
        cmd = cmd
            .get_subcommands()
            .find(|c| c.get_name() == name && !c.is_hide_set())
            .ok_or_else(|| {
                CliError::usage(format!(
                    "man: `{path}` has no command `{name}` (see `{path} --help`)"
                ))
            })?;
        path = format!("{path} {name}");
    }
    match &args.dir {
        None => page(cmd).render(out)?,
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| in_dir(dir, e))?;
            for path in write_pages(cmd, dir)? {
                writeln!(out, "{}", path.display())?;
            }
        }
    }
    Ok(EXIT_OK)
}

/// Writes the page of `cmd` and of each of its visible subcommands, depth first; returns the
/// paths written.
fn write_pages(cmd: &clap::Command, dir: &Path) -> Result<Vec<PathBuf>, CliError> {
    let mut written = vec![page(cmd).generate_to(dir).map_err(|e| in_dir(dir, e))?];
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        written.extend(write_pages(sub, dir)?);
    }
    Ok(written)
}

/// The page of `cmd`, its footer naming hfkit and its version (clap_mangen's default names the
/// subcommand, without a version).
fn page(cmd: &clap::Command) -> Man {
    Man::new(cmd.clone()).source(format!("{BIN} {}", env!("CARGO_PKG_VERSION")))
}

fn in_dir(dir: &Path, e: std::io::Error) -> CliError {
    CliError::failure(format!("man: {}: {e}", dir.display()))
}
