//! The gateway's Deployment (2+ replicas spread over nodes, probes, a locked-down container),
//! its PodDisruptionBudget and its Service (443 → 8443).

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, DeploymentStrategy, RollingUpdateDeployment};
use k8s_openapi::api::core::v1::{
    Affinity, Capabilities, Container, ContainerPort, EnvVar, EnvVarSource, HTTPGetAction,
    ObjectFieldSelector, PodAffinityTerm, PodAntiAffinity, PodSecurityContext, PodSpec, PodTemplateSpec,
    Probe, ResourceRequirements, SeccompProfile, SecretVolumeSource, SecurityContext, Service, ServicePort,
    ServiceSpec, Volume, VolumeMount, WeightedPodAffinityTerm,
};
use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetSpec};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::install::names;
use crate::install::options::InstallOptions;
use crate::install::rbac::meta;

fn selector() -> LabelSelector {
    LabelSelector {
        match_labels: Some(names::selector()),
        ..LabelSelector::default()
    }
}

/// The gateway's arguments (see `suture-gateway --help`): TLS from the mounted Secret, the
/// evaluation budget below the webhook timeout, self-protection of the installed objects.
pub fn args(options: &InstallOptions) -> Vec<String> {
    let mut args = vec![
        format!("--listen=0.0.0.0:{}", names::HTTPS_PORT),
        format!("--metrics-listen=0.0.0.0:{}", names::METRICS_PORT),
        format!("--tls-cert={}/tls.crt", names::TLS_DIR),
        format!("--tls-key={}/tls.key", names::TLS_DIR),
        format!("--eval-timeout={}", options.eval_timeout()),
        format!("--shutdown-grace={}s", names::SHUTDOWN_GRACE_SECONDS),
        "--max-model-age=60s".to_owned(),
        "--decision-log=stdout".to_owned(),
        format!("--protect-namespace={}", options.namespace),
        format!("--protect-deployment={}", names::GATEWAY),
        format!("--protect-webhook={}", names::GATEWAY),
    ];
    args.extend(
        options
            .allowed_users
            .iter()
            .map(|user| format!("--protect-allow-user={user}")),
    );
    if let Some(action) = &options.pack_action {
        args.push(format!("--pack-action={action}"));
    }
    if let Some(period) = &options.keep_warm {
        args.push(format!("--keep-warm={period}"));
        if let Some(window) = &options.keep_warm_for {
            args.push(format!("--keep-warm-for={window}"));
        }
    }
    args
}

fn probe(path: &str, period: i32, failures: i32) -> Probe {
    Probe {
        http_get: Some(HTTPGetAction {
            path: Some(path.to_owned()),
            port: IntOrString::String("metrics".to_owned()),
            ..HTTPGetAction::default()
        }),
        period_seconds: Some(period),
        failure_threshold: Some(failures),
        timeout_seconds: Some(2),
        ..Probe::default()
    }
}

fn quantities(pairs: &[(&str, &str)]) -> BTreeMap<String, Quantity> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), Quantity((*v).to_owned())))
        .collect()
}

/// An environment variable from a field of the pod (the downward API).
fn field_env(name: &str, field: &str) -> EnvVar {
    EnvVar {
        name: name.to_owned(),
        value_from: Some(EnvVarSource {
            field_ref: Some(ObjectFieldSelector {
                field_path: field.to_owned(),
                ..ObjectFieldSelector::default()
            }),
            ..EnvVarSource::default()
        }),
        ..EnvVar::default()
    }
}

fn container(options: &InstallOptions) -> Container {
    Container {
        name: "gateway".to_owned(),
        image: Some(options.image.clone()),
        image_pull_policy: Some("IfNotPresent".to_owned()),
        args: Some(args(options)),
        // The pod's name and namespace: its identity and namespace in the shared ledger.
        env: Some(vec![
            field_env("POD_NAME", "metadata.name"),
            field_env("POD_NAMESPACE", "metadata.namespace"),
        ]),
        ports: Some(vec![
            ContainerPort {
                name: Some("https".to_owned()),
                container_port: names::HTTPS_PORT,
                protocol: Some("TCP".to_owned()),
                ..ContainerPort::default()
            },
            ContainerPort {
                name: Some("metrics".to_owned()),
                container_port: names::METRICS_PORT,
                protocol: Some("TCP".to_owned()),
                ..ContainerPort::default()
            },
        ]),
        readiness_probe: Some(probe("/readyz", 5, 2)),
        liveness_probe: Some(probe("/healthz", 10, 3)),
        resources: Some(ResourceRequirements {
            requests: Some(quantities(&[("cpu", "250m"), ("memory", "256Mi")])),
            limits: Some(quantities(&[("memory", "1Gi")])),
            ..ResourceRequirements::default()
        }),
        security_context: Some(SecurityContext {
            allow_privilege_escalation: Some(false),
            read_only_root_filesystem: Some(true),
            run_as_non_root: Some(true),
            capabilities: Some(Capabilities {
                drop: Some(vec!["ALL".to_owned()]),
                ..Capabilities::default()
            }),
            ..SecurityContext::default()
        }),
        volume_mounts: Some(vec![VolumeMount {
            name: "tls".to_owned(),
            mount_path: names::TLS_DIR.to_owned(),
            read_only: Some(true),
            ..VolumeMount::default()
        }]),
        ..Container::default()
    }
}

fn pod_spec(options: &InstallOptions) -> PodSpec {
    PodSpec {
        service_account_name: Some(names::GATEWAY.to_owned()),
        containers: vec![container(options)],
        termination_grace_period_seconds: Some(names::SHUTDOWN_GRACE_SECONDS + 5),
        security_context: Some(PodSecurityContext {
            run_as_non_root: Some(true),
            run_as_user: Some(65532),
            run_as_group: Some(65532),
            seccomp_profile: Some(SeccompProfile {
                type_: "RuntimeDefault".to_owned(),
                ..SeccompProfile::default()
            }),
            ..PodSecurityContext::default()
        }),
        affinity: Some(Affinity {
            pod_anti_affinity: Some(PodAntiAffinity {
                preferred_during_scheduling_ignored_during_execution: Some(vec![WeightedPodAffinityTerm {
                    weight: 100,
                    pod_affinity_term: PodAffinityTerm {
                        label_selector: Some(selector()),
                        topology_key: "kubernetes.io/hostname".to_owned(),
                        ..PodAffinityTerm::default()
                    },
                }]),
                ..PodAntiAffinity::default()
            }),
            ..Affinity::default()
        }),
        volumes: Some(vec![Volume {
            name: "tls".to_owned(),
            secret: Some(SecretVolumeSource {
                secret_name: Some(names::TLS_SECRET.to_owned()),
                ..SecretVolumeSource::default()
            }),
            ..Volume::default()
        }]),
        ..PodSpec::default()
    }
}

/// The gateway's Deployment.
pub fn deployment(options: &InstallOptions) -> Deployment {
    let mut template_meta = meta(names::GATEWAY, None);
    template_meta.name = None;
    Deployment {
        metadata: meta(names::GATEWAY, Some(&options.namespace)),
        spec: Some(DeploymentSpec {
            replicas: Some(options.replicas),
            selector: selector(),
            strategy: Some(DeploymentStrategy {
                type_: Some("RollingUpdate".to_owned()),
                rolling_update: Some(RollingUpdateDeployment {
                    max_unavailable: Some(IntOrString::Int(0)),
                    max_surge: Some(IntOrString::Int(1)),
                }),
            }),
            template: PodTemplateSpec {
                metadata: Some(template_meta),
                spec: Some(pod_spec(options)),
            },
            ..DeploymentSpec::default()
        }),
        ..Deployment::default()
    }
}

/// Voluntary disruptions (drains) leave at least one replica serving; a single replica may be
/// evicted (a budget it could never satisfy would block every drain).
pub fn disruption_budget(options: &InstallOptions) -> PodDisruptionBudget {
    let (min_available, max_unavailable) = if options.replicas >= 2 {
        (Some(IntOrString::Int(1)), None)
    } else {
        (None, Some(IntOrString::Int(1)))
    };
    PodDisruptionBudget {
        metadata: meta(names::GATEWAY, Some(&options.namespace)),
        spec: Some(PodDisruptionBudgetSpec {
            min_available,
            max_unavailable,
            selector: Some(selector()),
            ..PodDisruptionBudgetSpec::default()
        }),
        ..PodDisruptionBudget::default()
    }
}

/// The Service kube-apiserver calls: 443 → the container's 8443.
pub fn service(options: &InstallOptions) -> Service {
    Service {
        metadata: meta(names::GATEWAY, Some(&options.namespace)),
        spec: Some(ServiceSpec {
            type_: Some("ClusterIP".to_owned()),
            selector: Some(names::selector()),
            ports: Some(vec![ServicePort {
                name: Some("https".to_owned()),
                port: 443,
                target_port: Some(IntOrString::String("https".to_owned())),
                protocol: Some("TCP".to_owned()),
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    }
}
