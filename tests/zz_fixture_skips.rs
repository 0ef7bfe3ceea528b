//! The last test binary of a `cargo test` run (binaries run in name order; only the doc tests
//! follow): says how many HBase compatibility tests were skipped because the fixtures are
//! missing, and which. A plain program (`harness = false` in Cargo.toml), so that `cargo test`
//! shows what it prints; the skips were recorded by the tests themselves
//! (`src/test_fixtures.rs`). It always passes: with `HFKIT_REQUIRE_FIXTURES=1` (CI) a missing
//! fixture has already failed its test.

#[path = "../src/test_fixtures.rs"]
mod test_fixtures;

fn main() {
    // `cargo test -- --list` lists tests: this binary has none.
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let Some(run) = test_fixtures::run_dir() else {
        return;
    };
    print!("{}", test_fixtures::report(&test_fixtures::skipped(&run)));
    test_fixtures::finish_run(&run);
}
