//! Runs this test binary as the workload under callgrind, collecting only inside
//! `instructions::cases::counted` and dumping the counts after each call, one part file per counted step.

use std::path::Path;
use std::process::Command;

/// The one function callgrind collects in, as it demangles its name.
const COUNTED: &str = "instructions::cases::counted";

/// Whether valgrind can be run.
pub fn available() -> bool {
    Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success())
}

/// One counted step's instructions per request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Count {
    pub case: String,
    pub step: String,
    pub instructions: u64,
}

/// Runs the workload under callgrind and reads one count per step.
pub fn measure() -> Result<Vec<Count>, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the test binary: {e}"))?;
    let dir = scratch()?;
    let out_file = dir.join("callgrind.out");
    let output = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg("--collect-atstart=no")
        .arg(format!("--toggle-collect={COUNTED}"))
        .arg(format!("--dump-after={COUNTED}"))
        .arg(format!("--callgrind-out-file={}", out_file.display()))
        .arg(&exe)
        .env(super::CHILD, "1")
        .output()
        .map_err(|e| format!("cannot run valgrind: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "the workload failed under callgrind ({}):\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    // The workload prints, in order, one line per counted step: `step <case> <step> <rounds>`.
    let steps: Vec<(&str, &str, u64)> = stdout
        .lines()
        .filter_map(|line| {
            let mut words = line.strip_prefix("step ")?.split(' ');
            Some((words.next()?, words.next()?, words.next()?.parse().ok()?))
        })
        .collect();
    let mut counts = Vec::with_capacity(steps.len());
    for (part, (case, step, rounds)) in steps.into_iter().enumerate() {
        let file = dir.join(format!("callgrind.out.{}", part + 1));
        let instructions = instructions_in(&file)?;
        counts.push(Count {
            case: case.to_string(),
            step: step.to_string(),
            instructions: instructions / rounds,
        });
    }
    let _ = std::fs::remove_dir_all(&dir);
    if counts.is_empty() {
        return Err(format!("the workload counted no step; it printed:\n{stdout}"));
    }
    Ok(counts)
}

/// A fresh directory for callgrind's files.
fn scratch() -> Result<std::path::PathBuf, String> {
    let dir = std::env::temp_dir().join(format!("suture-instructions-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    Ok(dir)
}

/// The instructions (`Ir`) a callgrind part file counts in all.
fn instructions_in(file: &Path) -> Result<u64, String> {
    let text = std::fs::read_to_string(file).map_err(|e| {
        format!(
            "callgrind wrote no counts to {} ({e}): was `{COUNTED}` inlined or renamed?",
            file.display()
        )
    })?;
    text.lines()
        .find_map(|line| {
            line.strip_prefix("summary:")
                .or_else(|| line.strip_prefix("totals:"))
        })
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .ok_or_else(|| format!("{} has no summary line", file.display()))
}
