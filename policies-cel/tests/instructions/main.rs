//! The instruction-count gate: the judged path (`WireReview::read` + `into_request` +
//! [`policies_cel::evaluate`] with the built-in pack, and the impact estimate alone) of a fixed set
//! of recorded reviews on recorded snapshots, counted by valgrind's callgrind and compared with
//! the committed baseline (`testdata/bench/instructions.tsv`). Counts of the same binary and inputs
//! are the same from run to run whatever else the machine does, so unlike a timing the gate
//! cannot be fooled by noise: a request whose instructions grow (or shrink) by more than the margin
//! fails the test until the baseline is updated in the same commit.
//!
//! `cargo test -p policies-cel --test instructions` (skipped, saying so, without valgrind).
//! `SUTURE_INSTRUCTIONS_UPDATE=1` writes the counts measured into the baseline instead.
//!
//! The test binary is its own workload: run with `SUTURE_INSTRUCTIONS_CHILD=1` (as the gate runs it
//! under callgrind) it loads the cases and runs each counted step in [`counted`], the one function
//! callgrind collects in.

mod baseline;
mod callgrind;
mod cases;

use std::process::ExitCode;

/// The allocator the binaries use (see `cmd/`): allocation is a fifth of a judged request's
/// instructions, and glibc's malloc counts differently.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The environment variable that makes this binary the measured workload.
const CHILD: &str = "SUTURE_INSTRUCTIONS_CHILD";
/// The environment variable that writes the measured counts into the baseline.
const UPDATE: &str = "SUTURE_INSTRUCTIONS_UPDATE";

fn main() -> ExitCode {
    // `cargo test -- --list` and filters: this target has one test, named after it.
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        println!("instruction_gate: test");
        return ExitCode::SUCCESS;
    }
    // A name filter that does not select this test (`cargo test -p policies-cel loader`).
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    if !filters.is_empty() && !filters.iter().any(|f| "instruction_gate".contains(f.as_str())) {
        return ExitCode::SUCCESS;
    }
    if std::env::var_os(CHILD).is_some() {
        return match cases::run_counted() {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("instructions workload: {error}");
                ExitCode::FAILURE
            }
        };
    }
    match gate() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("\n{error}");
            ExitCode::FAILURE
        }
    }
}

/// Measures every case under callgrind and compares with the baseline (or writes it).
fn gate() -> Result<(), String> {
    let profile = baseline::Profile::current();
    cases::check_compact()?;
    if !callgrind::available() {
        println!(
            "instruction_gate: SKIPPED: valgrind is not installed (apt-get install valgrind); \
             the instruction counts were not checked"
        );
        return Ok(());
    }
    let measured = callgrind::measure()?;
    let path = baseline::path();
    if std::env::var_os(UPDATE).is_some() {
        baseline::write(&path, profile, &measured)?;
        println!(
            "instruction_gate: wrote {} counts ({profile}) to {}; say why they changed in the commit message",
            measured.len(),
            path.display()
        );
        return Ok(());
    }
    let committed = baseline::read(&path)?;
    let report = baseline::compare(profile, &committed, &measured);
    println!("{}", report.table);
    if report.missing {
        println!(
            "instruction_gate: SKIPPED: {} has no {profile} counts to compare with \
             (write them with {UPDATE}=1)",
            path.display()
        );
        return Ok(());
    }
    if report.failures.is_empty() {
        println!("instruction_gate: ok");
        return Ok(());
    }
    Err(format!(
        "instruction_gate: FAILED: {}\n\nIf the change is intended, update the baseline in the same commit:\n    \
         {UPDATE}=1 cargo test -p policies-cel --test instructions{}\nand say in the commit message why the \
         instructions changed (what was added or removed, and what it costs per request).",
        report.failures.join("; "),
        if profile == baseline::Profile::Release {
            " --release"
        } else {
            ""
        },
    ))
}
