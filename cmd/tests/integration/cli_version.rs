//! `kubectl suture version`, `--version`, `--help` of every command, and usage errors (exit 2).

use crate::common;

use common::{json, stderr, stdout, suture};

const VERSION: &str = env!("CARGO_PKG_VERSION");

#[test]
fn version_prints_the_version() {
    let out = suture().arg("version").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), format!("kubectl-suture {VERSION}\n"));
}

#[test]
fn version_flag_prints_the_version() {
    let out = suture().arg("--version").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains(VERSION), "{}", stdout(&out));
}

#[test]
fn version_as_json() {
    let out = suture().args(["version", "-o", "json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        json(&out),
        serde_json::json!({"name": "kubectl-suture", "version": VERSION})
    );
}

#[test]
fn help_uses_the_kubectl_name_and_documents_exit_codes() {
    let out = suture().arg("--help").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let help = stdout(&out);
    assert!(
        help.contains("Usage: kubectl suture [OPTIONS] <COMMAND>"),
        "{help}"
    );
    for needle in [
        "check",
        "eval",
        "test",
        "version",
        "Examples:",
        "Exit status:",
        "3  a policy",
    ] {
        assert!(help.contains(needle), "missing {needle:?} in:\n{help}");
    }
}

#[test]
fn every_command_has_examples_and_exit_codes_in_its_help() {
    let top = stdout(&suture().arg("--help").output().unwrap());
    let commands: Vec<String> = top
        .lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| !l.starts_with("   ")) // a wrapped description
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect();
    assert!(commands.len() >= 12, "{commands:?}");
    for command in &commands {
        let out = suture().args([command, "--help"]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{command}");
        let help = stdout(&out);
        assert!(
            help.contains(&format!("Usage: kubectl suture {command}")),
            "{help}"
        );
        assert!(
            help.contains("Examples:\n  # "),
            "{command} --help has no examples:\n{help}"
        );
        assert!(
            help.contains("Exit status:\n  0  "),
            "{command} --help has no exit codes:\n{help}"
        );
        if ["check", "eval", "test", "replay", "lint"].contains(&command.as_str()) {
            // The commands that load policies or compile CEL.
            assert!(help.contains("  3  "), "{command} --help lacks exit 3:\n{help}");
        }
    }
    let out = suture().args(["version", "--help"]).output().unwrap();
    assert!(stdout(&out).contains("Examples:"), "{}", stdout(&out));
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &["frobnicate"][..],
        &["check"][..],
        &["check", "-f", "x.json", "-o", "xml"][..],
        &["eval"][..],
        &["eval", "-e", "1", "--authorizer", "maybe"][..],
        &["test", "--output", "tap"][..],
        &["version", "--bogus"][..],
    ] {
        let out = suture().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("error:"), "{args:?}: {}", stderr(&out));
        assert!(stdout(&out).is_empty(), "{args:?}");
    }
}

#[test]
fn no_command_prints_usage_and_exits_2() {
    let out = suture().output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("Usage: kubectl suture"), "{}", stderr(&out));
}
