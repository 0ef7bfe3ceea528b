//! What the binary teaches: `--help` with working examples, completions, man pages, a
//! description for every argument.

use super::*;

#[test]
fn help_teaches_exit_codes_and_cell_format() {
    let o = hfkit(&["--help"]);
    assert!(o.status.success());
    let h = text(&o.stdout);
    assert!(
        h.contains("Exit codes") && h.contains("row_hex family_hex qualifier_hex"),
        "{h}"
    );
    let o = hfkit(&["hfile", "write", "--help"]);
    assert!(text(&o.stdout).contains("--compression"));
    assert_eq!(hfkit(&["nonsense"]).status.code(), Some(2));
}

/// Every subcommand, in the order its `--help` examples run: later examples use what earlier
/// ones created (the import's table, the written HFile).
const EXAMPLE_ORDER: &[&str] = &[
    "import",
    "plan",
    "table create",
    "table describe",
    "table check",
    "attach",
    "get",
    "scan",
    "table alter",
    "compact",
    "snapshot create",
    "snapshot list",
    "snapshot clone",
    "snapshot restore",
    "snapshot delete",
    "export",
    "hfile write",
    "hfile info",
    "hfile cells",
    "hfile verify",
    "hfile get",
    // Against /tmp/hbase-root, which the first one makes from the seed table, and
    // /tmp/hbase-live, a copy of the HBase-written root directory of the fixtures
    // (../shared/fixtures/hbase-layout/root1), with live tables.
    "hbase export-snapshot",
    "hbase copy-snapshot",
    "hbase ls",
    "hbase describe",
    "hbase verify",
    "hbase get",
    "hbase scan",
    "table clone-hbase",
    "hbase compact",
    "completions",
    "man",
];

/// The leaf subcommands of `hfkit` (hidden ones and `help` left out), as space-separated paths.
fn leaf_subcommands(cmd: &clap::Command, prefix: &str, out: &mut Vec<String>) {
    for sub in cmd.get_subcommands() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        let path = format!("{prefix}{}", sub.get_name());
        if sub.has_subcommands() {
            leaf_subcommands(sub, &format!("{path} "), out);
        } else {
            out.push(path);
        }
    }
}

/// The lines under "Examples" of a help text: each a command line starting with `hfkit `.
fn examples_of(help: &str) -> Vec<String> {
    let mut lines = help.lines().skip_while(|l| !l.starts_with("Examples"));
    lines.next();
    lines
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.trim().to_string())
        .collect()
}

/// Every subcommand's `--help` has at least one example, and every example works: run as
/// written by `sh` from a directory laid out like a checkout (the bundled fixtures), with
/// /tmp/ a scratch directory, in EXAMPLE_ORDER, each exiting 0 without a warning.
#[test]
fn every_subcommand_has_working_help_examples() {
    use clap::CommandFactory;
    let mut leaves = Vec::new();
    leaf_subcommands(&hfkit::cli::Cli::command(), "", &mut leaves);
    let mut sorted_order: Vec<&str> = EXAMPLE_ORDER.to_vec();
    sorted_order.sort();
    leaves.sort();
    assert_eq!(
        leaves, sorted_order,
        "a subcommand missing from EXAMPLE_ORDER"
    );

    let work = tempfile::tempdir().unwrap();
    let checkout = work.path().join("checkout");
    let scratch = work.path().join("tmp");
    std::fs::create_dir_all(&checkout).unwrap();
    std::fs::create_dir_all(&scratch).unwrap();
    std::os::unix::fs::symlink(
        concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures"),
        checkout.join("fixtures"),
    )
    .unwrap();
    // The hbase examples of live tables read an HBase root directory: the fixtures' (CI
    // always has them); the others read the root the first export-snapshot example makes.
    let hbase_root = common::fixtures_root("every_subcommand_has_working_help_examples (hbase)")
        .map(|f| f.join("hbase-layout/root1"));
    if let Some(root) = &hbase_root {
        common::copy_dir(root, &scratch.join("hbase-live"));
    }
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_hfkit")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut ran = 0;
    let mut skipped = 0;
    for sub in EXAMPLE_ORDER {
        let mut args: Vec<&str> = sub.split(' ').collect();
        args.push("--help");
        let o = hfkit(&args);
        assert!(o.status.success());
        let examples = examples_of(&text(&o.stdout));
        assert!(!examples.is_empty(), "`hfkit {sub} --help` has no example");
        for e in examples {
            assert!(
                e.starts_with(&format!("hfkit {sub} ")),
                "`hfkit {sub} --help`: an example of another command: {e}"
            );
            if hbase_root.is_none() && e.contains("/tmp/hbase-live") {
                skipped += 1;
                continue;
            }
            let line = e.replace("/tmp/", &format!("{}/", scratch.display()));
            let o = Command::new("sh")
                .arg("-c")
                .arg(&line)
                .current_dir(&checkout)
                .env("PATH", &path)
                .output()
                .unwrap();
            let stderr = text(&o.stderr);
            assert!(o.status.success(), "`{e}` failed: {stderr}");
            assert!(!stderr.contains("warning"), "`{e}`: {stderr}");
            assert!(!o.stdout.is_empty(), "`{e}` printed nothing");
            ran += 1;
        }
    }
    assert!(
        ran >= EXAMPLE_ORDER.len() && skipped <= 7,
        "{ran} run, {skipped} skipped"
    );
}

/// `hfkit completions SHELL` prints a script that completes every command and option, for each
/// shell clap_complete knows; an unknown shell is a usage error.
#[test]
fn completions_cover_every_command_in_every_shell() {
    for (shell, marker) in [
        ("bash", "complete -F _hfkit"),
        ("zsh", "#compdef hfkit"),
        ("fish", "complete -c hfkit"),
        ("elvish", "edit:completion:arg-completer[hfkit]"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let o = hfkit(&["completions", shell]);
        assert!(o.status.success(), "{shell}: {}", text(&o.stderr));
        let script = text(&o.stdout);
        assert!(script.contains(marker), "{shell}: no `{marker}`");
        for word in [
            "import",
            "hfile",
            "clone-hbase",
            "completions",
            "--hbase-shell",
        ] {
            assert!(script.contains(word), "{shell}: `{word}` is not completed");
        }
    }
    let o = hfkit(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("invalid value 'tcsh'"));
}

/// A completion script larger than a pipe's buffer, into a pipe closed by its reader (as
/// `hfkit completions bash | head` does), ends quietly with 0 like any other output
/// (clap_complete itself panics on a failed write).
#[test]
fn completions_into_a_closed_pipe_end_quietly() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hfkit"))
        .args(["completions", "bash"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stderr), "");
}

/// `hfkit man` prints hfkit(1) in roff; `hfkit man COMMAND...` a command's own page;
/// `--dir` writes one page per command (the groups and every leaf), named as `man` looks them
/// up, and lists them. A command that does not exist is a usage error.
#[test]
fn man_pages_for_hfkit_and_every_command() {
    let o = hfkit(&["man"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let page = text(&o.stdout);
    assert!(page.contains(".TH hfkit 1"), "{page}");
    assert!(page.contains(".SH SUBCOMMANDS"), "{page}");
    assert!(page.contains("hfkit\\-import(1)"), "{page}");

    let o = hfkit(&["man", "hfile", "info"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let page = text(&o.stdout);
    let title = format!(
        ".TH hfkit-hfile-info 1  \"hfkit {}\"",
        env!("CARGO_PKG_VERSION")
    );
    assert!(page.contains(&title), "{page}");
    assert!(page.contains("\\-\\-json"), "{page}");

    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("man1");
    let o = hfkit(&["man", "--dir", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let listed: Vec<String> = text(&o.stdout).lines().map(str::to_string).collect();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    // hfkit.1, and one page per command: the groups (hfile, table, ...) and their leaves.
    fn count(cmd: &clap::Command) -> usize {
        1 + cmd
            .get_subcommands()
            .filter(|s| !s.is_hide_set() && s.get_name() != "help")
            .map(count)
            .sum::<usize>()
    }
    use clap::CommandFactory;
    assert_eq!(names.len(), count(&hfkit::cli::Cli::command()), "{names:?}");
    assert_eq!(listed.len(), names.len());
    for name in [
        "hfkit.1",
        "hfkit-import.1",
        "hfkit-hbase-export-snapshot.1",
        "hfkit-man.1",
    ] {
        assert!(
            names.contains(&name.to_string()),
            "{name} missing: {names:?}"
        );
        assert!(listed.contains(&dir.join(name).display().to_string()));
        let page = std::fs::read_to_string(dir.join(name)).unwrap();
        assert!(page.contains(".SH NAME"), "{name}");
    }

    let o = hfkit(&["man", "hfile", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        "hfkit: man: `hfkit hfile` has no command `nope` (see `hfkit hfile --help`)\n"
    );
}

/// Every argument and option of every command says what it is (`--help`): none is listed
/// bare. (The global `--s3-endpoint` is said once, on the commands that take it.)
#[test]
fn every_argument_has_help_text() {
    use clap::CommandFactory;
    fn walk(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
        for a in cmd.get_arguments() {
            if a.is_hide_set() || a.get_id() == "help" || a.get_id() == "version" {
                continue;
            }
            if a.get_help().is_none() && a.get_long_help().is_none() {
                out.push(format!("{path} {}", a.get_id()));
            }
        }
        for sub in cmd.get_subcommands() {
            if sub.get_name() != "help" {
                walk(sub, &format!("{path} {}", sub.get_name()), out);
            }
        }
    }
    let mut bare = Vec::new();
    walk(&hfkit::cli::Cli::command(), "hfkit", &mut bare);
    assert!(
        bare.is_empty(),
        "{} without help:\n{}",
        bare.len(),
        bare.join("\n")
    );
}

/// Every option and positional of every subcommand (and of `hfkit` itself) has a description
/// in `--help`: clap's own `--help`/`--version` aside, none is listed without one.
#[test]
fn every_option_and_positional_has_a_description() {
    use clap::CommandFactory;
    fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
        for a in cmd.get_arguments() {
            if a.is_hide_set() || ["help", "version"].contains(&a.get_id().as_str()) {
                continue;
            }
            if a.get_help().is_none_or(|h| h.to_string().trim().is_empty()) {
                missing.push(format!("`{path}` {}", a.get_id()));
            }
        }
        for sub in cmd.get_subcommands() {
            if !sub.is_hide_set() && sub.get_name() != "help" {
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
    }
    let mut missing = Vec::new();
    walk(&hfkit::cli::Cli::command(), "hfkit", &mut missing);
    assert!(
        missing.is_empty(),
        "{} without a description:\n{}",
        missing.len(),
        missing.join("\n")
    );
}
