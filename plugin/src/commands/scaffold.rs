//! `kubectl suture scaffold NAME`: write a new policy and its test suite into a directory.

use std::path::PathBuf;

use anyhow::anyhow;
use clap::Args;

use crate::exit::{Exit, Failure, OrExit};
use crate::scaffold::{PolicyKind, render, valid_name};

/// Arguments of `kubectl suture scaffold`.
#[derive(Debug, Args)]
#[command(after_help = HELP)]
pub struct ScaffoldArgs {
    /// The policy's name (lower-case, `-` and `.`), also the files' names
    #[arg(value_name = "NAME")]
    pub name: String,

    /// What to scaffold
    #[arg(long = "kind", value_enum, default_value = "safetypolicy")]
    pub kind: PolicyKind,

    /// The directory to write into (created if missing)
    #[arg(long = "dir", value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,

    /// Overwrite existing files
    #[arg(long = "force")]
    pub force: bool,
}

const HELP: &str = "\
Examples:
  # A SafetyPolicy and its suite in policies/, then run the suite
  kubectl suture scaffold protect-config --dir policies/
  kubectl suture test policies/

  # A ValidatingAdmissionPolicy with its binding
  kubectl suture scaffold replica-cap --kind vap --dir policies/

Exit status:
  0  the files were written
  2  usage error (a bad name, files that exist without --force, a directory that cannot be written)";

/// Writes the files and names them.
pub fn run(args: &ScaffoldArgs) -> Result<Exit, Failure> {
    if !valid_name(&args.name) {
        return Err(Failure::usage(anyhow!(
            "{:?} is not a valid policy name: use lower-case letters, digits, `-` and `.`, starting and ending with a letter or digit",
            args.name
        )));
    }
    let files = render(args.kind, &args.name, &args.dir.display().to_string());
    let paths: Vec<PathBuf> = files.iter().map(|(name, _)| args.dir.join(name)).collect();
    if !args.force
        && let Some(existing) = paths.iter().find(|p| p.exists())
    {
        return Err(Failure::usage(anyhow!(
            "{} exists (use --force to overwrite)",
            existing.display()
        )));
    }
    std::fs::create_dir_all(&args.dir)
        .map_err(|e| anyhow!("cannot create {}: {e}", args.dir.display()))
        .or_exit(Exit::Usage)?;
    for ((_, text), path) in files.iter().zip(&paths) {
        std::fs::write(path, text)
            .map_err(|e| anyhow!("cannot write {}: {e}", path.display()))
            .or_exit(Exit::Usage)?;
        println!("wrote {}", path.display());
    }
    println!(
        "next: edit them, then run `kubectl suture test {}`",
        args.dir.display()
    );
    Ok(Exit::Success)
}
