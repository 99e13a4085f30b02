//! Authoring help: `scaffold` writes a policy and a suite that pass `test` as written, `explain`
//! prints the reference from the project's docs, `completion` prints shell scripts.

use crate::common;

use common::{stderr, stdout, suture};

#[test]
fn scaffolded_policies_pass_their_own_suites() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("policies");
    let path = path.to_str().unwrap();
    for args in [
        vec!["scaffold", "protect-config", "--dir", path],
        vec!["scaffold", "replica-cap", "--kind", "vap", "--dir", path],
    ] {
        let out = suture().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let out = suture().args(["test", path]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("PASS: 6 passed, 0 failed, 6 cases in 2 suites"),
        "{}",
        stdout(&out)
    );

    let again = suture()
        .args(["scaffold", "protect-config", "--dir", path])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2));
    assert!(stderr(&again).contains("exists (use --force to overwrite)"));
    let forced = suture()
        .args(["scaffold", "protect-config", "--dir", path, "--force"])
        .output()
        .unwrap();
    assert_eq!(forced.status.code(), Some(0));
    let bad = suture().args(["scaffold", "Bad_Name"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("is not a valid policy name"));
}

#[test]
fn explain_prints_the_documented_reference() {
    let out = suture().args(["explain", "impact"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    for field in [
        "podsDisrupted",
        "quorumLost",
        "volumes[]",
        "staleOwners[]",
        "activity",
    ] {
        assert!(text.contains(field), "{field} missing:\n{text}");
    }
    let out = suture().args(["explain", "impact.pdbs"]).output().unwrap();
    assert!(stdout(&out).contains("desiredHealthy"), "{}", stdout(&out));
    let out = suture().args(["explain", "pack"]).output().unwrap();
    assert_eq!(
        stdout(&out)
            .lines()
            .filter(|l| l.starts_with("  suture-"))
            .count(),
        10
    );
    let out = suture()
        .args(["explain", "pack", "suture-data-loss"])
        .output()
        .unwrap();
    assert!(stdout(&out).contains("kind: SafetyPolicy\nmetadata:\n  name: suture-data-loss\n"));
    let out = suture().args(["explain", "impact.nothing"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("topics are variables, impact"));
}

/// The visible subcommands, as the tests expect them.
const SUBCOMMANDS: &[&str] = &[
    "check",
    "completion",
    "eval",
    "explain",
    "impact",
    "install",
    "lint",
    "replay",
    "scaffold",
    "snapshot",
    "test",
    "version",
];

#[test]
fn completion_scripts_cover_every_command() {
    use clap::CommandFactory as _;
    let real: Vec<String> = suture_plugin::Cli::command()
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| c.get_name().to_owned())
        .collect();
    assert_eq!(
        real, SUBCOMMANDS,
        "the CLI's subcommands changed: update SUBCOMMANDS"
    );
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = suture().args(["completion", shell]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let text = stdout(&out);
        for command in SUBCOMMANDS {
            // What each generator writes for a subcommand (a flag such as --version is not it).
            let marker = match shell {
                "bash" => format!("kubectl__suture,{command})"),
                "zsh" => format!("\n'{command}:"),
                "fish" => format!("__fish_kubectl_suture_needs_command\" -f -a \"{command}\""),
                "powershell" => format!("'kubectl-suture;{command}' {{"),
                _ => format!("&'kubectl-suture;{command}'= {{"),
            };
            assert!(
                text.contains(&marker),
                "{shell} completion lacks {command} ({marker:?})"
            );
        }
        assert!(
            text.contains("all-namespaces") && text.contains("strict"),
            "{shell}"
        );
    }
    let bash = stdout(&suture().args(["completion", "bash"]).output().unwrap());
    assert!(bash.contains("complete -F _kubectl__suture"), "{bash}");
    assert_eq!(
        suture()
            .args(["completion", "tcsh"])
            .output()
            .unwrap()
            .status
            .code(),
        Some(2)
    );
}

/// kubectl's plugin completion: kubectl runs `kubectl_complete-suture WORDS... PARTIAL` and reads
/// cobra's answer. The script `completion kubectl` prints is run here as kubectl would run it.
#[test]
fn kubectl_plugin_completion_answers_through_the_script() {
    use std::os::unix::fs::PermissionsExt as _;
    let out = suture().args(["completion", "kubectl"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("kubectl_complete-suture");
    std::fs::write(&script, &out.stdout).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let binary = assert_cmd::cargo::cargo_bin("kubectl-suture");
    let path = format!(
        "{}:{}",
        binary.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let answer = |words: &[&str]| {
        let out = std::process::Command::new(&script)
            .args(words)
            .env("PATH", &path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        stdout(&out)
    };
    assert!(answer(&["sn"]).starts_with("snapshot\tWrite the live cluster"));
    assert_eq!(answer(&["test", "-o", "j"]), "json\njunit\n:4\n");
    assert!(answer(&["check", "--req"]).starts_with("--request-timeout\t"));
    assert_eq!(answer(&["impact", "--cluster", ""]), ":0\n");
}
