//! The training run of the profile-guided release build (`scripts/pgo-build.sh`): its driver,
//! `scripts/pgo-train.py`, answered by a real `suture-gateway` over HTTPS. The driver stops at the
//! first answer it does not expect, so a gateway whose answers drifted from what the training
//! checks (a status, the uid) fails here rather than in a release build.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use crate::common::root;

/// A gateway started offline on `scene`, stopped when dropped.
struct Gateway {
    child: Child,
    port: u16,
}

impl Gateway {
    fn start(scene: &str) -> Gateway {
        let cluster = root().join("testdata/clusters").join(scene);
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("suture-gateway"))
            .arg("--self-signed")
            .arg("--cluster")
            .arg(&cluster)
            .args(["--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0"])
            .args(["--decision-log", "off"])
            .env("NO_COLOR", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        while !line.contains("suture-gateway serving") {
            line.clear();
            assert!(stderr.read_line(&mut line).unwrap() > 0, "exited before serving");
        }
        let port = without_colors(&line)
            .split_whitespace()
            .find_map(|word| word.strip_prefix("webhook="))
            .and_then(|addr| addr.rsplit(':').next())
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("no webhook address in {line:?}"));
        // Keep reading its log, so that it never blocks on a full pipe.
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        Gateway { child, port }
    }
}

/// `text` without terminal color sequences (`ESC [ ... m`).
fn without_colors(text: &str) -> String {
    let mut plain = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            chars.by_ref().find(|&c| c == 'm');
        } else {
            plain.push(c);
        }
    }
    plain
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_training_run_is_answered_as_it_expects_on_every_recorded_review() {
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("skipped: python3 is not installed (scripts/pgo-train.py needs it)");
        return;
    }
    let gateway = Gateway::start("database");
    let mut reviews: Vec<_> = std::fs::read_dir(root().join("testdata/reviews"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    reviews.sort();
    let out = Command::new("python3")
        .arg(root().join("scripts/pgo-train.py"))
        .args(["--port", &gateway.port.to_string(), "--rounds", "2"])
        .args(&reviews)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Every review as sent and, but for the one with no request and the one already a dry run,
    // as a dry run: the pack denies some and admits others, and the body with no request is
    // answered 400.
    let bodies = 2 * reviews.len() - 2;
    assert!(
        stdout.contains(&format!("pgo-train: {bodies} bodies x 2 rounds: ")),
        "{stdout}"
    );
    let count = |what: &str| -> usize {
        stdout
            .split(", ")
            .find_map(|part| part.trim().strip_suffix(what))
            .and_then(|n| n.rsplit(' ').next().unwrap_or(n).trim().parse().ok())
            .unwrap_or_else(|| panic!("no {what} count in {stdout}"))
    };
    assert_eq!(count(" rejected"), 2, "{stdout}");
    assert!(count(" denied") > 0, "the pack denied nothing: {stdout}");
    assert!(count(" allowed") > 0, "the pack allowed nothing: {stdout}");
    assert_eq!(
        count(" allowed") + count(" denied") + count(" rejected"),
        2 * bodies
    );
}
