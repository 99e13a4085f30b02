//! `suture-gateway` is built; until its issue lands it prints its version and says plainly that
//! the webhook server is not implemented, exiting non-zero.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

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
fn says_the_server_is_not_yet_implemented() {
    let out = Command::cargo_bin("suture-gateway").unwrap().assert().code(2);
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("not yet implemented"), "{stderr}");
}
