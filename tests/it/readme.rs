//! The README's runnable blocks, run as written from the checkout: the HBase-root walk-through
//! (after "Try it"'s import) and the object-storage one against a loopback S3 server (moto), with
//! `hfkit` on the PATH and a scratch directory for `/tmp/`. "Try it" itself is
//! `import_seeds::readme_try_it_runs_warning_free`.

use std::path::Path;
use std::process::Command;

use hfkit_testkit::s3::S3Server;

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap()
}

/// The first ```sh block of the README's section `heading` after the text `after`.
fn sh_block(heading: &str, after: &str) -> Vec<String> {
    let text = readme();
    let section = text
        .split(&format!("\n## {heading}"))
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .unwrap_or_else(|| panic!("a '## {heading}' section"));
    let from = section.find(after).unwrap_or_else(|| panic!("'{after}'"));
    let block = section[from..]
        .split("```sh\n")
        .nth(1)
        .and_then(|s| s.split("```").next())
        .expect("a sh block");
    block.lines().map(str::to_string).collect()
}

/// Runs `line` with `sh` from the checkout, `hfkit` on the PATH and `/tmp/` the scratch
/// directory `tmp`; returns (stdout, stderr) after checking that it succeeded warning-free.
fn run(line: &str, tmp: &Path, env: &[(&str, &str)]) -> (String, String) {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_hfkit")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let line = line.replace("/tmp/", &format!("{}/", tmp.display()));
    let o = Command::new("sh")
        .arg("-c")
        .arg(&line)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("PATH", path)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout).to_string(),
        String::from_utf8_lossy(&o.stderr).to_string(),
    );
    assert!(o.status.success(), "`{line}` failed: {stderr}");
    assert!(!stderr.contains("warning"), "`{line}`: {stderr}");
    (stdout, stderr)
}

/// "HBase root directories": a root made from the seed table by `hbase export-snapshot`, then
/// every command of the block, each printing something.
#[test]
fn readme_hbase_root_block_runs_as_written() {
    let tmp = tempfile::tempdir().unwrap();
    run(
        "hfkit import --schema fixtures/seeds/users.toml fixtures/seeds/users.csv --table \
         /tmp/hfkit-users --quiet",
        tmp.path(),
        &[],
    );
    let lines = sh_block("HBase root directories", "");
    assert!(lines.len() >= 6, "{lines:?}");
    for line in lines {
        assert!(line.starts_with("hfkit "), "{line}");
        let (stdout, _) = run(&line, tmp.path(), &[]);
        assert!(!stdout.is_empty(), "`{line}` printed nothing");
    }
}

/// "Commands", object storage: the block run line by line, its moto server being the test's
/// (the block's own start and wait left out, its endpoint replaced by the test server's).
#[test]
fn readme_object_storage_block_runs_against_moto() {
    let Some(server) = S3Server::start("readme_object_storage_block_runs_against_moto") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let lines = sh_block("Commands", "To try it without an AWS account");
    let mut env: Vec<(String, String)> = Vec::new();
    let mut ran = Vec::new();
    for line in lines {
        if line.starts_with("moto_server ") || line.starts_with("sleep ") {
            continue;
        }
        let line = line.replace("http://127.0.0.1:5000", &server.endpoint());
        if let Some(vars) = line.strip_prefix("export ") {
            let vars = vars.split('#').next().unwrap();
            for kv in vars.split_whitespace() {
                let (k, v) = kv.split_once('=').unwrap();
                env.push((k.to_string(), v.to_string()));
            }
            continue;
        }
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (&k[..], &v[..])).collect();
        let (stdout, _) = run(&line, tmp.path(), &env);
        ran.push((line, stdout));
    }
    assert_eq!(ran.len(), 5, "{ran:?}");
    // The get found user 77; the compaction says where the replaced objects went; the
    // export wrote every cell of the table.
    assert!(ran[2].1.contains("u77@example.com"), "{}", ran[2].1);
    assert!(
        ran[3].1.contains("HFKIT_S3_GC_GRACE_SECONDS"),
        "{}",
        ran[3].1
    );
    let csv = std::fs::read_to_string(tmp.path().join("hfkit-users-s3.csv")).unwrap();
    assert_eq!(csv.lines().count(), 5805 + 1);
}
