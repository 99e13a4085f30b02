//! The built-in policy pack, embedded in both binaries.
