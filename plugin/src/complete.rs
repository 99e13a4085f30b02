//! Completion of `kubectl suture ...` through kubectl's plugin completion (kubectl 1.26+):
//! kubectl runs an executable named `kubectl_complete-suture` with the words typed after
//! `kubectl suture` (the last one is the word being completed, maybe empty) and expects cobra's
//! `__complete` answer: one candidate a line (`candidate<TAB>description`), then `:DIRECTIVE`.
//! `kubectl suture completion kubectl` prints that executable: a script calling the hidden
//! `kubectl-suture __complete`, answered here from the clap command tree.

use clap::{Arg, ArgAction, Command};

/// cobra's ShellCompDirectiveDefault: the shell may complete file names.
const FILES: u8 = 0;
/// cobra's ShellCompDirectiveNoFileComp: only the candidates given.
const NO_FILES: u8 = 4;

/// The answer for `words` (the last one is being completed) against `root`.
pub fn complete(root: &Command, words: &[String]) -> String {
    let (partial, typed) = match words.split_last() {
        Some((last, rest)) => (last.as_str(), rest),
        None => ("", &[][..]),
    };
    let mut command = root;
    let mut pending_value: Option<&Arg> = None;
    for word in typed {
        if pending_value.take().is_some() {
            continue;
        }
        if word.starts_with('-') {
            pending_value = flag(command, word).filter(|arg| takes_value(arg) && !word.contains('='));
        } else if let Some(sub) = command.find_subcommand(word) {
            command = sub;
        }
    }
    let mut candidates: Vec<(String, String)> = Vec::new();
    let directive = if let Some(arg) = pending_value {
        candidates.extend(values(arg, partial));
        if arg.get_possible_values().is_empty() {
            FILES
        } else {
            NO_FILES
        }
    } else if partial.starts_with('-') {
        for arg in command.get_arguments().filter(|a| !a.is_hide_set()) {
            if let Some(long) = arg.get_long() {
                let name = format!("--{long}");
                if name.starts_with(partial) {
                    candidates.push((name, help(arg)));
                }
            }
        }
        NO_FILES
    } else {
        for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
            if sub.get_name().starts_with(partial) {
                let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
                candidates.push((sub.get_name().to_owned(), about));
            }
        }
        let positional = command.get_positionals().next();
        match positional {
            Some(arg) if !arg.get_possible_values().is_empty() => {
                candidates.extend(values(arg, partial));
                NO_FILES
            }
            Some(_) => FILES,
            None => NO_FILES,
        }
    };
    let mut out = String::new();
    for (candidate, description) in candidates {
        let description = description.lines().next().unwrap_or_default();
        if description.is_empty() {
            out.push_str(&format!("{candidate}\n"));
        } else {
            out.push_str(&format!("{candidate}\t{description}\n"));
        }
    }
    out.push_str(&format!(":{directive}\n"));
    out
}

/// The flag `word` (`--output`, `--output=json`, `-o`) of `command`.
fn flag<'a>(command: &'a Command, word: &str) -> Option<&'a Arg> {
    let name = word.split_once('=').map_or(word, |(name, _)| name);
    if let Some(long) = name.strip_prefix("--") {
        return command.get_arguments().find(|a| a.get_long() == Some(long));
    }
    let short = name.strip_prefix('-')?.chars().next()?;
    command.get_arguments().find(|a| a.get_short() == Some(short))
}

fn takes_value(arg: &Arg) -> bool {
    matches!(arg.get_action(), ArgAction::Set | ArgAction::Append)
}

fn values(arg: &Arg, partial: &str) -> Vec<(String, String)> {
    arg.get_possible_values()
        .into_iter()
        .filter(|v| !v.is_hide_set() && v.get_name().starts_with(partial))
        .map(|v| {
            let help = v.get_help().map(|h| h.to_string()).unwrap_or_default();
            (v.get_name().to_owned(), help)
        })
        .collect()
}

fn help(arg: &Arg) -> String {
    arg.get_help().map(|h| h.to_string()).unwrap_or_default()
}

/// The `kubectl_complete-suture` executable.
pub const KUBECTL_SCRIPT: &str = "\
#!/usr/bin/env sh
# kubectl's completion of `kubectl suture ...` (kubectl 1.26+). Install as an executable named
# kubectl_complete-suture on your PATH, e.g. next to kubectl-suture.
exec kubectl-suture __complete \"$@\"
";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::CommandFactory;

    fn answer(words: &[&str]) -> String {
        let words: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
        complete(&Cli::command(), &words)
    }

    #[test]
    fn subcommands_complete_with_their_description() {
        let out = answer(&["sn"]);
        assert!(out.starts_with("snapshot\tWrite the live cluster"), "{out}");
        assert!(out.ends_with(":4\n"), "{out}");
        assert!(
            !answer(&[""]).contains("__complete"),
            "the hidden command is offered"
        );
    }

    #[test]
    fn flags_and_their_values_complete() {
        let out = answer(&["snapshot", "--ful"]);
        assert!(out.starts_with("--full\t"), "{out}");
        let out = answer(&["snapshot", "-o", ""]);
        assert_eq!(out, "yaml\njson\n:4\n");
        let out = answer(&["test", "--output", "j"]);
        assert_eq!(out, "json\njunit\n:4\n");
        let out = answer(&["completion", "k"]);
        assert!(out.starts_with("kubectl"), "{out}");
    }

    #[test]
    fn paths_are_left_to_the_shell() {
        assert_eq!(answer(&["check", "--cluster", ""]), ":0\n");
        assert_eq!(answer(&["test", "testdata/"]), ":0\n");
    }
}
