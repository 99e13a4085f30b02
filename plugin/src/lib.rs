//! `kubectl-suture` as a library (being written).
