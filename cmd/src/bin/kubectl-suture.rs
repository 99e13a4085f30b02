//! `kubectl-suture`: a thin main; everything lives in the `suture-plugin` library.

fn main() -> std::process::ExitCode {
    std::process::ExitCode::SUCCESS
}
