//! The process's storage settings and one [`Store`] per bucket. `hfkit` sets the settings once
//! from its command line (`--s3-endpoint`) before it touches any location; the layers above
//! then open any location with [`store_for`] without passing settings around, and requests to
//! one bucket share one client (its connections, its request counters).

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock, RwLock};

use super::{Location, StorageConfig, StorageError, Store, StoreStats};

fn settings() -> &'static RwLock<StorageConfig> {
    static S: OnceLock<RwLock<StorageConfig>> = OnceLock::new();
    S.get_or_init(|| RwLock::new(StorageConfig::default()))
}

fn stores() -> &'static Mutex<HashMap<String, Store>> {
    static S: OnceLock<Mutex<HashMap<String, Store>>> = OnceLock::new();
    S.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Sets the settings every later [`store_for`] uses (stores already opened are dropped).
pub fn configure(cfg: StorageConfig) {
    *settings().write().unwrap_or_else(|e| e.into_inner()) = cfg;
    stores().lock().unwrap_or_else(|e| e.into_inner()).clear();
}

/// The settings [`configure`] set (the defaults before).
pub fn current_config() -> StorageConfig {
    settings().read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The store holding `loc`: the local filesystem, or `loc`'s bucket (opened once).
pub fn store_for(loc: &Location) -> Result<Store, StorageError> {
    let Location::S3 { bucket, .. } = loc else {
        return Ok(Store::local());
    };
    let mut all = stores().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(s) = all.get(bucket) {
        return Ok(s.clone());
    }
    let s = Store::open(loc, &current_config())?;
    all.insert(bucket.clone(), s.clone());
    Ok(s)
}

/// Requests and bytes of every object store opened by [`store_for`], added up.
pub fn total_stats() -> StoreStats {
    let all = stores().lock().unwrap_or_else(|e| e.into_inner());
    let mut t = StoreStats::default();
    for s in all.values() {
        let x = s.stats();
        t.requests += x.requests;
        t.bytes_read += x.bytes_read;
        t.bytes_written += x.bytes_written;
    }
    t
}
