//! The `hfkit` command line.
