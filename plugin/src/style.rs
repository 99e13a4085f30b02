//! Colour on terminals only: a tiny ANSI palette that turns itself off for pipes, `--no-color`
//! and `NO_COLOR`.

use std::io::IsTerminal;

/// Whether (and how) to colour text written to stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Style {
    color: bool,
}

impl Style {
    /// Colour when stdout is a terminal, unless `no_color` or the `NO_COLOR` variable says otherwise.
    pub fn for_stdout(no_color: bool) -> Self {
        let disabled = no_color || std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Self {
            color: !disabled && std::io::stdout().is_terminal(),
        }
    }

    /// Colour when stderr is a terminal (same switches as [`Style::for_stdout`]).
    pub fn for_stderr(no_color: bool) -> Self {
        let disabled = no_color || std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Self {
            color: !disabled && std::io::stderr().is_terminal(),
        }
    }

    /// No colour at all.
    pub fn plain() -> Self {
        Self { color: false }
    }

    /// True when escapes are written.
    pub fn is_colored(self) -> bool {
        self.color
    }

    /// Success (green, bold).
    pub fn good(self, text: &str) -> String {
        self.paint("1;32", text)
    }

    /// Failure (red, bold).
    pub fn bad(self, text: &str) -> String {
        self.paint("1;31", text)
    }

    /// Warning (yellow).
    pub fn warn(self, text: &str) -> String {
        self.paint("33", text)
    }

    /// Headings (bold).
    pub fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }

    /// Secondary detail (dim).
    pub fn dim(self, text: &str) -> String {
        self.paint("2", text)
    }

    fn paint(self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_writes_no_escapes() {
        assert_eq!(Style::plain().bad("DENIED"), "DENIED");
        assert_eq!(Style { color: true }.good("ok"), "\x1b[1;32mok\x1b[0m");
    }
}
