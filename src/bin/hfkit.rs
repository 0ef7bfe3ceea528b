//! The `hfkit` binary: see `hfkit --help`. All logic lives in the library's `cli` module.

/// The static (musl) build allocates with mimalloc (v2, no transparent huge pages): with musl's
/// own allocator an import of 2M rows took 396 s instead of 13 s (README, "Install").
#[cfg(target_env = "musl")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(hfkit::cli::run(std::env::args_os()));
}
