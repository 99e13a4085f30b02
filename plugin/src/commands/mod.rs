//! One module per subcommand: its arguments (clap) and its `run`.

pub mod check;
pub mod eval;
pub mod impact;
pub mod replay;
pub mod test;
pub mod version;
