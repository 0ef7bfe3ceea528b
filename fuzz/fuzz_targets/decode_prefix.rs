#![no_main]
//! Fuzzes the PREFIX decoder: decode every cell, then seek (see common.rs).

use hfkit::format::encoding::DataBlockEncoding;
use libfuzzer_sys::fuzz_target;

mod common;

fuzz_target!(|data: &[u8]| common::run(DataBlockEncoding::Prefix, data));
