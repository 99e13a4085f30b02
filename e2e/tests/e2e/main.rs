//! The end-to-end suite: Suture's gateway registered in a real control plane, judging operators'
//! requests as kube-apiserver sends them. See `suture_e2e::cluster` for how the cluster is taken
//! and `suture_e2e::simulator` for the one simulated part.

mod admission;
mod bad_input;
mod balancers;
mod classes;
mod control_plane;
mod endpoints;
mod exhausting;
mod faults;
mod identities;
mod image;
mod kept_warm;
mod ledger;
mod model;
mod operator_profiles;
mod partition;
mod plugin;
mod pod_security;
mod policies;
mod policy_reports;
mod reality;
mod service_ports;
mod soak;
mod stale_owner;

use std::process::ExitCode;

use suture_e2e::harness::{self, Test};

fn main() -> ExitCode {
    let mut tests: Vec<Test> = Vec::new();
    tests.extend(control_plane::TESTS);
    tests.extend(admission::TESTS);
    tests.extend(stale_owner::TESTS);
    tests.extend(partition::TESTS);
    tests.extend(identities::TESTS);
    tests.extend(balancers::TESTS);
    tests.extend(classes::TESTS);
    tests.extend(pod_security::TESTS);
    tests.extend(endpoints::TESTS);
    tests.extend(service_ports::TESTS);
    tests.extend(model::TESTS);
    tests.extend(policies::TESTS);
    tests.extend(operator_profiles::TESTS);
    tests.extend(bad_input::TESTS);
    tests.extend(exhausting::TESTS);
    tests.extend(plugin::TESTS);
    tests.extend(image::TESTS);
    tests.extend(faults::TESTS);
    tests.extend(ledger::TESTS);
    tests.extend(policy_reports::TESTS);
    tests.extend(kept_warm::TESTS);
    tests.extend(reality::TESTS);
    tests.extend(soak::TESTS);
    harness::main(&tests)
}
