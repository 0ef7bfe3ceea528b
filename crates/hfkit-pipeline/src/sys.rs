//! What the import reads of the machine and of its own process from Linux's `/proc`: the peak
//! resident set (the report's `peak_rss_bytes`), the machine's memory (the default
//! `--memory`), and the process's CPU time (the benches). Unknown where `/proc` does not say
//! (another system, or a field missing): `None`, or a peak RSS of 0 as the report gives it.
//! Also the one allocator setting a command makes ([`keep_freed_memory`]).

/// Has glibc's allocator keep the memory the process frees for its next allocations instead of
/// handing it back to the kernel: allocations of up to 32 MiB come from its heaps (not from
/// `mmap`), and a heap is trimmed only when 64 MiB of it is free (glibc's adaptive thresholds
/// stop at those two values; here they hold from the start). Nothing elsewhere (musl, other
/// systems). Process-wide: the `hfkit` command sets it, a library never should.
///
/// For Parquet cell exports: the `parquet` crate's encoder grows and frees its buffers for each
/// row group, and with the adaptive thresholds glibc gave the freed pages of the encoding
/// thread's heap back to the kernel (`madvise`) after each row group, to fault them in again
/// for the next. With this setting the export takes 6% less CPU and 4 MiB more memory
/// (15.15M cells, one thread); imports and row exports gain no CPU and hold 6–14 MiB more, so
/// they do not set it.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets two of glibc's allocator parameters; it may be called at any
    // time, from any thread.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 64 << 20);
    }
}

/// Peak resident set size of this process in bytes (`VmHWM` of `/proc/self/status`), 0 where
/// unknown.
pub fn peak_rss_bytes() -> u64 {
    kib_field("/proc/self/status", "VmHWM:").unwrap_or(0)
}

/// The machine's memory in bytes (`MemTotal` of `/proc/meminfo`).
pub fn total_memory() -> Option<u64> {
    kib_field("/proc/meminfo", "MemTotal:")
}

/// CPU seconds this process has used, user and system (`utime` + `stime` of
/// `/proc/self/stat`, in clock ticks of 1/100 s).
pub fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // After the command name, in parentheses (which may hold spaces), field 3 comes first.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok());
    Some((ticks(11)? + ticks(12)?) / 100.0)
}

/// The value of the `name` line of a `/proc` file of `name   N kB` lines, in bytes.
fn kib_field(file: &str, name: &str) -> Option<u64> {
    let text = std::fs::read_to_string(file).ok()?;
    let kib: u64 = text
        .lines()
        .find(|l| l.starts_with(name))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_fields_read_on_linux() {
        if !std::path::Path::new("/proc/self/status").exists() {
            return; // not Linux: every reading is unknown
        }
        let rss = peak_rss_bytes();
        // This test process holds at least its own code.
        assert!(rss > 1 << 20, "{rss}");
        assert!(total_memory().is_some_and(|m| m > rss));
        let cpu = cpu_seconds().unwrap();
        assert!((0.0..1e6).contains(&cpu), "{cpu}");
    }
}
