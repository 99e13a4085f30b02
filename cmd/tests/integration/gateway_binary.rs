//! The `suture-gateway` binary: its command line (every flag in `--help`, `--version`, usage
//! errors exit 2), startup failures that name their cause, and a real start in offline mode
//! with `--self-signed` that prints the caBundle and stops cleanly on SIGTERM.

use std::io::{BufRead, BufReader};
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::Command;

#[test]
fn prints_its_version() {
    let out = Command::cargo_bin("suture-gateway")
        .unwrap()
        .arg("--version")
        .assert()
        .success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert_eq!(
        stdout.trim(),
        format!("suture-gateway {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn help_lists_every_flag_with_its_environment_variable() {
    let out = Command::cargo_bin("suture-gateway")
        .unwrap()
        .arg("--help")
        .assert()
        .success();
    let help = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    for flag in [
        "--listen",
        "--metrics-listen",
        "--tls-cert",
        "--tls-key",
        "--self-signed",
        "--tls-san",
        "--ca-bundle-out",
        "--client-ca",
        "--policies",
        "--params",
        "--no-builtin-pack",
        "--kubernetes-version",
        "--cluster",
        "--kubeconfig",
        "--context",
        "--no-cluster-policies",
        "--cluster-policy-selector",
        "--max-model-age",
        "--max-body-bytes",
        "--max-concurrency",
        "--eval-timeout",
        "--shutdown-grace",
        "--decision-log",
        "--log-level",
        "--protect-namespace",
        "--protect-deployment",
        "--protect-webhook",
        "--protect-allow-user",
    ] {
        assert!(help.contains(flag), "{flag} missing from --help:\n{help}");
    }
    for env in [
        "SUTURE_LISTEN",
        "SUTURE_EVAL_TIMEOUT",
        "SUTURE_DECISION_LOG",
        "SUTURE_CLUSTER",
        "SUTURE_KUBERNETES_VERSION",
    ] {
        assert!(help.contains(env), "{env} missing from --help");
    }
    assert!(!help.contains("--noop"), "the benchmark floor flag is hidden");
}

#[test]
fn a_bad_flag_is_a_usage_error() {
    Command::cargo_bin("suture-gateway")
        .unwrap()
        .arg("--no-such-flag")
        .assert()
        .code(2);
    Command::cargo_bin("suture-gateway")
        .unwrap()
        .args(["--eval-timeout", "soon", "--self-signed"])
        .assert()
        .code(2);
}

#[test]
fn the_kubernetes_version_is_checked_and_auto_needs_a_cluster() {
    let out = Command::cargo_bin("suture-gateway")
        .unwrap()
        .args(["--self-signed", "--kubernetes-version", "1.32"])
        .assert()
        .code(2);
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("Kubernetes 1.32 is not supported"), "{stderr}");
    let cluster = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/clusters/database");
    let out = Command::cargo_bin("suture-gateway")
        .unwrap()
        .args([
            "--self-signed",
            "--cluster",
            cluster,
            "--kubernetes-version",
            "auto",
        ])
        .args(["--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0"])
        .assert()
        .code(1);
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        stderr.contains("--kubernetes-version auto asks the cluster: it needs live mode"),
        "{stderr}"
    );
}

#[test]
fn a_missing_certificate_file_is_named() {
    let out = Command::cargo_bin("suture-gateway")
        .unwrap()
        .args([
            "--tls-cert",
            "/nonexistent/suture/tls.crt",
            "--tls-key",
            "/nonexistent/suture/tls.key",
            "--listen",
            "127.0.0.1:0",
            "--metrics-listen",
            "127.0.0.1:0",
        ])
        .assert()
        .code(1);
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("/nonexistent/suture/tls.crt"), "{stderr}");
}

#[test]
fn without_a_certificate_it_says_what_to_give() {
    let out = Command::cargo_bin("suture-gateway")
        .unwrap()
        .args(["--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0"])
        .assert()
        .code(1);
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("--self-signed"), "{stderr}");
}

#[cfg(unix)]
#[test]
fn self_signed_offline_mode_prints_the_ca_bundle_and_stops_on_sigterm() {
    let cluster = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/clusters/database");
    let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin("suture-gateway"))
        .args([
            "--self-signed",
            "--cluster",
            cluster,
            "--listen",
            "127.0.0.1:0",
            "--metrics-listen",
            "127.0.0.1:0",
            "--decision-log",
            "off",
            "--shutdown-grace",
            "2s",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert!(first.starts_with("caBundle: "), "{first}");
    assert!(first.trim_end().len() > "caBundle: ".len() + 100);
    // Serving (its signal handlers are installed before): ask it to stop.
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("suture-gateway serving") {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "exited before serving");
    }
    let status = StdCommand::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "exit status {status:?}");
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
