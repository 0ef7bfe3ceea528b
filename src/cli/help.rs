//! [`help_command`]: the command line as its help, manual pages and completions show it, with
//! `--s3-endpoint` offered only by the commands that take an `s3://` location. Spec:
//! formats/storage.md §"Which arguments take object storage".

use super::command::Cli;
use super::location;

/// The command line as its help, manual pages and completions show it: `--s3-endpoint` offered
/// by the commands that take an `s3://` location only (`location::OBJECT_STORAGE`). Parsing
/// uses [`Cli`] itself, where the option is global, and `location::check` refuses it by name
/// where it has no effect.
pub fn help_command() -> clap::Command {
    fn offer(cmd: clap::Command, path: &str, arg: &clap::Arg) -> clap::Command {
        let names: Vec<String> = cmd
            .get_subcommands()
            .map(|s| s.get_name().to_string())
            .collect();
        let mut cmd = cmd;
        for name in names {
            let sub_path = match path {
                "" => name.clone(),
                p => format!("{p} {name}"),
            };
            let takes = location::OBJECT_STORAGE.iter().any(|(c, _)| *c == sub_path);
            cmd = cmd.mut_subcommand(&name, |sub| {
                let sub = if takes { sub.arg(arg.clone()) } else { sub };
                offer(sub, &sub_path, arg)
            });
        }
        cmd
    }
    let root = <Cli as clap::CommandFactory>::command();
    let Some(arg) = root
        .get_arguments()
        .find(|a| a.get_id() == "s3_endpoint")
        .cloned()
    else {
        return root;
    };
    let root = root.mut_arg("s3_endpoint", |a| a.global(false).hide(true));
    offer(root, "", &arg.global(false))
}
