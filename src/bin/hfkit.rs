//! The `hfkit` binary: see `hfkit --help`. All logic lives in the library's `cli` module.

fn main() {
    std::process::exit(hfkit::cli::run(std::env::args_os()));
}
