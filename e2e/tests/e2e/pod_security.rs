//! The Pod Security harm: a Namespace's enforce level raised above what its running pods meet.
//! What Suture estimates (`impact.podSecurityViolations`) is proved against the real
//! kube-apiserver and ReplicaSet controller: the operator's raise is refused by
//! `suture-broken-references` and changes nothing, a level the pods meet goes through (and then a
//! rollout of a template that level refuses is refused), and the
//! reasons Suture gives are the ones kube-apiserver's PodSecurity admission warns about when the
//! admin raises the level. Then the pods keep running, but the ReplicaSet controller cannot
//! replace a lost pod until the level comes down.
//!
//! The checks themselves (the model's reading of a pod, `cluster::pod_security`) are judged by
//! kube-apiserver's PodSecurity admission: pods of every kind the standards name are created in
//! a dry run in namespaces enforcing baseline and restricted, and what it refuses, with its
//! reasons, must be what the checks say.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::Api;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use policies_cel::cluster::pod_security::{Level, Violations};
use serde_json::{Value, json};
use suture_e2e::harness::{Test, TestFuture};
use suture_e2e::scene::{self, Answer, Operator};
use suture_e2e::{Cluster, gateway, scenes};

pub const TESTS: [Test; 2] = [
    Test {
        name: "pod_security::the_checks_agree_with_podsecurity_admission",
        run: the_checks_agree_with_podsecurity_admission,
    },
    Test {
        name: "pod_security::raising_the_level_above_running_pods_is_refused",
        run: raising_the_level_above_running_pods_is_refused,
    },
];

const NS: &str = "e2e-pod-security";
const ENFORCE: &str = "pod-security.kubernetes.io/enforce";

/// Sets the enforce label of the namespace to `level` as `op`.
async fn enforce(op: &Operator, level: &str, dry_run: bool) -> Result<Namespace, kube::Error> {
    let namespaces: Api<Namespace> = Api::all(op.client.clone());
    let patch = serde_json::json!({"metadata": {"labels": {ENFORCE: level}}});
    let params = PatchParams {
        dry_run,
        ..PatchParams::default()
    };
    namespaces.patch(NS, &params, &Patch::Merge(&patch)).await
}

/// The namespace's enforce label now.
async fn enforced(cluster: &Cluster) -> anyhow::Result<Option<String>> {
    let namespaces: Api<Namespace> = Api::all(cluster.client.clone());
    let namespace = namespaces.get(NS).await?;
    Ok(namespace
        .metadata
        .labels
        .and_then(|mut labels| labels.remove(ENFORCE)))
}

/// The reasons in a refusal's `refuses their replacements (a, b, c)`.
fn reasons(message: &str) -> Vec<String> {
    message
        .split_once("refuses their replacements (")
        .and_then(|(_, rest)| rest.split_once("), so"))
        .map(|(list, _)| list.split(", ").map(str::to_owned).collect())
        .unwrap_or_default()
}

fn raising_the_level_above_running_pods_is_refused(cluster: &mut Cluster) -> TestFuture<'_> {
    Box::pin(async move {
        let op = scene::operator(cluster, "e2e-operators", "web-operator").await?;
        gateway::ensure(cluster).await?;
        scene::apply(
            cluster,
            &format!(
                "{}---\n{}",
                scenes::namespace_yaml(NS),
                scenes::app_deployment(NS, &[])
            ),
        )?;
        scene::deployment_ready(cluster, NS, "app").await?;

        // The pods meet baseline: the operator may enforce it.
        enforce(&op, "baseline", false).await?;
        anyhow::ensure!(enforced(cluster).await?.as_deref() == Some("baseline"));
        println!("  operator's raise to baseline (the pods meet it) admitted");

        // A release whose pod template the level refuses: PodSecurity would only warn about the
        // Deployment and refuse its pods while the rollout removes old ones.
        let deployments: Api<Deployment> = Api::namespaced(op.client.clone(), NS);
        let host_pid = serde_json::json!({"spec": {"template": {"spec": {"hostPID": true}}}});
        let roll = |dry_run: bool| {
            let deployments = deployments.clone();
            let host_pid = host_pid.clone();
            async move {
                let params = PatchParams {
                    dry_run,
                    ..PatchParams::default()
                };
                deployments.patch("app", &params, &Patch::Merge(&host_pid)).await
            }
        };
        scene::until_answered(
            "the gateway to refuse the dry-run rollout of a template baseline refuses",
            Answer::RefusedWith("Pod Security level baseline refuses their replacements (host namespaces)"),
            || roll(true),
        )
        .await?;
        let admin_deployments: Api<Deployment> = Api::namespaced(cluster.client.clone(), NS);
        let generation = admin_deployments.get("app").await?.metadata.generation;
        let message = scene::refusal("the refused rollout", roll(false).await)?;
        anyhow::ensure!(
            message.contains("updating Deployment e2e-pod-security/app leaves 2 running pods"),
            "refused otherwise: {message}"
        );
        anyhow::ensure!(
            admin_deployments.get("app").await?.metadata.generation == generation,
            "the refused rollout changed the Deployment"
        );
        println!("  operator's rollout of a hostPID template refused: {message}");

        // Restricted: refused, once the gateway's model holds the pods.
        scene::until_answered(
            "the gateway to refuse the dry-run raise to restricted",
            Answer::RefusedWith("Pod Security level restricted refuses their replacements"),
            || enforce(&op, "restricted", true),
        )
        .await?;
        let message = scene::refusal("the raise to restricted", enforce(&op, "restricted", false).await)?;
        anyhow::ensure!(
            message.contains("SafetyPolicy 'suture-broken-references'")
                && message.contains("leaves 2 running pods (app-")
                && message.contains(
                    "that cannot be replaced: Pod Security level restricted refuses their replacements"
                ),
            "refused otherwise: {message}"
        );
        anyhow::ensure!(
            enforced(cluster).await?.as_deref() == Some("baseline"),
            "the refused raise changed the namespace"
        );
        println!("  operator's raise to restricted refused: {message}");

        // What the refusal prevented, done by the admin (a person: not judged). kube-apiserver's
        // PodSecurity admission admits it with a warning naming the same reasons.
        let label = format!("{ENFORCE}=restricted");
        let out = scene::kubectl_with(
            cluster,
            None,
            &["label", "namespace", NS, &label, "--overwrite"],
            None,
        )?;
        anyhow::ensure!(out.status.success(), "the admin's label failed: {out:?}");
        let warning = String::from_utf8_lossy(&out.stderr);
        anyhow::ensure!(
            warning.contains("violate the new PodSecurity enforce level \"restricted:latest\""),
            "kube-apiserver warned otherwise: {warning}"
        );
        let ours = reasons(&message);
        anyhow::ensure!(!ours.is_empty(), "no reasons in: {message}");
        for reason in &ours {
            anyhow::ensure!(
                warning.contains(reason.as_str()),
                "Suture's reason `{reason}` is not among PodSecurity's: {warning}"
            );
        }
        println!("  PodSecurity warns of the same reasons: {}", ours.join(", "));

        // The pods keep running; a lost one cannot be replaced.
        let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(cluster.client.clone(), NS);
        let running = pods.list(&ListParams::default().labels("app=app")).await?.items;
        let name = running
            .first()
            .and_then(|p| p.metadata.name.clone())
            .ok_or_else(|| anyhow::anyhow!("no running pod of app"))?;
        pods.delete(&name, &DeleteParams::default()).await?;
        scene::replica_failure(
            cluster,
            NS,
            "app=app",
            "violates PodSecurity \"restricted:latest\"",
        )
        .await?;
        println!("  the ReplicaSet cannot replace the lost pod under restricted");

        // The level comes down: the controller replaces it.
        let unlabel = format!("{ENFORCE}-");
        scene::kubectl(cluster, &["label", "namespace", NS, &unlabel], None)?;
        scene::deployment_ready(cluster, NS, "app").await?;
        println!("  once the label is removed, the lost pod is replaced");

        scene::kubectl(cluster, &["delete", "namespace", NS, "--wait=false"], None)?;
        Ok(())
    })
}

/// Pods of every kind the standards name: (what it shows, its spec).
fn specimens() -> Vec<(&'static str, Value)> {
    let container = |context: Value| json!({"name": "app", "image": "registry.example/app:1.0", "securityContext": context});
    let hardened = json!({"allowPrivilegeEscalation": false, "runAsNonRoot": true,
        "seccompProfile": {"type": "RuntimeDefault"}, "capabilities": {"drop": ["ALL"]}});
    let with = |extra: Value| {
        let mut context = hardened.clone();
        if let (Some(context), Some(extra)) = (context.as_object_mut(), extra.as_object()) {
            context.extend(extra.clone());
        }
        context
    };
    let spec = |containers: Value| json!({"containers": containers});
    let mut cases = vec![
        (
            "plain",
            spec(json!([{"name": "app", "image": "registry.example/app:1.0"}])),
        ),
        ("hardened", spec(json!([container(hardened.clone())]))),
        (
            "privileged",
            spec(json!([container(with(
                json!({"privileged": true, "allowPrivilegeEscalation": true})
            ))])),
        ),
        (
            "capability SYS_ADMIN",
            spec(json!([container(with(
                json!({"capabilities": {"drop": ["ALL"], "add": ["SYS_ADMIN"]}})
            ))])),
        ),
        (
            "capability NET_BIND_SERVICE",
            spec(json!([container(with(
                json!({"capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}})
            ))])),
        ),
        (
            "capability CHOWN",
            spec(json!([container(with(
                json!({"capabilities": {"drop": ["ALL"], "add": ["CHOWN"]}})
            ))])),
        ),
        (
            "no drop ALL",
            spec(json!([container(with(
                json!({"capabilities": {"drop": ["NET_RAW"]}})
            ))])),
        ),
        (
            "runAsUser 0",
            spec(json!([container(with(json!({"runAsUser": 0})))])),
        ),
        (
            "runAsNonRoot false",
            spec(json!([container(with(json!({"runAsNonRoot": false})))])),
        ),
        (
            "seccomp Unconfined",
            spec(json!([container(with(
                json!({"seccompProfile": {"type": "Unconfined"}})
            ))])),
        ),
        (
            "SELinux spc_t",
            spec(json!([container(with(
                json!({"seLinuxOptions": {"type": "spc_t"}})
            ))])),
        ),
        (
            "SELinux container_t",
            spec(json!([container(with(
                json!({"seLinuxOptions": {"type": "container_t"}})
            ))])),
        ),
        (
            "AppArmor Unconfined",
            spec(json!([container(with(
                json!({"appArmorProfile": {"type": "Unconfined"}})
            ))])),
        ),
        (
            "hostPort",
            spec(
                json!([{"name": "app", "image": "registry.example/app:1.0", "securityContext": hardened,
            "ports": [{"containerPort": 8443, "hostPort": 443}]}]),
            ),
        ),
        (
            "probe host",
            spec(
                json!([{"name": "app", "image": "registry.example/app:1.0", "securityContext": hardened,
            "livenessProbe": {"httpGet": {"host": "10.0.0.1", "port": 80, "path": "/"}}}]),
            ),
        ),
    ];
    let pod_level = |name: &'static str, extra: Value, volumes: Value| {
        let mut spec = json!({"containers": [container(hardened.clone())], "volumes": volumes});
        if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
            spec.extend(extra.clone());
        }
        (name, spec)
    };
    cases.extend([
        pod_level("hostNetwork", json!({"hostNetwork": true}), json!([])),
        pod_level(
            "hostPID and hostIPC",
            json!({"hostPID": true, "hostIPC": true}),
            json!([]),
        ),
        pod_level(
            "hostPath volume",
            json!({}),
            json!([{"name": "host", "hostPath": {"path": "/var/log"}}]),
        ),
        pod_level(
            "nfs volume",
            json!({}),
            json!([{"name": "share", "nfs": {"server": "10.0.0.2", "path": "/export"}}]),
        ),
        pod_level(
            "emptyDir and projected volumes",
            json!({}),
            json!([{"name": "scratch", "emptyDir": {}},
            {"name": "token", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}}]),
        ),
        pod_level(
            "unsafe sysctl",
            json!({"securityContext": {"sysctls": [{"name": "kernel.msgmax", "value": "65536"}]}}),
            json!([]),
        ),
        pod_level(
            "safe sysctl",
            json!({"securityContext": {"sysctls": [{"name": "net.ipv4.tcp_syncookies", "value": "1"}]}}),
            json!([]),
        ),
        pod_level(
            "pod-level runAsNonRoot and seccomp",
            json!({"securityContext": {"runAsNonRoot": true,
            "seccompProfile": {"type": "RuntimeDefault"}}}),
            json!([]),
        ),
    ]);
    // Restricted settings at pod level only: the containers inherit them.
    cases.push(("inherited from the pod", json!({
        "securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [container(json!({"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}))],
    })));
    // An init container is checked like the others.
    cases.push((
        "init container",
        json!({
            "initContainers": [{"name": "init", "image": "registry.example/init:1.0"}],
            "containers": [container(hardened.clone())],
        }),
    ));
    // A Windows pod is exempt from the Linux-only restricted checks.
    cases.push((
        "Windows",
        json!({"os": {"name": "windows"}, "securityContext": {"runAsNonRoot": true},
        "containers": [{"name": "app", "image": "registry.example/app:1.0"}]}),
    ));
    cases
}

/// The reasons of a PodSecurity refusal: `violates PodSecurity "restricted:latest": reason
/// (detail), reason (detail)`, split at the commas outside the details.
fn podsecurity_reasons(message: &str) -> Option<Vec<String>> {
    let (_, list) = message.split_once("violates PodSecurity \"")?;
    let (_, list) = list.split_once("\": ")?;
    let mut reasons = Vec::new();
    let (mut depth, mut reason, mut in_detail) = (0, String::new(), false);
    for c in list.chars() {
        match c {
            '(' => {
                depth += 1;
                in_detail = true;
            }
            ')' => depth -= 1,
            ',' if depth == 0 => {
                reasons.push(reason.trim().to_owned());
                reason.clear();
                in_detail = false;
            }
            _ if !in_detail => reason.push(c),
            _ => {}
        }
    }
    reasons.push(reason.trim().to_owned());
    Some(reasons)
}

fn the_checks_agree_with_podsecurity_admission(cluster: &mut Cluster) -> TestFuture<'_> {
    Box::pin(async move {
        let levels = [Level::Baseline, Level::Restricted];
        for level in levels {
            scene::apply(
                cluster,
                &format!(
                    "apiVersion: v1\nkind: Namespace\nmetadata: {{name: e2e-pss-{0}, labels: {{{ENFORCE}: {0}}}}}\n",
                    level.as_str()
                ),
            )?;
        }
        let dry_run = PostParams {
            dry_run: true,
            ..PostParams::default()
        };
        let mut compared = 0;
        for (what, spec) in specimens() {
            let checks = Violations::of_pod(None, Some(&spec));
            for level in levels {
                let namespace = format!("e2e-pss-{}", level.as_str());
                let pods: Api<Pod> = Api::namespaced(cluster.client.clone(), &namespace);
                let pod: Pod = serde_json::from_value(json!({"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": "specimen"}, "spec": spec}))?;
                let ours: Vec<&str> = checks.failed_at(level).into_iter().map(|c| c.reason()).collect();
                match pods.create(&dry_run, &pod).await {
                    Ok(_) => anyhow::ensure!(
                        ours.is_empty(),
                        "{what}: {} admits it, Suture says it fails {ours:?}",
                        level.as_str()
                    ),
                    Err(kube::Error::Api(status)) => {
                        let theirs = podsecurity_reasons(&status.message).ok_or_else(|| {
                            anyhow::anyhow!("{what}: refused, not by PodSecurity: {}", status.message)
                        })?;
                        anyhow::ensure!(
                            theirs == ours,
                            "{what} at {}: PodSecurity refuses for {theirs:?}, Suture says {ours:?} ({})",
                            level.as_str(),
                            status.message
                        );
                    }
                    Err(other) => {
                        return Err(anyhow::Error::new(other).context(format!("{what}: the dry run failed")));
                    }
                }
                compared += 1;
            }
        }
        println!("  {compared} pods judged alike by PodSecurity admission and Suture's checks");
        for level in levels {
            let namespace = format!("e2e-pss-{}", level.as_str());
            scene::kubectl(
                cluster,
                &["delete", "namespace", &namespace, "--wait=false"],
                None,
            )?;
        }
        Ok(())
    })
}
