//! What the import reads of the machine and of its own process from Linux's `/proc`: the peak
//! resident set (the report's `peak_rss_bytes`), the machine's memory (the default
//! `--memory`), and the process's CPU time (the benches). Unknown where `/proc` does not say
//! (another system, or a field missing): `None`, or a peak RSS of 0 as the report gives it.

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
