//! Where findings are collected, placed in their file (line, column and the line's text).

use crate::lint::finding::{Code, Finding, Severity};
use crate::lint::source::{Place, SourceFile};

/// The findings of one lint run.
#[derive(Debug)]
pub(crate) struct Sink<'a> {
    pub(crate) files: &'a [SourceFile],
    pub(crate) findings: Vec<Finding>,
}

/// What a finding says, before it is placed.
#[derive(Debug)]
pub(crate) struct Says {
    pub(crate) severity: Severity,
    pub(crate) code: Code,
    pub(crate) message: String,
    pub(crate) help: Option<String>,
    pub(crate) field: Option<String>,
    pub(crate) policy: Option<String>,
}

impl Says {
    pub(crate) fn new(severity: Severity, code: Code, message: impl Into<String>) -> Self {
        Self {
            severity,
            code,
            message: message.into(),
            help: None,
            field: None,
            policy: None,
        }
    }

    pub(crate) fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    pub(crate) fn field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    pub(crate) fn policy(mut self, policy: Option<&str>) -> Self {
        self.policy = policy.map(str::to_owned);
        self
    }
}

impl<'a> Sink<'a> {
    pub(crate) fn new(files: &'a [SourceFile]) -> Self {
        Self {
            files,
            findings: Vec::new(),
        }
    }

    /// Records `says` at `place` of file `file`.
    pub(crate) fn push(&mut self, file: usize, place: Place, says: Says) {
        let Some(source) = self.files.get(file) else {
            return;
        };
        self.findings.push(Finding {
            severity: says.severity,
            code: says.code,
            file: source.name.clone(),
            line: place.line,
            column: place.column,
            field: says.field,
            policy: says.policy,
            message: says.message,
            help: says.help,
            source_line: source.line(place.line).map(str::to_owned),
        });
    }
}
