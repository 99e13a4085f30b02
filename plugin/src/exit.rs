//! Exit statuses of every command, and the error type that carries one to the binary's edge.

use std::fmt;
use std::process::ExitCode;

/// How a command ended. The numbers are part of the plugin's public command contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Exit {
    /// 0: allowed, value printed, every case passed.
    Success,
    /// 1: denied, evaluation error, some test case failed.
    Failure,
    /// 2: usage error or unreadable input (missing file, bad YAML/JSON, malformed AdmissionReview).
    Usage,
    /// 3: a policy or expression failed to load or compile.
    Policy,
}

impl Exit {
    /// The process exit status.
    pub fn code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::Failure => 1,
            Exit::Usage => 2,
            Exit::Policy => 3,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        ExitCode::from(exit.code())
    }
}

/// The "Exit status" section of every command's `--help`.
pub const EXIT_CODES_HELP: &str = "\
Exit status:
  0  success (allowed / value printed / estimate printed / all cases passed)
  1  denied / evaluation error / some case failed
  2  usage error or unreadable input
  3  a policy or expression failed to load or compile";

/// A command that could not finish: the error, the exit status it maps to, and optionally a
/// pre-rendered diagnostic (a CEL compile error with a caret under the problem).
#[derive(Debug)]
pub struct Failure {
    exit: Exit,
    error: anyhow::Error,
    rendered: Option<String>,
}

impl Failure {
    /// A failure exiting with `exit`.
    pub fn new(exit: Exit, error: impl Into<anyhow::Error>) -> Self {
        Self {
            exit,
            error: error.into(),
            rendered: None,
        }
    }

    /// Exit 2: usage error or unreadable input.
    pub fn usage(error: impl Into<anyhow::Error>) -> Self {
        Self::new(Exit::Usage, error)
    }

    /// Exit 3: a policy or expression failed to load or compile.
    pub fn policy(error: impl Into<anyhow::Error>) -> Self {
        Self::new(Exit::Policy, error)
    }

    /// Exit 1: the work ran and failed (e.g. an evaluation error).
    pub fn failed(error: impl Into<anyhow::Error>) -> Self {
        Self::new(Exit::Failure, error)
    }

    /// Adds a diagnostic printed after the `error:` line.
    pub fn with_rendered(mut self, rendered: impl Into<String>) -> Self {
        self.rendered = Some(rendered.into());
        self
    }

    /// The exit status.
    pub fn exit(&self) -> Exit {
        self.exit
    }

    /// The error.
    pub fn error(&self) -> &anyhow::Error {
        &self.error
    }

    /// What goes to stderr: `error: <message with its causes>`, then the diagnostic if any.
    pub fn report(&self) -> String {
        let mut text = format!("error: {:#}", self.error);
        if let Some(rendered) = &self.rendered {
            text.push('\n');
            text.push_str(rendered.trim_end());
        }
        text
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.report())
    }
}

/// Attaches an exit status to any error.
pub trait OrExit<T> {
    /// Maps the error into a [`Failure`] exiting with `exit`.
    fn or_exit(self, exit: Exit) -> Result<T, Failure>;
}

impl<T, E: Into<anyhow::Error>> OrExit<T> for Result<T, E> {
    fn or_exit(self, exit: Exit) -> Result<T, Failure> {
        self.map_err(|error| Failure::new(exit, error))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_follow_the_contract() {
        let codes: Vec<u8> = [Exit::Success, Exit::Failure, Exit::Usage, Exit::Policy]
            .into_iter()
            .map(Exit::code)
            .collect();
        assert_eq!(codes, [0, 1, 2, 3]);
    }

    #[test]
    fn report_includes_causes_and_diagnostic() {
        let error = anyhow::anyhow!("inner").context("outer");
        let failure = Failure::policy(error).with_rendered("ERROR: <input>:1:1: x\n | a\n | ^\n");
        assert_eq!(
            failure.report(),
            "error: outer: inner\nERROR: <input>:1:1: x\n | a\n | ^"
        );
        assert_eq!(failure.exit(), Exit::Policy);
    }
}
