//! Cluster policy objects (SafetyPolicy, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding)
//! reaching the enforced set through the live watches, against kube's mock API service
//! (`tower_test` + `kube::Client::new`) — kube's real client and watchers, not a live cluster.

use crate::live_support;

use std::sync::Arc;
use std::time::Duration;

use live_support::{Live, MockApi, WatchReply, event, eventually};
use serde_json::{Value, json};
use suture_gateway::health::Health;
use suture_gateway::metrics::Metrics;
use suture_gateway::model::Feeds;

const SAFETY: &str = "/apis/suture.dev/v1alpha1/safetypolicies";
const VAPS: &str = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies";
const BINDINGS: &str = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings";

fn vap(name: &str) -> Value {
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name, "resourceVersion": "3", "managedFields": [{"manager": "kubectl"}]},
        "spec": {"failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                "operations": ["DELETE"], "resources": ["pods"]}]},
            "validations": [{"expression": "false", "message": "no pod deletes"}]},
        "status": {"observedGeneration": 1, "typeChecking": {}}})
}

fn binding(name: &str, policy: &str) -> Value {
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name, "resourceVersion": "3"},
        "spec": {"policyName": policy, "validationActions": ["Deny"]}})
}

fn safety_policy(name: &str, expression: &str, resource_version: &str) -> Value {
    json!({"apiVersion": "suture.dev/v1alpha1", "kind": "SafetyPolicy",
        "metadata": {"name": name, "resourceVersion": resource_version},
        "spec": {"action": "Deny", "subjects": {"serviceAccounts": ["*/*"]},
            "matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                "operations": ["DELETE"], "resources": ["statefulsets"]}]},
            "validations": [{"expression": expression, "message": "no"}]}})
}

fn policy_names(live: &Live) -> Vec<String> {
    let mut names: Vec<String> = live
        .policies
        .store()
        .current()
        .policies
        .iter()
        .map(|p| p.name.clone())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn cluster_policies_join_the_set_and_a_broken_one_keeps_the_last_good_set() {
    let (client, api) = MockApi::start();
    api.set_list(VAPS, "3", vec![vap("no-pod-deletes")]);
    api.set_list(
        BINDINGS,
        "3",
        vec![binding("no-pod-deletes-binding", "no-pod-deletes")],
    );
    api.set_list(SAFETY, "4", vec![safety_policy("no-sts-deletes", "false", "4")]);
    api.hold(VAPS);
    let live = Live::start(client, true);

    eventually("the other lists are in", || {
        live.model
            .watch_states()
            .iter()
            .filter(|(_, s)| !s.synced)
            .count()
            == 1
    })
    .await;
    let store = live.policies.store();
    assert!(
        policy_names(&live).is_empty(),
        "no rebuild before every policy kind is listed"
    );
    assert!(!live.model.is_ready(), "readiness waits for the cluster policies");
    api.release(VAPS);
    eventually("ready", || live.model.is_ready()).await;
    assert_eq!(policy_names(&live), ["no-pod-deletes", "no-sts-deletes"]);
    assert_eq!(store.current().bindings.len(), 1);
    assert_eq!(
        (store.status().generation, store.status().failures),
        (2, 0),
        "one rebuild for the lists"
    );

    // A broken SafetyPolicy arrives: the reload fails, the last good set keeps serving.
    api.reply_watch(
        SAFETY,
        WatchReply::Events(vec![event(
            "ADDED",
            safety_policy("broken", "this is not CEL (", "5"),
        )]),
    );
    eventually("the broken policy was tried", || store.status().failures == 1).await;
    assert_eq!(policy_names(&live), ["no-pod-deletes", "no-sts-deletes"]);
    let error = store.status().last_error.unwrap();
    assert!(error.contains("cluster:SafetyPolicy/broken"), "{error}");

    // Fixed: it joins the set; deleting the VAP (before its binding) leaves a loadable set.
    api.reply_watch(
        SAFETY,
        WatchReply::Events(vec![event("MODIFIED", safety_policy("broken", "true", "6"))]),
    );
    eventually("the fixed policy joined", || policy_names(&live).len() == 3).await;
    assert_eq!(store.status().last_error, None);
    api.reply_watch(
        VAPS,
        WatchReply::Events(vec![event("DELETED", vap("no-pod-deletes"))]),
    );
    eventually("the VAP left", || {
        policy_names(&live) == ["broken", "no-sts-deletes"]
    })
    .await;
    assert!(store.current().bindings.is_empty());
    assert_eq!(store.status().last_error, None);
}

#[tokio::test]
async fn a_policy_selector_narrows_the_policy_watches_only() {
    let (client, api) = MockApi::start();
    let config = suture_gateway::live::LiveConfig {
        policy_selector: Some("suture.dev/enforce=true".to_owned()),
        ..suture_gateway::live::LiveConfig::default()
    };
    let _live = Live::start_with(client, config);
    let selected = "labelSelector=suture.dev%2Fenforce%3Dtrue";
    eventually("the policy kinds listed with the selector", || {
        [VAPS, BINDINGS, SAFETY].iter().all(|path| {
            let requests = api.requests_on(path);
            !requests.is_empty() && requests.iter().all(|uri| uri.contains(selected))
        })
    })
    .await;
    let pods = api.requests_on("/api/v1/pods");
    assert!(
        !pods.is_empty() && pods.iter().all(|uri| !uri.contains("labelSelector")),
        "{pods:?}"
    );
}

#[tokio::test]
async fn a_selector_the_api_server_cannot_read_is_refused_at_start_up() {
    let (client, api) = MockApi::start();
    api.fail_next_list(VAPS, 400);
    let error = suture_gateway::run::check_policy_selector(&client, "a in b")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("--cluster-policy-selector \"a in b\": "),
        "{error}"
    );
    // A selector it reads (or any other failure, the watches' to retry) passes.
    suture_gateway::run::check_policy_selector(&client, "team=db")
        .await
        .unwrap();
}

#[tokio::test]
async fn a_missing_safety_policy_crd_counts_as_no_policies() {
    let (client, api) = MockApi::start();
    api.fail_next_list(SAFETY, 404);
    api.set_list(VAPS, "3", vec![vap("no-pod-deletes")]);
    let live = Live::start(client, true);
    eventually("ready without the SafetyPolicy CRD", || live.model.is_ready()).await;
    assert_eq!(policy_names(&live), ["no-pod-deletes"]);
    assert_eq!(live.model.watch_errors(), 0, "an absent resource is not an error");
}

const CONFIG_MAPS: &str = "/api/v1/configmaps";
const PACK_PARAMS: &str = "/apis/suture.dev/v1alpha1/safetypackparams";

fn vap_with_params(name: &str) -> Value {
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name, "resourceVersion": "3"},
        "spec": {"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                "operations": ["UPDATE"], "resources": ["deployments"]}]},
            "validations": [{"expression": "object.spec.replicas <= int(params.data.maxReplicas)"}]}})
}

fn params_of(live: &Live) -> Vec<Value> {
    live.policies.store().current().params.to_vec()
}

/// A VAP taking a ConfigMap as params: the ConfigMaps are watched for the policy set with their
/// values (a policy reads them), beside the model's own watch of them.
#[tokio::test]
async fn params_of_cluster_policies_are_watched_with_their_values() {
    let (client, api) = MockApi::start();
    api.set_list(VAPS, "3", vec![vap_with_params("replica-limit")]);
    let binding = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "replica-limit", "resourceVersion": "3"},
        "spec": {"policyName": "replica-limit", "validationActions": ["Deny"],
            "paramRef": {"name": "limits", "namespace": "ops", "parameterNotFoundAction": "Deny"}}});
    api.set_list(BINDINGS, "3", vec![binding]);
    let limits = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "limits", "namespace": "ops", "resourceVersion": "7",
            "managedFields": [{"manager": "kubectl"}]},
        "data": {"maxReplicas": "5"}});
    api.set_list(CONFIG_MAPS, "7", vec![limits]);
    let live = Live::start(client, true);

    eventually("the params are in the set", || !params_of(&live).is_empty()).await;
    let params = params_of(&live);
    assert_eq!(params.len(), 1);
    assert_eq!(params[0]["data"]["maxReplicas"], "5", "params keep their values");
    assert!(params[0]["metadata"].get("managedFields").is_none());
    // The model's own watch of the same ConfigMaps is unaffected (it projects key names only;
    // the stripping itself is tested in policies-cel's `cluster::api::strip`).
    eventually("ready", || live.model.is_ready()).await;
    assert_eq!(live.names("", "ConfigMap"), ["limits"]);
}

/// A SafetyPolicy taking SafetyPackParams: params follow their watch, and when no policy names
/// the kind any more its watch stops and its objects leave the set.
#[tokio::test]
async fn params_follow_their_watch_and_leave_with_the_last_policy_naming_them() {
    let (client, api) = MockApi::start();
    let mut policy = safety_policy("tuned", "true", "4");
    policy["spec"]["paramKind"] = json!({"apiVersion": "suture.dev/v1alpha1", "kind": "SafetyPackParams"});
    api.set_list(SAFETY, "4", vec![policy.clone()]);
    let params = |max: u32, rv: &str| {
        json!({"apiVersion": "suture.dev/v1alpha1", "kind": "SafetyPackParams",
            "metadata": {"name": "default", "resourceVersion": rv}, "spec": {"maxDeletedObjects": max}})
    };
    api.set_list(PACK_PARAMS, "8", vec![params(100, "8")]);
    let live = Live::start(client, true);
    eventually("the params are in the set", || params_of(&live).len() == 1).await;

    api.reply_watch(
        PACK_PARAMS,
        WatchReply::Events(vec![event("MODIFIED", params(20, "9"))]),
    );
    eventually("the modified params", || {
        params_of(&live)
            .first()
            .is_some_and(|p| p["spec"]["maxDeletedObjects"] == 20)
    })
    .await;

    api.reply_watch(SAFETY, WatchReply::Events(vec![event("DELETED", policy)]));
    eventually("the params left with the policy", || params_of(&live).is_empty()).await;
    eventually("the params watch is forgotten", || {
        live.model
            .watch_states()
            .iter()
            .all(|(name, _)| !name.contains("(params)"))
    })
    .await;
}

/// Serves a SafetyPolicy taking SafetyPackParams, and one SafetyPackParams object
/// (`maxDeletedObjects: 20`).
fn serve_tuned_policy_and_params(api: &MockApi) {
    let mut policy = safety_policy("tuned", "true", "4");
    policy["spec"]["paramKind"] = json!({"apiVersion": "suture.dev/v1alpha1", "kind": "SafetyPackParams"});
    api.set_list(SAFETY, "4", vec![policy]);
    let params = json!({"apiVersion": "suture.dev/v1alpha1", "kind": "SafetyPackParams",
        "metadata": {"name": "default", "resourceVersion": "8"}, "spec": {"maxDeletedObjects": 20}});
    api.set_list(PACK_PARAMS, "8", vec![params]);
}

/// A params watch that keeps failing feeds the policy set, not the model: the last good params
/// keep serving, the failure shows in the watch states and `/readyz`, and the model stays
/// current (its age does not grow past the heartbeat), so impact-reading policies keep judging.
#[tokio::test]
async fn a_failing_params_watch_leaves_the_model_current() {
    let (client, api) = MockApi::start();
    serve_tuned_policy_and_params(&api);
    let live = Live::start(client, true);
    eventually("the params are in the set", || params_of(&live).len() == 1).await;
    eventually("ready", || live.model.is_ready()).await;
    eventually("the params are watched", || api.counts_on(PACK_PARAMS) == (1, 1)).await;

    // The params watch fails (HTTP 500) and its re-list does not come back.
    let name = "SafetyPackParams suture.dev/v1alpha1 (params)";
    api.hold(PACK_PARAMS);
    api.reply_watch(PACK_PARAMS, WatchReply::Error(500));
    eventually("the params watch is failing", || {
        live.model.failing_watches() == [name]
    })
    .await;
    eventually("the re-list was sent after the backoff", || {
        api.counts_on(PACK_PARAMS).0 == 2
    })
    .await;
    let state = &live.model.watch_states()[name];
    assert_eq!(state.feeds, Feeds::Policies);
    assert!(state.failing && !state.synced);

    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(live.model.failing_watches(), [name], "still failing");
    let age = live.model.age().unwrap();
    assert!(
        age < Duration::from_millis(1500),
        "the model aged {age:?} while only a params watch failed"
    );
    assert_eq!(
        params_of(&live)[0]["spec"]["maxDeletedObjects"],
        20,
        "the last good params keep serving"
    );
    let health = Health::new(
        live.model.clone(),
        live.policies.store().clone(),
        Arc::new(Metrics::new()),
    );
    let readiness = health.readiness();
    assert!(readiness.ready);
    assert_eq!(readiness.failing_watches.len(), 1);
    assert_eq!(readiness.failing_watches[0].feeds, Feeds::Policies);
    assert!(readiness.model_age_seconds.is_some_and(|age| age < 1.5));

    api.release(PACK_PARAMS);
    eventually("recovered", || live.model.failing_watches().is_empty()).await;
}

/// Readiness waits for the params of the policies found in the cluster: the first request is
/// judged with the params the cluster holds, not without them.
#[tokio::test]
async fn readiness_waits_for_the_params_of_cluster_policies() {
    let (client, api) = MockApi::start();
    serve_tuned_policy_and_params(&api);
    api.hold(PACK_PARAMS);
    let live = Live::start(client, true);
    eventually("the params list was asked for", || {
        api.counts_on(PACK_PARAMS).0 == 1
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!live.model.is_ready(), "ready before the params were listed");
    api.release(PACK_PARAMS);
    eventually("ready", || live.model.is_ready()).await;
    assert_eq!(params_of(&live).len(), 1, "ready without the params");
}
