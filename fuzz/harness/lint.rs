//! Fuzz harness of `kubectl suture lint`'s reader and checks: the input is one policy file (YAML,
//! or JSON when it starts with `{`; the same inputs as the policy loader's) linted by `Linter`
//! against the built-in kinds' schemas (and any CRD among the documents). Properties: nothing
//! panics, and every finding has a message.

use policies_cel::lint::{Linter, NoCatalog};

use super::policy_loader::file_name;

/// Runs one input; panics when the lint panics.
pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut linter = Linter::new();
    linter.add_str(file_name(&text), &text);
    let report = linter.run(&NoCatalog);
    for finding in &report.findings {
        assert!(!finding.message.is_empty(), "a finding without a message");
    }
    let _ = format!("{report:?}");
}
