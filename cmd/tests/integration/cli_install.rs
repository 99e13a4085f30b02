//! `kubectl suture install`: the rendered manifests (golden file, the committed `deploy/`),
//! that every document reads back into its Kubernetes type, that the webhook never sends
//! kube-system or the gateway's namespace, that its matchConditions select the right requests
//! when evaluated as CEL on recorded AdmissionReviews, that self-protection covers what the
//! gateway guards, TLS material, and usage errors.

use crate::common;

use common::{root, stderr, stdout, suture};
use serde_json::{Value, json};
use suture_plugin::install::{Manifest, k8s, parse_stream};

fn render(args: &[&str]) -> String {
    let out = suture().arg("install").args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    stdout(&out)
}

fn manifests(args: &[&str]) -> Vec<Manifest> {
    parse_stream(&render(args)).unwrap_or_else(|e| panic!("{e:#}"))
}

fn webhook_configuration(
    manifests: &[Manifest],
) -> &k8s::admissionregistration::v1::ValidatingWebhookConfiguration {
    manifests
        .iter()
        .find_map(|m| match m {
            Manifest::ValidatingWebhookConfiguration(c) => Some(c),
            _ => None,
        })
        .expect("a ValidatingWebhookConfiguration")
}

fn tls_secret(manifests: &[Manifest]) -> &k8s::core::v1::Secret {
    manifests
        .iter()
        .find_map(|m| match m {
            Manifest::Secret(s) => Some(s),
            _ => None,
        })
        .expect("a TLS Secret")
}

#[test]
fn the_default_render_matches_the_golden_file() {
    insta::assert_snapshot!("cli_install_default", render(&[]));
}

/// `deploy/suture.yaml` is the default render. `SUTURE_UPDATE_DEPLOY=1` rewrites it.
#[test]
fn deploy_is_up_to_date() {
    let path = root().join("deploy/suture.yaml");
    let rendered = render(&[]);
    if std::env::var_os("SUTURE_UPDATE_DEPLOY").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &rendered).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == rendered,
        "{} is out of date with `kubectl suture install`.\n\
         Regenerate it with: SUTURE_UPDATE_DEPLOY=1 cargo test -p suture-cmd --test integration cli_install",
        path.display()
    );
}

#[test]
fn every_document_reads_back_into_its_type() {
    let kinds = |manifests: &[Manifest]| -> Vec<String> {
        manifests
            .iter()
            .map(|m| match m {
                Manifest::CertManager(v) => v["kind"].as_str().unwrap().to_owned(),
                other => format!("{other:?}").split('(').next().unwrap().to_owned(),
            })
            .collect()
    };
    let expected_tail = [
        "Service",
        "Deployment",
        "PodDisruptionBudget",
        "ValidatingWebhookConfiguration",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
    ];
    let head = [
        "Namespace",
        "CustomResourceDefinition",
        "CustomResourceDefinition",
        "CustomResourceDefinition",
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
        "ClusterRole",
        "ClusterRoleBinding",
    ];
    let default = kinds(&manifests(&[]));
    let with = |middle: &[&str]| -> Vec<String> {
        head.iter()
            .chain(middle)
            .chain(&expected_tail)
            .map(|s| (*s).to_owned())
            .collect()
    };
    assert_eq!(default, with(&["Issuer", "Certificate"]));
    assert_eq!(
        kinds(&manifests(&["--cert-manager", "letsencrypt"])),
        with(&["Certificate"])
    );
    assert_eq!(kinds(&manifests(&["--self-signed"])), with(&["Secret"]));
}

#[test]
fn the_deployment_is_highly_available_and_locked_down() {
    let manifests = manifests(&["--replicas", "3", "--timeout-seconds", "3"]);
    let deployment = manifests
        .iter()
        .find_map(|m| match m {
            Manifest::Deployment(d) => Some(d),
            _ => None,
        })
        .unwrap();
    let spec = deployment.spec.as_ref().unwrap();
    assert_eq!(spec.replicas, Some(3));
    let pod = spec.template.spec.as_ref().unwrap();
    let container = &pod.containers[0];
    let args = container.args.as_ref().unwrap();
    assert!(args.contains(&"--eval-timeout=2s".to_owned()), "{args:?}");
    let grace: i64 = args
        .iter()
        .find_map(|a| a.strip_prefix("--shutdown-grace="))
        .and_then(|g| g.strip_suffix('s'))
        .unwrap()
        .parse()
        .unwrap();
    assert!(pod.termination_grace_period_seconds.unwrap() > grace);
    // The pod's own name and namespace name its shard of the shared ledger.
    let env: Vec<(&str, &str)> = container
        .env
        .iter()
        .flatten()
        .map(|e| {
            let field = e.value_from.as_ref().and_then(|v| v.field_ref.as_ref()).unwrap();
            (e.name.as_str(), field.field_path.as_str())
        })
        .collect();
    assert_eq!(
        env,
        [
            ("POD_NAME", "metadata.name"),
            ("POD_NAMESPACE", "metadata.namespace")
        ]
    );
    let security = container.security_context.as_ref().unwrap();
    assert_eq!(security.read_only_root_filesystem, Some(true));
    assert_eq!(security.run_as_non_root, Some(true));
    let readiness = container
        .readiness_probe
        .as_ref()
        .unwrap()
        .http_get
        .as_ref()
        .unwrap();
    assert_eq!(readiness.path.as_deref(), Some("/readyz"));
    assert!(pod.affinity.as_ref().unwrap().pod_anti_affinity.is_some());
    let budget = manifests
        .iter()
        .find_map(|m| match m {
            Manifest::PodDisruptionBudget(p) => Some(p),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        serde_json::to_value(&budget.spec.as_ref().unwrap().min_available).unwrap(),
        json!(1)
    );
}

#[test]
fn the_webhook_never_sends_kube_system_or_its_own_namespace() {
    let manifests = manifests(&[
        "-n",
        "guards",
        "--failure-policy",
        "Ignore",
        "--timeout-seconds",
        "7",
    ]);
    let configuration = webhook_configuration(&manifests);
    let webhooks = configuration.webhooks.as_ref().unwrap();
    let validate = webhooks.iter().find(|w| w.name == "validate.suture.dev").unwrap();
    let selector = serde_json::to_value(validate.namespace_selector.as_ref().unwrap()).unwrap();
    assert_eq!(
        selector,
        json!({"matchExpressions": [{
            "key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system", "guards"]
        }]})
    );
    assert_eq!(validate.failure_policy.as_deref(), Some("Ignore"));
    assert_eq!(validate.timeout_seconds, Some(7));
    assert_eq!(validate.side_effects, "None");
    assert_eq!(validate.admission_review_versions, ["v1"]);
    let service = validate.client_config.service.as_ref().unwrap();
    assert_eq!(
        (service.namespace.as_str(), service.name.as_str()),
        ("guards", "suture-gateway")
    );
    let resources: Vec<String> = validate
        .rules
        .as_ref()
        .unwrap()
        .iter()
        .flat_map(|r| r.resources.clone().unwrap())
        .collect();
    assert_eq!(resources, ["*", "*/scale", "pods/eviction"]);
    // The self-protection webhook only ever looks inside the gateway's namespace, and fails closed.
    let protect = webhooks.iter().find(|w| w.name == "protect.suture.dev").unwrap();
    let selector = serde_json::to_value(protect.namespace_selector.as_ref().unwrap()).unwrap();
    assert_eq!(selector["matchExpressions"][0]["operator"], "In");
    assert_eq!(selector["matchExpressions"][0]["values"], json!(["guards"]));
    assert_eq!(protect.failure_policy.as_deref(), Some("Fail"));
}

/// Evaluates `expression` as CEL on `review` with the same engine as the gateway.
fn eval(expression: &str, review: &Value) -> bool {
    let dir = common::temp_files(&[("review.json", &review.to_string())]);
    let out = suture()
        .args(["eval", "-o", "json", "-e", expression, "--request"])
        .arg(dir.path().join("review.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{expression}: {}", stderr(&out));
    let value: Value = serde_json::from_slice(&out.stdout).unwrap();
    value["value"]
        .as_bool()
        .unwrap_or_else(|| panic!("{expression}: not a bool: {value}"))
}

fn review(name: &str) -> Value {
    let text = std::fs::read_to_string(root().join("testdata/reviews").join(name)).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn as_user(mut review: Value, user: &str) -> Value {
    review["request"]["userInfo"]["username"] = json!(user);
    review
}

/// Whether every matchCondition of `webhook` holds for `review`.
fn sent(webhook: &k8s::admissionregistration::v1::ValidatingWebhook, review: &Value) -> bool {
    webhook
        .match_conditions
        .as_ref()
        .unwrap()
        .iter()
        .all(|condition| eval(&condition.expression, review))
}

#[test]
fn match_conditions_select_the_chosen_identities() {
    let all = manifests(&[]);
    let validate =
        |manifests: &[Manifest]| webhook_configuration(manifests).webhooks.clone().unwrap()[0].clone();
    let default = validate(&all);
    let pod_delete = review("pod-delete-pg-main-0.json"); // system:serviceaccount:databases:pg-operator
    assert!(sent(&default, &pod_delete));
    assert!(!sent(&default, &review("deployment-delete-dryrun.json"))); // kubernetes-admin
    // kube-system's cluster-autoscaler is an operator like any other; the control plane's own
    // controllers are not sent.
    assert!(sent(&default, &review("pod-eviction-create.json")));
    assert!(!sent(
        &default,
        &as_user(
            pod_delete.clone(),
            "system:serviceaccount:kube-system:generic-garbage-collector"
        )
    ));
    assert!(!sent(
        &default,
        &as_user(
            pod_delete.clone(),
            "system:serviceaccount:suture-system:suture-gateway"
        )
    ));
    let mut lease = pod_delete.clone();
    lease["request"]["resource"] =
        json!({"group": "coordination.k8s.io", "version": "v1", "resource": "leases"});
    assert!(!sent(&default, &lease));

    let chosen = manifests(&[
        "--service-account",
        "databases/pg-operator",
        "--identity",
        "alice",
    ]);
    let chosen = validate(&chosen);
    assert!(sent(&chosen, &pod_delete));
    assert!(sent(&chosen, &as_user(pod_delete.clone(), "alice")));
    assert!(!sent(&chosen, &review("crd-delete-operator.json"))); // another service account
}

/// Every object the gateway's guard protects is sent to it by protect.suture.dev (the
/// webhook configuration itself, which kube-apiserver never sends to webhooks, is guarded by
/// the in-process ValidatingAdmissionPolicy), and allowed users are not sent at all.
#[test]
fn self_protection_covers_what_the_gateway_guards() {
    let installer = "system:serviceaccount:flux-system:kustomize-controller";
    let manifests = manifests(&["--allow-user", installer]);
    let protect = webhook_configuration(&manifests).webhooks.clone().unwrap()[1].clone();
    let guard = suture_gateway::guard::SelfProtection {
        namespace: "suture-system".into(),
        deployment: "suture-gateway".into(),
        webhook_configuration: "suture-gateway".into(),
        allowed_users: vec![installer.into()],
    };
    let rules = protect.rules.clone().unwrap();
    let operator = "system:serviceaccount:databases:pg-operator";
    for object in guard.protected() {
        let mut request = review("pod-delete-pg-main-0.json");
        request["request"]["resource"] =
            json!({"group": object.group, "version": "v1", "resource": object.resource});
        request["request"]["name"] = json!(object.name);
        request["request"]["namespace"] = json!(object.namespace);
        request["request"]["oldObject"]["metadata"]["name"] = json!(object.name);
        // The objects of a deletecollection come unnamed, their name in oldObject.
        let mut unnamed = request.clone();
        unnamed["request"]["name"] = json!("");
        if object.resource == "validatingwebhookconfigurations" {
            let policy = manifests
                .iter()
                .find_map(|m| match m {
                    Manifest::ValidatingAdmissionPolicy(p) => Some(p),
                    _ => None,
                })
                .unwrap();
            let spec = policy.spec.as_ref().unwrap();
            let rule = &spec
                .match_constraints
                .as_ref()
                .unwrap()
                .resource_rules
                .as_ref()
                .unwrap()[0];
            assert_eq!(rule.resources.as_deref(), Some(&[object.resource.to_owned()][..]));
            assert_eq!(
                rule.resource_names, None,
                "resourceNames would let unnamed objects through"
            );
            let conditions = spec.match_conditions.as_ref().unwrap();
            let matched = |review: &Value| conditions.iter().all(|c| eval(&c.expression, review));
            assert!(matched(&as_user(request.clone(), operator)));
            assert!(
                matched(&as_user(unnamed.clone(), operator)),
                "a deletecollection's object"
            );
            assert!(!matched(&as_user(request.clone(), installer)));
            request["request"]["name"] = json!("something-else");
            assert!(!matched(&as_user(request, operator)));
            continue;
        }
        let ruled = rules.iter().any(|rule| {
            rule.api_groups
                .as_ref()
                .unwrap()
                .iter()
                .any(|g| g == object.group)
                && rule
                    .resources
                    .as_ref()
                    .unwrap()
                    .iter()
                    .any(|r| r == object.resource)
                && rule.operations.as_ref().unwrap() == &["UPDATE", "DELETE"]
        });
        assert!(ruled, "no protect rule for {}", object.describe());
        assert!(
            sent(&protect, &as_user(request.clone(), operator)),
            "{} not sent",
            object.describe()
        );
        assert!(
            sent(&protect, &as_user(unnamed, operator)),
            "{} not sent when a deletecollection deletes it",
            object.describe()
        );
        assert!(
            !sent(&protect, &as_user(request.clone(), installer)),
            "{} sent for the installer",
            object.describe()
        );
        request["request"]["name"] = json!("something-else");
        assert!(!sent(&protect, &as_user(request, operator)));
    }
}

/// Writes to the gateway's configuration objects (SafetyPolicies, SafetyPackParams), which its
/// guard refuses, reach it through the judging webhook (cluster-scoped: no namespace excludes them).
#[test]
fn configuration_writes_reach_the_guard() {
    let manifests = manifests(&[]);
    let validate = webhook_configuration(&manifests).webhooks.clone().unwrap()[0].clone();
    let rule = &validate.rules.as_ref().unwrap()[0];
    assert_eq!(rule.api_groups.as_deref(), Some(&["*".to_owned()][..]));
    for (group, resource, _, operations) in suture_gateway::guard::PROTECTED_KINDS {
        for operation in *operations {
            assert!(rule.operations.as_ref().unwrap().iter().any(|o| o == operation));
            let mut request = review("pod-delete-pg-main-0.json");
            request["request"]["operation"] = json!(operation);
            request["request"]["resource"] =
                json!({"group": group, "version": "v1alpha1", "resource": resource});
            request["request"]["name"] = json!("default");
            request["request"]["namespace"] = Value::Null;
            assert!(sent(&validate, &request), "{operation} {resource} not sent");
        }
    }
}

#[test]
fn self_signed_renders_a_secret_that_the_ca_bundle_verifies() {
    let manifests = manifests(&["--self-signed", "-n", "guards"]);
    let secret = tls_secret(&manifests);
    assert_eq!(secret.type_.as_deref(), Some("kubernetes.io/tls"));
    assert_eq!(secret.metadata.name.as_deref(), Some("suture-gateway-tls"));
    let data = secret.data.as_ref().unwrap();
    let text = |key: &str| String::from_utf8(data[key].0.clone()).unwrap();
    assert!(text("tls.key").starts_with("-----BEGIN PRIVATE KEY-----"));
    let configuration = webhook_configuration(&manifests);
    assert!(
        configuration.metadata.annotations.is_none(),
        "no cert-manager annotation"
    );
    for webhook in configuration.webhooks.as_ref().unwrap() {
        let ca_bundle = String::from_utf8(webhook.client_config.ca_bundle.clone().unwrap().0).unwrap();
        assert_eq!(ca_bundle, text("ca.crt"));
        suture_plugin::install::tls::verify(&ca_bundle, &text("tls.crt"), "suture-gateway.guards.svc")
            .unwrap();
        assert!(
            suture_plugin::install::tls::verify(&ca_bundle, &text("tls.crt"), "suture-gateway.default.svc")
                .is_err()
        );
    }
}

/// A gateway outside the cluster: both webhooks call the URL (no Service reference), nothing
/// in-cluster serves (no Deployment, Service or PDB), and the certificate names the URL's host.
#[test]
fn a_webhook_url_points_both_webhooks_at_a_gateway_outside_the_cluster() {
    let manifests = manifests(&["--self-signed", "--webhook-url", "https://127.0.0.1:8443/"]);
    assert!(!manifests.iter().any(|m| matches!(
        m,
        Manifest::Deployment(_) | Manifest::Service(_) | Manifest::PodDisruptionBudget(_)
    )));
    let secret = tls_secret(&manifests);
    let data = secret.data.as_ref().unwrap();
    let cert = String::from_utf8(data["tls.crt"].0.clone()).unwrap();
    let webhooks = webhook_configuration(&manifests).webhooks.as_ref().unwrap();
    assert_eq!(webhooks.len(), 2);
    for webhook in webhooks {
        let config = &webhook.client_config;
        assert_eq!(config.url.as_deref(), Some("https://127.0.0.1:8443/validate"));
        assert!(config.service.is_none());
        let ca_bundle = String::from_utf8(config.ca_bundle.clone().unwrap().0).unwrap();
        suture_plugin::install::tls::verify(&ca_bundle, &cert, "127.0.0.1").unwrap();
    }
}

#[test]
fn a_provided_certificate_must_name_the_webhook_urls_host() {
    let material = suture_plugin::install::tls::self_signed("suture-system").unwrap();
    let dir = common::temp_files(&[
        ("ca.pem", &material.ca_pem),
        ("tls.crt", &material.cert_pem),
        ("tls.key", &material.key_pem),
    ]);
    let p = |name: &str| dir.path().join(name).display().to_string();
    let out = suture()
        .args([
            "install",
            "--webhook-url",
            "https://10.0.0.5:8443",
            "--ca-bundle",
            &p("ca.pem"),
        ])
        .args(["--tls-cert", &p("tls.crt"), "--tls-key", &p("tls.key")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("10.0.0.5"), "{}", stderr(&out));
}

#[test]
fn provided_certificates_are_checked_against_the_bundle() {
    let material = suture_plugin::install::tls::self_signed("suture-system").unwrap();
    let other = suture_plugin::install::tls::self_signed("suture-system").unwrap();
    let dir = common::temp_files(&[
        ("ca.pem", &material.ca_pem),
        ("other-ca.pem", &other.ca_pem),
        ("tls.crt", &material.cert_pem),
        ("tls.key", &material.key_pem),
    ]);
    let p = |name: &str| dir.path().join(name).display().to_string();
    let rendered = manifests(&[
        "--ca-bundle",
        &p("ca.pem"),
        "--tls-cert",
        &p("tls.crt"),
        "--tls-key",
        &p("tls.key"),
    ]);
    assert!(rendered.iter().any(|m| matches!(m, Manifest::Secret(_))));
    let out = suture()
        .args([
            "install",
            "--ca-bundle",
            &p("other-ca.pem"),
            "--tls-cert",
            &p("tls.crt"),
            "--tls-key",
            &p("tls.key"),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("does not verify against the CA bundle"),
        "{}",
        stderr(&out)
    );
    // --ca-bundle alone: the Secret is yours to create.
    let rendered = manifests(&["--ca-bundle", &p("ca.pem")]);
    assert!(
        !rendered
            .iter()
            .any(|m| matches!(m, Manifest::Secret(_) | Manifest::CertManager(_)))
    );
}

#[test]
fn output_dir_writes_one_file_per_object() {
    let dir = tempfile::tempdir().unwrap();
    let out = suture().args(["install", "-o"]).arg(dir.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut files: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    assert_eq!(files.len(), 19, "{files:?}");
    assert_eq!(files[0], "00-namespace.yaml");
    let joined: String = files
        .iter()
        .map(|f| std::fs::read_to_string(dir.path().join(f)).unwrap())
        .collect();
    assert_eq!(parse_stream(&joined).unwrap().len(), 19);
}

/// The gateway container's arguments in a render with `args`.
fn gateway_args(args: &[&str]) -> Vec<String> {
    manifests(args)
        .iter()
        .find_map(|m| match m {
            Manifest::Deployment(d) => d.spec.as_ref()?.template.spec.as_ref()?.containers[0]
                .args
                .clone(),
            _ => None,
        })
        .unwrap()
}

#[test]
fn keep_warm_is_on_by_default_off_at_zero_and_the_gateway_reads_the_periods() {
    let parse = |args: Vec<String>| {
        <suture_gateway::config::Config as clap::Parser>::try_parse_from(
            std::iter::once("suture-gateway".to_owned()).chain(args),
        )
        .unwrap()
    };
    let default = gateway_args(&[]);
    assert!(default.contains(&"--keep-warm=2ms".to_owned()), "{default:?}");
    assert!(
        !default.iter().any(|a| a.starts_with("--keep-warm-for")),
        "{default:?}"
    );
    let config = parse(default);
    assert_eq!(config.keep_warm, std::time::Duration::from_millis(2));
    assert_eq!(config.keep_warm_for, std::time::Duration::from_secs(60));

    let off = gateway_args(&["--keep-warm", "0s", "--keep-warm-for", "5m"]);
    assert!(!off.iter().any(|a| a.starts_with("--keep-warm")), "{off:?}");

    let tuned = gateway_args(&["--keep-warm", "5ms", "--keep-warm-for", "10s"]);
    let config = parse(tuned);
    assert_eq!(config.keep_warm, std::time::Duration::from_millis(5));
    assert_eq!(config.keep_warm_for, std::time::Duration::from_secs(10));
}

#[test]
fn bad_flags_are_usage_errors() {
    let cases: &[&[&str]] = &[
        &["--failure-policy", "Sometimes"],
        &["--replicas", "0"],
        &["--timeout-seconds", "31"],
        &["--service-account", "no-namespace"],
        &["--self-signed", "--cert-manager", "x"],
        &["--tls-cert", "a.pem"],
        &["--cert-manager", "Vault/x"],
        &["-n", "kube-system"],
        &["--ca-bundle", "does-not-exist.pem"],
        &["--unknown"],
        &["--webhook-url", "http://127.0.0.1:8443", "--self-signed"],
        &["--webhook-url", "https://gw/x?debug=1", "--self-signed"],
        &["--webhook-url", "https://127.0.0.1:8443"],
        &["--keep-warm", "fast"],
        &["--keep-warm", "5"],
        &["--keep-warm-for", "0s"],
        &["--keep-warm", "1s", "--keep-warm-for", "500ms"],
    ];
    for args in cases {
        let out = suture().arg("install").args(*args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "{args:?} printed manifests");
    }
}

#[test]
fn the_gateway_may_write_its_reports_and_the_wg_policy_crds_are_rendered_on_request() {
    let crds = |manifests: &[Manifest]| -> Vec<String> {
        manifests
            .iter()
            .filter_map(|m| match m {
                Manifest::CustomResourceDefinition(crd) => crd.metadata.name.clone(),
                _ => None,
            })
            .collect()
    };
    let default = manifests(&[]);
    assert!(
        !crds(&default).iter().any(|n| n.ends_with(".wgpolicyk8s.io")),
        "off by default"
    );
    let with = crds(&manifests(&["--policy-report-crds"]));
    assert!(
        with.contains(&"policyreports.wgpolicyk8s.io".to_owned()),
        "{with:?}"
    );
    assert!(
        with.contains(&"clusterpolicyreports.wgpolicyk8s.io".to_owned()),
        "{with:?}"
    );

    let rules = |name: &str| -> Vec<(String, String, Vec<String>)> {
        let rules = default
            .iter()
            .find_map(|m| match m {
                Manifest::ClusterRole(r) if r.metadata.name.as_deref() == Some(name) => r.rules.clone(),
                Manifest::Role(r) if r.metadata.name.as_deref() == Some(name) => r.rules.clone(),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no role {name}"));
        rules
            .into_iter()
            .flat_map(|rule| {
                let groups = rule.api_groups.unwrap_or_default();
                let resources = rule.resources.unwrap_or_default();
                groups
                    .into_iter()
                    .flat_map(move |g| resources.clone().into_iter().map(move |r| (g.clone(), r)))
                    .map(move |(g, r)| (g, r, rule.verbs.clone()))
            })
            .collect()
    };
    let reports = rules("suture-gateway-reports");
    let verbs = |group: &str, resource: &str| {
        reports
            .iter()
            .find(|(g, r, _)| g == group && r == resource)
            .map(|(_, _, v)| v.clone())
            .unwrap_or_default()
    };
    for resource in ["policyreports", "clusterpolicyreports"] {
        for verb in ["get", "list", "create", "patch", "delete"] {
            assert!(
                verbs("wgpolicyk8s.io", resource).contains(&verb.to_owned()),
                "{resource} {verb}"
            );
        }
    }
    assert_eq!(verbs("events.k8s.io", "events"), ["create", "patch"]);
    let ledger = rules("suture-gateway-ledger");
    assert!(
        ledger
            .iter()
            .any(|(g, r, v)| g == "coordination.k8s.io" && r == "leases" && v.contains(&"update".to_owned())),
        "{ledger:?}"
    );
}

#[test]
fn the_pack_action_reaches_the_gateway() {
    assert!(!gateway_args(&[]).iter().any(|a| a.starts_with("--pack-action")));
    let args = gateway_args(&["--pack-action", "Audit"]);
    assert!(args.contains(&"--pack-action=Audit".to_owned()), "{args:?}");
    let out = suture()
        .args(["install", "--pack-action", "Block"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}
