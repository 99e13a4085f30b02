//! `kubectl suture lint`: everything wrong with policy files that can be seen without a request —
//! every compile error, unknown fields, matches that can never select a request, conditions and
//! validations decided in advance, costly expressions, fields the schema of a matched built-in
//! kind or custom resource (`--crds`, or CRDs among the files) does not declare — with
//! file:line:column and a caret.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::Args;
use policies_cel::lint::{LintReport, Linter, Severity};

use crate::commands::check::parse_policy_source;
use crate::exit::{Exit, Failure};
use crate::input;
use crate::kinds::KnownResources;
use crate::output::{self, Output};
use crate::policies::{PolicySource, TargetVersion};
use crate::report::lint::{LintDocument, text};
use crate::style::Style;

/// Arguments of `kubectl suture lint`.
#[derive(Debug, Args)]
#[command(after_help = HELP)]
pub struct LintArgs {
    /// Policy files or directories (searched recursively for *.yaml, *.yml, *.json), or `builtin`
    /// for the built-in pack [default: . when no -f is given]
    #[arg(value_name = "PATH", value_parser = parse_policy_source)]
    pub paths: Vec<PolicySource>,

    /// A policy file to lint, `-` for stdin (repeatable)
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    pub filenames: Vec<PathBuf>,

    /// Parameter objects for policies with paramKind (repeatable)
    #[arg(long = "params", value_name = "FILE")]
    pub params: Vec<PathBuf>,

    #[command(flatten)]
    pub target: TargetVersion,

    /// CustomResourceDefinitions (files or directories of YAML/JSON, `kubectl get crd -o yaml`
    /// Lists included): fields of their custom resources are checked against their schemas
    /// (repeatable; CRDs among the linted files are read too)
    #[arg(long = "crds", value_name = "PATH")]
    pub crds: Vec<PathBuf>,

    /// Output format: text, json or yaml
    #[arg(short = 'o', long = "output", default_value = "text", value_parser = output::parser(&["text", "json", "yaml"]))]
    pub output: Output,

    /// Fail (exit 1) on warnings too
    #[arg(long)]
    pub strict: bool,
}

const HELP: &str = "\
Findings have a severity and a stable code: compile-error, yaml-syntax, invalid-field,
unknown-kind, duplicate-name, message-type, result-type, kubernetes-version (the policies do
not load: exit 3),
unknown-field, unreachable-match, unbound-policy, never-true, always-true, cost,
deprecated-api-version, suture-extension, schema-field. docs/commands.md describes each.

Examples:
  # Lint every policy under policies/
  kubectl suture lint policies/

  # Lint one file from stdin, as JSON
  cat policy.yaml | kubectl suture lint -f - -o json

  # In CI: warnings fail too
  kubectl suture lint policies/ --params params/ --strict

  # Check the fields of custom resources against the cluster's CRDs
  kubectl get crd -o yaml > crds.yaml
  kubectl suture lint policies/ --crds crds.yaml

  # The built-in pack
  kubectl suture lint builtin

Exit status:
  0  no errors (warnings allowed unless --strict)
  1  some finding of error severity, or a warning with --strict
  2  usage error or unreadable file
  3  a policy failed to load or compile (syntax, invalid field, compile error)";

/// Runs `lint`.
pub fn run(args: &LintArgs, style: Style) -> Result<Exit, Failure> {
    let report = lint(args)?;
    let rendered = output::render(&args.output, &LintDocument::new(&report))
        .map_err(|e| Failure::failed(anyhow::anyhow!(e)))?;
    match rendered {
        Some(document) => print!("{document}"),
        None => print!("{}", text(&report, style)),
    }
    Ok(exit_of(&report, args.strict))
}

fn lint(args: &LintArgs) -> Result<LintReport, Failure> {
    let mut linter = Linter::new();
    linter.kubernetes_version(args.target.kubernetes_version);
    let default_dir = [PolicySource::Path(PathBuf::from("."))];
    let paths = if args.paths.is_empty() && args.filenames.is_empty() {
        &default_dir[..]
    } else {
        &args.paths[..]
    };
    for source in paths {
        match source {
            PolicySource::Builtin => linter.add_builtin(),
            PolicySource::Path(path) => linter.add_path(path).map_err(Failure::usage)?,
        }
    }
    for file in &args.filenames {
        let source = input::read_source(file)
            .with_context(|| format!("cannot read {}", file.display()))
            .map_err(Failure::usage)?;
        linter.add_str(&source.name, &source.text);
    }
    for path in &args.params {
        linter.add_params_path(path).map_err(Failure::usage)?;
    }
    for path in &args.crds {
        linter.add_crds_path(path).map_err(Failure::usage)?;
    }
    Ok(linter.run(&KnownResources))
}

/// 3 when a policy does not load, 1 on errors (or warnings with `--strict`), else 0.
fn exit_of(report: &LintReport, strict: bool) -> Exit {
    if report.findings.iter().any(|f| f.code.is_load_failure()) {
        Exit::Policy
    } else if report.count(Severity::Error) > 0 || (strict && report.count(Severity::Warning) > 0) {
        Exit::Failure
    } else {
        Exit::Success
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use policies_cel::lint::NoCatalog;

    fn report(text: &str) -> LintReport {
        let mut linter = Linter::new();
        linter.add_str("p.yaml", text);
        linter.run(&NoCatalog)
    }

    const HEAD: &str = "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: p}\nspec:\n  validations:\n";

    #[test]
    fn parses_paths_builtin_stdin_and_flags() {
        let cli = crate::Cli::try_parse_args([
            "kubectl-suture",
            "lint",
            "builtin",
            "policies/",
            "-f",
            "-",
            "--params",
            "p.yaml",
            "--crds",
            "crds/",
            "--crds",
            "crd.yaml",
            "--strict",
            "-o",
            "json",
        ])
        .unwrap();
        let crate::Command::Lint(args) = cli.command else {
            panic!("not lint")
        };
        assert_eq!(
            args.paths,
            [
                PolicySource::Builtin,
                PolicySource::Path(PathBuf::from("policies/"))
            ]
        );
        assert_eq!(args.filenames, [PathBuf::from("-")]);
        assert_eq!(args.params, [PathBuf::from("p.yaml")]);
        assert_eq!(args.crds, [PathBuf::from("crds/"), PathBuf::from("crd.yaml")]);
        assert!(args.strict);
        assert_eq!(args.output, Output::Json);
        assert!(crate::Cli::try_parse_args(["kubectl-suture", "lint", "-o", "junit"]).is_err());
    }

    #[test]
    fn exit_statuses() {
        let clean = report(&format!("{HEAD}  - expression: object.a == 1\n"));
        assert_eq!(exit_of(&clean, true), Exit::Success);
        let warning = report(&format!("{HEAD}  - expression: 'true'\n"));
        assert_eq!(exit_of(&warning, false), Exit::Success);
        assert_eq!(exit_of(&warning, true), Exit::Failure);
        let error = report(&format!("{HEAD}  - expression: 1 == 2\n"));
        assert_eq!(exit_of(&error, false), Exit::Failure);
        let compile = report(&format!("{HEAD}  - expression: objekt.a == 1\n"));
        assert_eq!(exit_of(&compile, false), Exit::Policy);
    }
}
