//! Where a command's paths may be, decided once at the command line's edge (formats/storage.md
//! §"Locations"): every path a command was given (each argument whose value is a path, and the
//! inputs of `import` and `plan`) is parsed as a [`Location`] before the command runs. A
//! location that is neither a local path nor `s3://` (`gs://`, `hdfs://`, `S3://`, the typo
//! `s3:/bucket`) is refused, naming the argument; an `s3://` location is taken only by the
//! arguments of [`OBJECT_STORAGE`], and refused by name everywhere else, before anything is
//! read or written, so that no URL is ever taken for a local folder. `--s3-endpoint` is
//! refused by commands that reach no object storage.

use std::any::TypeId;
use std::path::PathBuf;

use clap::{ArgMatches, Command};

use super::error::CliError;
use crate::storage::Location;

/// The arguments that take an `s3://` location: a command (its subcommand names, space
/// separated) and its argument ids. Every other path argument is local only.
pub const OBJECT_STORAGE: &[(&str, &[&str])] = &[
    ("import", &["inputs", "out", "table", "index_out"]),
    ("plan", &["inputs"]),
    ("attach", &["table", "dir"]),
    ("get", &["table"]),
    ("scan", &["table"]),
    ("table create", &["table"]),
    ("table describe", &["table"]),
    ("table check", &["table"]),
    ("table alter", &["table"]),
    ("alter", &["table"]),
    ("compact", &["table"]),
    ("export", &["table"]),
    ("snapshot create", &["table"]),
    ("snapshot list", &["table"]),
    ("snapshot delete", &["table"]),
    ("snapshot restore", &["table"]),
    ("hfile info", &["file"]),
    ("hfile cells", &["file"]),
    ("hfile verify", &["file"]),
    ("hfile get", &["file"]),
    ("hbase ls", &["root"]),
    ("hbase describe", &["root"]),
    ("hbase verify", &["root"]),
    ("hbase get", &["root"]),
    ("hbase scan", &["root"]),
    ("table clone-hbase", &["root"]),
    ("hbase export-snapshot", &["root"]),
    ("hbase compact", &["root"]),
    ("hbase copy-snapshot", &["src"]),
];

/// Arguments whose values are paths although they are parsed as text (globs, expanded later).
const TEXT_PATHS: &[(&str, &str)] = &[("import", "inputs"), ("plan", "inputs")];

/// One path a command was given: the command, the argument and the value.
#[derive(Debug, PartialEq, Eq)]
pub struct GivenPath {
    pub command: String,
    pub arg: String,
    /// The argument as the user writes it: `--out`, or `<TABLE>` for a positional.
    pub shown: String,
    pub value: String,
}

/// Checks every path in `matches` (parsed by `root`); see the module's documentation.
pub fn check(root: &Command, matches: &ArgMatches) -> Result<(), CliError> {
    let paths = given_paths(root, matches);
    let command = command_path(root, matches);
    for p in &paths {
        let loc =
            Location::parse(&p.value).map_err(|e| CliError::usage(format!("{}: {e}", p.shown)))?;
        if loc.is_remote() && !takes_object_storage(&p.command, &p.arg) {
            return Err(CliError::usage(format!(
                "{}: {}: `hfkit {}` takes a local path here, not object storage (the commands \
                 and arguments that take s3:// are listed in formats/storage.md, section Locations)",
                p.shown, p.value, p.command
            )));
        }
    }
    let endpoint = matches.get_one::<String>("s3_endpoint").is_some();
    if endpoint && !OBJECT_STORAGE.iter().any(|(c, _)| *c == command) {
        return Err(CliError::usage(format!(
            "--s3-endpoint: `hfkit {command}` reads and writes no object storage"
        )));
    }
    Ok(())
}

/// True when argument `arg` of `command` takes an `s3://` location.
pub fn takes_object_storage(command: &str, arg: &str) -> bool {
    OBJECT_STORAGE
        .iter()
        .any(|(c, args)| *c == command && args.contains(&arg))
}

/// The subcommand names of `matches`, space separated (`table create`).
/// The subcommand names of `matches`, space separated (`table clone-hbase`).
pub fn command_path(root: &Command, matches: &ArgMatches) -> String {
    let mut names = Vec::new();
    let (mut cmd, mut m) = (root, matches);
    while let Some((name, sub)) = m.subcommand() {
        let Some(c) = cmd.find_subcommand(name) else {
            break;
        };
        names.push(name.to_string());
        (cmd, m) = (c, sub);
    }
    names.join(" ")
}

/// Every path argument's values in `matches`, with the command that took them.
pub fn given_paths(root: &Command, matches: &ArgMatches) -> Vec<GivenPath> {
    let mut out = Vec::new();
    let (mut cmd, mut m, mut names) = (root, matches, Vec::<String>::new());
    loop {
        let command = names.join(" ");
        for arg in path_args(cmd, &command) {
            let id = arg.get_id().as_str();
            let Ok(Some(values)) = m.try_get_raw(id) else {
                continue;
            };
            let shown = match (arg.get_long(), arg.get_value_names()) {
                (Some(l), _) => format!("--{l}"),
                (None, Some([name, ..])) => format!("<{name}>"),
                (None, _) => format!("<{}>", id.to_uppercase()),
            };
            for v in values {
                out.push(GivenPath {
                    command: command.clone(),
                    arg: id.to_string(),
                    shown: shown.clone(),
                    value: v.to_string_lossy().into_owned(),
                });
            }
        }
        let Some((name, sub)) = m.subcommand() else {
            break;
        };
        let Some(c) = cmd.find_subcommand(name) else {
            break;
        };
        names.push(name.to_string());
        (cmd, m) = (c, sub);
    }
    out
}

/// The arguments of `cmd` (named `command`) whose values are paths.
pub fn path_args<'c>(cmd: &'c Command, command: &str) -> Vec<&'c clap::Arg> {
    cmd.get_arguments()
        .filter(|a| {
            a.get_value_parser().type_id() == TypeId::of::<PathBuf>()
                || TEXT_PATHS.contains(&(command, a.get_id().as_str()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Every (command, argument) the table names exists and is a path argument: the table
    /// cannot name what the command line does not have.
    #[test]
    fn object_storage_table_names_real_path_arguments() {
        let root = super::super::Cli::command();
        for (command, args) in OBJECT_STORAGE {
            let mut cmd = &root;
            for name in command.split(' ') {
                cmd = cmd
                    .find_subcommand(name)
                    .unwrap_or_else(|| panic!("no command `{command}`"));
            }
            let paths: Vec<&str> = path_args(cmd, command)
                .iter()
                .map(|a| a.get_id().as_str())
                .collect();
            for a in *args {
                assert!(
                    paths.contains(a),
                    "`{command}` has no path argument {a}: {paths:?}"
                );
            }
        }
    }

    fn check_line(line: &str) -> Result<(), CliError> {
        let root = super::super::Cli::command();
        let m = root
            .clone()
            .try_get_matches_from(line.split(' '))
            .unwrap_or_else(|e| panic!("{line}: {e}"));
        check(&root, &m)
    }

    #[test]
    fn urls_are_refused_where_a_command_takes_local_paths() {
        for line in [
            "hfkit table clone-hbase /tmp/root t1 s3://bucket/clone",
            "hfkit hbase export-snapshot s3://bucket/t /tmp/root --name x",
            "hfkit hbase copy-snapshot /tmp/root s3://bucket/dest --snapshot s",
            "hfkit import --schema s.toml in.csv --out /tmp/o --report s3://bucket/r.json",
            "hfkit import --schema s.toml in.csv --out /tmp/o --bad-rows s3://bucket/bad",
            "hfkit man --dir s3://bucket/man",
            "hfkit snapshot clone /tmp/t s1 s3://bucket/c",
            "hfkit export s3://bucket/t --to s3://bucket/copy",
            "hfkit hfile write --cells c.txt s3://bucket/f",
        ] {
            let e = check_line(line).expect_err(line);
            assert_eq!(e.code, super::super::EXIT_USAGE, "{line}");
            assert!(e.message.contains("s3://bucket/"), "{line}: {}", e.message);
            assert!(
                e.message.contains("takes a local path"),
                "{line}: {}",
                e.message
            );
        }
    }

    #[test]
    fn other_schemes_and_typos_are_refused_everywhere() {
        for (line, named) in [
            (
                "hfkit import --schema s.toml in.csv --out gs://bucket/out",
                "--out",
            ),
            (
                "hfkit import --schema s.toml in.csv --out az://bucket/out",
                "--out",
            ),
            (
                "hfkit import --schema s.toml hdfs://nn/in.csv --out /tmp/o",
                "<INPUTS>",
            ),
            ("hfkit scan http://host/t", "<TABLE>"),
            ("hfkit scan S3://bucket/t", "<TABLE>"),
            (
                "hfkit import --schema s.toml in.csv --table s3:/bucket/x",
                "--table",
            ),
            (
                "hfkit import --schema s.toml in.csv --out /tmp/o --report gs://b/r",
                "--report",
            ),
            ("hfkit man --dir hdfs://nn/man", "--dir"),
        ] {
            let e = check_line(line).expect_err(line);
            assert_eq!(e.code, super::super::EXIT_USAGE, "{line}");
            assert!(e.message.starts_with(named), "{line}: {}", e.message);
        }
    }

    #[test]
    fn local_paths_and_supported_urls_pass() {
        for line in [
            "hfkit hbase ls s3://bucket/root",
            "hfkit hbase export-snapshot /tmp/t s3://bucket/root --name x",
            "hfkit hbase copy-snapshot s3://bucket/root /tmp/dest --snapshot s",
            "hfkit import --schema s.toml s3://bucket/in.csv --table s3://bucket/t --s3-endpoint http://127.0.0.1:9",
            "hfkit import --schema s.toml in.csv --out /tmp/o --report /tmp/r.json",
            "hfkit scan s3://bucket/t",
            "hfkit hfile info s3://bucket/f.hfile",
            "hfkit table describe ./rel/t",
            "hfkit get /tmp/t s3://not-a-path-but-a-row",
        ] {
            check_line(line).unwrap_or_else(|e| panic!("{line}: {}", e.message));
        }
    }

    #[test]
    fn s3_endpoint_only_where_it_has_an_effect() {
        let e = check_line("hfkit man --s3-endpoint http://127.0.0.1:9").unwrap_err();
        assert!(
            e.message.starts_with("--s3-endpoint: `hfkit man`"),
            "{}",
            e.message
        );
        let e =
            check_line("hfkit hfile write --cells c.txt /tmp/f --s3-endpoint http://127.0.0.1:9")
                .unwrap_err();
        assert!(e.message.contains("`hfkit hfile write`"), "{}", e.message);
    }
}
