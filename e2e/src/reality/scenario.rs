//! A scenario: a scene (YAML applied in stages, so a CRD exists before its instances), optional
//! preparing requests (an object left terminating behind a finalizer), the request whose
//! estimate is measured, and what the scenario owns outside its namespace (a dedicated Node, a
//! CRD), which makes it run alone.

use std::time::Duration;

use crate::reality::request::{Kind, Request};
use crate::scenes::namespace_yaml;

/// One scenario of the reality harness.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Its name (`delete/deployment-orphan`).
    pub name: String,
    /// The rule of the estimate it exercises, in a few words.
    pub rule: String,
    /// Its namespace (`rl-` and its name).
    pub namespace: String,
    /// YAML applied in order, the Namespace first.
    pub stages: Vec<String>,
    /// Requests made (for real, unmeasured) once the scene is settled.
    pub prepare: Vec<Request>,
    /// The request measured.
    pub request: Request,
    /// A Node registered for this scenario alone (tainted so only its pods land there).
    pub node: Option<String>,
    /// Cluster-scoped objects it creates, by name (removed afterwards).
    pub cluster_objects: Vec<(Kind, String)>,
    /// Custom resources to watch beside the model's built-in kinds.
    pub custom: Vec<Kind>,
    /// The least time to watch after the request (controllers acting on timers).
    pub at_least: Duration,
    /// How long to wait after the scene settles, before the estimate and the request (the
    /// garbage collector learning a CRD created moments ago).
    pub warm_up: Duration,
}

fn slug(name: &str) -> String {
    let slug: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let mut namespace = format!("rl-{slug}");
    namespace.truncate(63);
    namespace.trim_end_matches('-').to_owned()
}

impl Scenario {
    /// A scenario `name` exercising `rule`, measuring `request`.
    pub fn new(name: &str, rule: &str, request: Request) -> Self {
        let namespace = slug(name);
        Self {
            name: name.to_owned(),
            rule: rule.to_owned(),
            stages: vec![namespace_yaml(&namespace)],
            namespace,
            prepare: Vec::new(),
            request,
            node: None,
            cluster_objects: Vec::new(),
            custom: Vec::new(),
            at_least: Duration::ZERO,
            warm_up: Duration::ZERO,
        }
    }

    /// Adds a stage of YAML, given the scenario's namespace.
    pub fn stage(mut self, yaml: impl FnOnce(&str) -> String) -> Self {
        let yaml = yaml(&self.namespace);
        self.stages.push(yaml);
        self
    }

    /// Adds a preparing request.
    pub fn prepare(mut self, request: Request) -> Self {
        self.prepare.push(request);
        self
    }

    /// Gives the scenario a dedicated Node (named after its namespace).
    pub fn dedicated_node(mut self) -> Self {
        let node = format!("{}-node", self.namespace);
        self.cluster_objects
            .push((crate::reality::request::NODE, node.clone()));
        self.node = Some(node);
        self
    }

    /// Records a cluster-scoped object the scenario creates.
    pub fn owns(mut self, kind: Kind, name: &str) -> Self {
        self.cluster_objects.push((kind, name.to_owned()));
        self
    }

    /// Watches a custom resource too.
    pub fn watch(mut self, kind: Kind) -> Self {
        self.custom.push(kind);
        self
    }

    /// Watches at least `duration` after the request.
    pub fn at_least(mut self, duration: Duration) -> Self {
        self.at_least = duration;
        self
    }

    /// Waits `duration` once the scene is settled, before the request.
    pub fn warm_up(mut self, duration: Duration) -> Self {
        self.warm_up = duration;
        self
    }

    /// Runs alone: it owns a Node or cluster-scoped objects other scenarios could reach.
    pub fn exclusive(&self) -> bool {
        self.node.is_some()
    }

    /// Its dedicated node's name, or an empty string.
    pub fn node_name(&self) -> &str {
        self.node.as_deref().unwrap_or_default()
    }
}
