//! The last test binary of a `cargo test` run (packages and their binaries run in name order,
//! and this is the last binary of the last package; only doc tests follow): says how many HBase compatibility tests were skipped because the fixtures are
//! missing, and which; then the same for the object-storage tests skipped for want of `moto_server`. A plain program (`harness = false` in Cargo.toml), so that `cargo test`
//! shows what it prints; the skips were recorded by the tests themselves
//! (`crates/hfkit-testkit`). It always passes: with `HFKIT_REQUIRE_FIXTURES=1` (CI) a missing
//! fixture has already failed its test.

use hfkit_testkit as test_fixtures;

fn main() {
    // `cargo test -- --list` lists tests: this binary has none.
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let Some(run) = test_fixtures::run_dir() else {
        return;
    };
    print!("{}", test_fixtures::report(&test_fixtures::skipped(&run)));
    print!(
        "{}",
        test_fixtures::report_s3(&test_fixtures::skipped_s3(&run))
    );
    test_fixtures::finish_run(&run);
}
