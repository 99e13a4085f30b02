//! One module per subcommand: its arguments (clap) and its `run`.

pub mod check;
pub mod completion;
pub mod eval;
pub mod explain;
pub mod impact;
pub mod install;
pub mod lint;
pub mod replay;
pub mod scaffold;
pub mod snapshot;
pub mod test;
pub mod version;
