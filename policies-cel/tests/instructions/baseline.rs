//! The committed baseline (`testdata/bench/instructions.tsv`): instructions per request of each
//! case's counted steps, per build profile (a debug build, as `cargo test` builds, counts several
//! times what a release build counts), and the comparison that fails the gate.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::callgrind::Count;

/// How far a count may move from the baseline, either way, before the gate fails: far above the
/// counts' own spread between runs (under 1%: hash seeds change a few probes), far below what a
/// feature that costs noticeably adds.
pub const MARGIN: f64 = 0.10;

/// The build the counts come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Profile {
    Debug,
    Release,
}

impl Profile {
    /// This test binary's.
    pub fn current() -> Self {
        if cfg!(debug_assertions) {
            Profile::Debug
        } else {
            Profile::Release
        }
    }

    fn parse(text: &str) -> Option<Self> {
        match text {
            "debug" => Some(Profile::Debug),
            "release" => Some(Profile::Release),
            _ => None,
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Profile::Debug => "debug",
            Profile::Release => "release",
        })
    }
}

/// A count's key: profile, case, step.
type Key = (Profile, String, String);

/// Where the baseline is.
pub fn path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/bench/instructions.tsv")
}

const HEADER: &str = "\
# Instructions per request of the judged path, counted by callgrind (valgrind) in the gate
# `cargo test -p policies-cel --test instructions` (policies-cel/tests/instructions): each
# recorded review judged with the built-in pack on its snapshots (`judge`: WireReview::read,
# into_request, evaluate) and its impact estimate alone (`estimate`). The gate fails when a count
# moves more than 10% from the line here; update with SUTURE_INSTRUCTIONS_UPDATE=1 in the same
# commit as the change, and say why in the commit message.
# profile\tcase\tstep\tinstructions
";

/// Reads the baseline (empty when the file does not exist yet).
pub fn read(path: &Path) -> Result<BTreeMap<Key, u64>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let mut counts = BTreeMap::new();
    for (number, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        let parsed = match fields.as_slice() {
            [profile, case, step, count] => Profile::parse(profile)
                .zip(count.parse::<u64>().ok())
                .map(|(profile, count)| ((profile, case.to_string(), step.to_string()), count)),
            _ => None,
        };
        let (key, count) = parsed.ok_or_else(|| {
            format!(
                "{}:{}: expected `profile<TAB>case<TAB>step<TAB>instructions`",
                path.display(),
                number + 1
            )
        })?;
        counts.insert(key, count);
    }
    Ok(counts)
}

/// Writes `measured` as `profile`'s counts, keeping the other profile's.
pub fn write(path: &Path, profile: Profile, measured: &[Count]) -> Result<(), String> {
    let mut counts = read(path)?;
    counts.retain(|(p, _, _), _| *p != profile);
    for count in measured {
        counts.insert(
            (profile, count.case.clone(), count.step.clone()),
            count.instructions,
        );
    }
    let mut text = String::from(HEADER);
    for ((profile, case, step), count) in &counts {
        text.push_str(&format!("{profile}\t{case}\t{step}\t{count}\n"));
    }
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// What the comparison found.
pub struct Report {
    /// One line per step: baseline, measured, ratio.
    pub table: String,
    /// The steps out of the margin, each saying which way.
    pub failures: Vec<String>,
    /// Whether the baseline has no line at all for this profile (the gate is then skipped).
    pub missing: bool,
}

/// Compares `measured` with `profile`'s baseline counts.
pub fn compare(profile: Profile, committed: &BTreeMap<Key, u64>, measured: &[Count]) -> Report {
    let mut table = format!(
        "{:<26} {:<9} {:>14} {:>14} {:>7}\n",
        "case", "step", "baseline", "measured", "ratio"
    );
    let mut failures = Vec::new();
    let missing = !committed.keys().any(|(p, _, _)| *p == profile);
    for count in measured {
        let key = (profile, count.case.clone(), count.step.clone());
        let Some(&base) = committed.get(&key) else {
            if !missing {
                failures.push(format!("{} {} has no baseline line", count.case, count.step));
            }
            table.push_str(&format!(
                "{:<26} {:<9} {:>14} {:>14}\n",
                count.case, count.step, "-", count.instructions
            ));
            continue;
        };
        let ratio = count.instructions as f64 / base.max(1) as f64;
        table.push_str(&format!(
            "{:<26} {:<9} {:>14} {:>14} {:>7.3}\n",
            count.case, count.step, base, count.instructions, ratio
        ));
        if ratio > 1.0 + MARGIN {
            failures.push(format!(
                "{} {} grew to {:.3}x the baseline's instructions ({} → {})",
                count.case, count.step, ratio, base, count.instructions
            ));
        } else if ratio < 1.0 - MARGIN {
            failures.push(format!(
                "{} {} fell to {:.3}x the baseline's instructions ({} → {}): update the baseline so \
                 that the gain is kept",
                count.case, count.step, ratio, base, count.instructions
            ));
        }
    }
    Report {
        table,
        failures,
        missing,
    }
}
