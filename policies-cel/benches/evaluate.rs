//! `cargo bench -p policies-cel --bench evaluate`: the time `evaluate()` takes per admission
//! review with a realistic policy library (22 ValidatingAdmissionPolicies), reported as medians
//! and as ratios against baselines measured in the same process:
//!
//! - the unavoidable floor: parsing the AdmissionReview JSON into a `Request`;
//! - the `cel` crate's own interpreter on the same validation expressions (why we interpret the
//!   lowered tree ourselves);
//!
//! and the time loading the library takes (YAML, the type checker, lowering) against the floor
//! of parsing its expressions alone.

/// The allocator the binaries use (see `cmd/`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use policies_cel::cel::upstream::{self, Context};
use policies_cel::cel::{Bindings, Budget, Env, Program, Root, Value};
use policies_cel::{EmptyCluster, Request, evaluate};

/// Median nanoseconds per call of `f`, from `samples` timed batches of ~5 ms each.
fn median_ns(samples: usize, mut f: impl FnMut()) -> f64 {
    let started = Instant::now();
    let mut calls = 0u64;
    while started.elapsed() < Duration::from_millis(5) {
        f();
        calls += 1;
    }
    let batch = calls.max(1);
    let mut per_call: Vec<f64> = (0..samples)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..batch {
                f();
            }
            t.elapsed().as_nanos() as f64 / batch as f64
        })
        .collect();
    per_call.sort_by(f64::total_cmp);
    per_call[per_call.len() / 2]
}

fn testdata(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata")
        .join(path)
}

fn micros(ns: f64) -> String {
    format!("{:>9.2} µs", ns / 1000.0)
}

fn main() {
    let quick = std::env::args().any(|a| a == "--test");
    let samples = if quick { 3 } else { 51 };
    let policies_path = testdata("bench/policies.yaml");
    let set = match policies_cel::policy::load_paths(&[policies_path.as_path()]) {
        Ok(set) => set,
        Err(e) => {
            eprintln!("cannot load {}: {e}", policies_path.display());
            std::process::exit(1);
        }
    };
    println!(
        "evaluate() with {} policies (median of {samples} samples)\n",
        set.len()
    );
    println!(
        "{:<28} {:>12} {:>12} {:>8}",
        "review", "parse floor", "evaluate", "ratio"
    );
    for review in ["bench/deployment-create.json", "bench/pod-create.json"] {
        let bytes = std::fs::read(testdata(review)).unwrap_or_default();
        let parse = || {
            let json: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
            Request::from_review(json).ok()
        };
        let Some(request) = parse() else {
            eprintln!("cannot read {review}");
            std::process::exit(1);
        };
        let decision = evaluate(&set, &request, &EmptyCluster);
        let floor = median_ns(samples, || {
            black_box(parse());
        });
        let judged = median_ns(samples, || {
            black_box(evaluate(&set, &request, &EmptyCluster));
        });
        println!(
            "{:<28} {} {} {:>7.2}x   ({} policies judged, allowed: {})",
            review.trim_start_matches("bench/"),
            micros(floor),
            micros(judged),
            judged / floor,
            decision
                .policies
                .iter()
                .filter(|p| p.outcome != policies_cel::eval::Outcome::NotMatched)
                .count(),
            decision.allowed
        );
    }
    compare_with_upstream_interpreter(samples);
    compare_load_with_parsing(samples, &policies_path);
}

/// Loading the library (YAML, checking and lowering every expression) against parsing its
/// expressions only.
fn compare_load_with_parsing(samples: usize, path: &std::path::Path) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut expressions = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_str(&text) {
        if let Ok(value) = <serde_json::Value as serde::Deserialize>::deserialize(document) {
            collect_expressions(&value, &mut expressions);
        }
    }
    let parser = || {
        upstream::parser::Parser::new()
            .enable_optional_syntax(true)
            .max_recursion_depth(96)
    };
    let parsed = expressions.iter().filter(|e| parser().parse(e).is_ok()).count();
    let floor = median_ns(samples, || {
        for expression in &expressions {
            black_box(parser().parse(expression).ok());
        }
    });
    let load = median_ns(samples, || {
        black_box(policies_cel::policy::load_paths(&[path]).ok());
    });
    println!(
        "\nloading {} ({} expressions, {parsed} parse): {} against parsing them alone {}: {:.2}x",
        path.file_name().and_then(|n| n.to_str()).unwrap_or_default(),
        expressions.len(),
        micros(load),
        micros(floor),
        load / floor
    );
}

/// Every CEL expression of a policy document (`expression`, `messageExpression`,
/// `valueExpression` fields).
fn collect_expressions(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    (
                        "expression" | "messageExpression" | "valueExpression",
                        serde_json::Value::String(s),
                    ) => out.push(s.clone()),
                    _ => collect_expressions(value, out),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|i| collect_expressions(i, out)),
        _ => {}
    }
}

/// The same expressions through the `cel` crate's interpreter and through ours.
fn compare_with_upstream_interpreter(samples: usize) {
    let review: serde_json::Value =
        serde_json::from_slice(&std::fs::read(testdata("bench/deployment-create.json")).unwrap_or_default())
            .unwrap_or_default();
    let object = review["request"]["object"].clone();
    let expressions = [
        "object.spec.template.spec.containers.all(c, c.securityContext.allowPrivilegeEscalation == false)",
        "object.spec.template.spec.containers.map(c, c.image).filter(i, i.startsWith('registry.example.com/')).size() > 0",
        "object.spec.template.spec.containers.all(c, has(c.resources) && has(c.resources.limits) && 'memory' in c.resources.limits)",
        "['app.kubernetes.io/name', 'team'].all(l, l in object.metadata.labels)",
        "object.spec.replicas <= 50 && object.metadata.name.size() < 64",
    ];
    let ours: Vec<Program> = expressions
        .iter()
        .filter_map(|e| Env::admission().compile(e).ok())
        .collect();
    let object_value = policies_cel::cel::value::from_json(&object);
    let bindings = Bindings::new().with(Root::Object, object_value.clone());
    let upstream_programs: Vec<upstream::Program> = expressions
        .iter()
        .filter_map(|e| upstream::Program::compile(e).ok())
        .collect();
    let mut context = Context::default();
    context.add_variable_from_value("object", object_value);
    let ours_values: Vec<Option<Value>> = ours
        .iter()
        .map(|p| p.eval(&bindings, &Budget::default()).ok())
        .collect();
    let upstream_values: Vec<Option<Value>> = upstream_programs
        .iter()
        .map(|p| p.execute(&context).ok())
        .collect();
    let agree = ours_values == upstream_values;
    let ours_ns = median_ns(samples, || {
        for program in &ours {
            black_box(program.eval(&bindings, &Budget::default()).ok());
        }
    });
    let upstream_ns = median_ns(samples, || {
        for program in &upstream_programs {
            black_box(program.execute(&context).ok());
        }
    });
    println!(
        "\n{} expressions on a Deployment: ours {}, cel 0.13 interpreter {}: {:.1}x faster (results agree: {agree})",
        expressions.len(),
        micros(ours_ns),
        micros(upstream_ns),
        upstream_ns / ours_ns
    );
}
