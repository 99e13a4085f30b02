//! Unit tests of the Pod Security checks: a failing and a passing pod for every check.

use serde_json::json;

use super::*;

/// The restricted checks a pod that sets nothing fails: what restricted requires be set.
const UNSET_RESTRICTED: [&str; 4] = [
    "allowPrivilegeEscalation",
    "capabilities_restricted",
    "runAsNonRoot",
    "seccompProfile_restricted",
];

fn of_spec(spec: Value) -> Violations {
    Violations::of_pod(None, Some(&spec))
}

/// A pod every level admits: one container with all restricted settings.
fn compliant() -> Value {
    json!({
        "containers": [{
            "name": "a",
            "image": "x",
            "securityContext": {
                "allowPrivilegeEscalation": false,
                "runAsNonRoot": true,
                "seccompProfile": {"type": "RuntimeDefault"},
                "capabilities": {"drop": ["ALL"]},
            },
        }],
    })
}

/// `compliant()` with `value` set at the JSON pointer `at` (parents created as objects).
fn with(at: &str, value: Value) -> Value {
    let mut spec = compliant();
    set(&mut spec, at, value);
    spec
}

fn set(target: &mut Value, at: &str, value: Value) {
    let mut node = target;
    for key in at.trim_start_matches('/').split('/') {
        node = match node {
            Value::Array(items) => &mut items[key.parse::<usize>().unwrap()],
            other => {
                if !other.is_object() {
                    *other = json!({});
                }
                other.as_object_mut().unwrap().entry(key).or_insert(Value::Null)
            }
        };
    }
    *node = value;
}

fn ids(checks: &[Check]) -> Vec<&'static str> {
    checks.iter().map(|c| c.id()).collect()
}

/// The checks the spec fails, as IDs, in order.
fn failed(spec: Value) -> Vec<&'static str> {
    let v = of_spec(spec);
    Check::ALL
        .into_iter()
        .filter(|c| v.contains(*c))
        .map(Check::id)
        .collect()
}

#[test]
fn compliant_pod_passes_everything() {
    let v = of_spec(compliant());
    assert!(v.is_empty());
    assert!(v.allowed_at(Level::Restricted));
    assert_eq!(v.strictest_allowed(), Level::Restricted);
    assert!(v.failed_at(Level::Restricted).is_empty());
}

#[test]
fn empty_pod_is_baseline_not_restricted() {
    let v = of_spec(json!({"containers": [{"name": "a", "image": "x"}]}));
    assert!(v.allowed_at(Level::Privileged));
    assert!(v.allowed_at(Level::Baseline));
    assert!(!v.allowed_at(Level::Restricted));
    assert!(v.failed_at(Level::Baseline).is_empty());
    assert_eq!(ids(&v.failed_at(Level::Restricted)), UNSET_RESTRICTED);
    assert_eq!(v.strictest_allowed(), Level::Baseline);
}

#[test]
fn no_spec_or_no_containers_passes() {
    assert!(Violations::of_pod(None, None).is_empty());
    assert!(of_spec(json!({})).is_empty());
}

#[test]
fn levels_order_parse_and_print() {
    assert!(Level::Privileged < Level::Baseline && Level::Baseline < Level::Restricted);
    for level in [Level::Privileged, Level::Baseline, Level::Restricted] {
        assert_eq!(Level::parse(level.as_str()), Some(level));
    }
    assert_eq!(Level::parse("Restricted"), None);
    assert_eq!(Level::parse(" baseline"), None);
    assert_eq!(Level::parse(""), None);
}

#[test]
fn check_table() {
    assert_eq!(Check::ALL.len(), 19);
    let mut seen = std::collections::HashSet::new();
    for (i, check) in Check::ALL.into_iter().enumerate() {
        assert_eq!(check as usize, i, "{check:?} out of place");
        assert!(seen.insert(check.id()));
    }
    // PodSecurity's order: baseline IDs sorted, then restricted IDs sorted.
    let (baseline, restricted): (Vec<_>, Vec<_>) =
        Check::ALL.into_iter().partition(|c| c.level() == Level::Baseline);
    assert_eq!(baseline.len(), 12);
    assert!(baseline.windows(2).all(|w| w[0].id() < w[1].id()));
    assert!(restricted.windows(2).all(|w| w[0].id() < w[1].id()));
    assert_eq!(
        Check::AllowPrivilegeEscalation.reason(),
        "allowPrivilegeEscalation != false"
    );
    assert_eq!(
        Check::CapabilitiesRestricted.reason(),
        "unrestricted capabilities"
    );
    assert_eq!(Check::HostNamespaces.reason(), "host namespaces");
    assert_eq!(Check::SeccompProfileRestricted.reason(), "seccompProfile");
    assert_eq!(Check::RunAsNonRoot.reason(), "runAsNonRoot != true");
    assert_eq!(Check::RestrictedVolumes.reason(), "restricted volume types");
    assert_eq!(Check::AppArmorProfile.reason(), "forbidden AppArmor profile");
    assert_eq!(Check::ProcMountRestricted.id(), "procMount_restricted");
    assert_eq!(Check::ProcMountRestricted.level(), Level::Restricted);
}

#[test]
fn overridden_baseline_checks_leave_restricted() {
    for overridden in [
        Check::CapabilitiesBaseline,
        Check::HostPathVolumes,
        Check::ProcMount,
        Check::SeccompProfileBaseline,
    ] {
        assert!(overridden.enforced_at(Level::Baseline));
        assert!(!overridden.enforced_at(Level::Restricted), "{overridden:?}");
    }
    assert!(Check::Privileged.enforced_at(Level::Restricted));
    assert!(!Check::RunAsUser.enforced_at(Level::Baseline));
    assert!(Check::ALL.into_iter().all(|c| !c.enforced_at(Level::Privileged)));

    // A hostPath volume: hostPathVolumes at baseline, restrictedVolumes (only) at restricted.
    let v = of_spec(with(
        "/volumes",
        json!([{"name": "h", "hostPath": {"path": "/"}}]),
    ));
    assert_eq!(ids(&v.failed_at(Level::Baseline)), ["hostPathVolumes"]);
    assert_eq!(ids(&v.failed_at(Level::Restricted)), ["restrictedVolumes"]);
    assert_eq!(v.strictest_allowed(), Level::Privileged);
}

#[test]
fn host_namespaces() {
    for key in ["hostNetwork", "hostPID", "hostIPC"] {
        assert_eq!(failed(with(&format!("/{key}"), json!(true))), ["hostNamespaces"]);
        assert!(failed(with(&format!("/{key}"), json!(false))).is_empty());
    }
}

#[test]
fn privileged() {
    let spec = with("/containers/0/securityContext/privileged", json!(true));
    assert_eq!(failed(spec), ["privileged"]);
    assert!(failed(with("/containers/0/securityContext/privileged", json!(false))).is_empty());
}

#[test]
fn capabilities_baseline_and_restricted() {
    let caps = "/containers/0/securityContext/capabilities";
    // Default capabilities: baseline is fine, restricted only allows NET_BIND_SERVICE.
    let chown = of_spec(with(
        caps,
        json!({"drop": ["ALL"], "add": ["CHOWN", "NET_BIND_SERVICE"]}),
    ));
    assert!(chown.allowed_at(Level::Baseline));
    assert_eq!(
        ids(&chown.failed_at(Level::Restricted)),
        ["capabilities_restricted"]
    );
    // drop ALL + add NET_BIND_SERVICE: restricted.
    let bind = of_spec(with(caps, json!({"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]})));
    assert!(bind.allowed_at(Level::Restricted));
    // Beyond the default set: baseline fails; at restricted only capabilities_restricted.
    let admin = of_spec(with(caps, json!({"drop": ["ALL"], "add": ["SYS_ADMIN"]})));
    assert_eq!(ids(&admin.failed_at(Level::Baseline)), ["capabilities_baseline"]);
    assert_eq!(
        ids(&admin.failed_at(Level::Restricted)),
        ["capabilities_restricted"]
    );
    let net_raw = of_spec(with(caps, json!({"add": ["NET_RAW"]})));
    assert!(!net_raw.allowed_at(Level::Baseline));
    // Missing drop ALL (case-sensitive), or no capabilities at all.
    assert_eq!(
        failed(with(caps, json!({"drop": ["all"]}))),
        ["capabilities_restricted"]
    );
    assert_eq!(
        failed(with(caps, json!({"drop": ["NET_RAW"]}))),
        ["capabilities_restricted"]
    );
    assert_eq!(failed(with(caps, Value::Null)), ["capabilities_restricted"]);
}

#[test]
fn host_path_volumes_and_restricted_volumes() {
    let allowed = json!([
        {"name": "a1", "emptyDir": {}},
        {"name": "a2", "secret": {"secretName": "s"}},
        {"name": "a3", "persistentVolumeClaim": {"claimName": "c"}},
        {"name": "a4", "downwardAPI": {}},
        {"name": "a5", "configMap": {"name": "m"}},
        {"name": "a6", "projected": {"sources": []}},
        {"name": "a7", "csi": {"driver": "d"}},
        {"name": "a8", "ephemeral": {}},
        {"name": "a9", "image": {"reference": "r"}},
    ]);
    assert!(failed(with("/volumes", allowed)).is_empty());
    for source in [
        "nfs",
        "gitRepo",
        "iscsi",
        "awsElasticBlockStore",
        "flexVolume",
        "cephfs",
        "rbd",
    ] {
        let spec = with("/volumes", json!([{"name": "b", source: {}}]));
        assert_eq!(failed(spec), ["restrictedVolumes"], "{source}");
    }
    // A volume with no known source is restricted too.
    assert_eq!(
        failed(with("/volumes", json!([{"name": "c"}]))),
        ["restrictedVolumes"]
    );
    assert_eq!(
        failed(with(
            "/volumes",
            json!([{"name": "h", "hostPath": {"path": "/var"}}])
        )),
        ["hostPathVolumes", "restrictedVolumes"]
    );
}

#[test]
fn host_ports() {
    let ports = "/containers/0/ports";
    assert_eq!(
        failed(with(ports, json!([{"containerPort": 80, "hostPort": 8080}]))),
        ["hostPorts"]
    );
    assert!(failed(with(ports, json!([{"containerPort": 80, "hostPort": 0}]))).is_empty());
    assert!(failed(with(ports, json!([{"containerPort": 80}]))).is_empty());
}

#[test]
fn host_probes_and_lifecycle() {
    let c = "/containers/0";
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        let spec = with(
            &format!("{c}/{probe}"),
            json!({"httpGet": {"host": "127.0.0.1", "port": 80}}),
        );
        assert_eq!(failed(spec), ["hostProbesAndHostLifecycle"], "{probe}");
        let spec = with(
            &format!("{c}/{probe}"),
            json!({"tcpSocket": {"host": "::1", "port": 80}}),
        );
        assert_eq!(failed(spec), ["hostProbesAndHostLifecycle"], "{probe}");
        let spec = with(
            &format!("{c}/{probe}"),
            json!({"httpGet": {"port": 80}, "tcpSocket": {"host": ""}}),
        );
        assert!(failed(spec).is_empty(), "{probe}");
    }
    for hook in ["postStart", "preStop"] {
        let spec = with(
            &format!("{c}/lifecycle/{hook}"),
            json!({"httpGet": {"host": "a.com"}}),
        );
        assert_eq!(failed(spec), ["hostProbesAndHostLifecycle"], "{hook}");
        let spec = with(
            &format!("{c}/lifecycle/{hook}"),
            json!({"tcpSocket": {"host": "b.com"}}),
        );
        assert_eq!(failed(spec), ["hostProbesAndHostLifecycle"], "{hook}");
        let spec = with(
            &format!("{c}/lifecycle/{hook}"),
            json!({"exec": {"command": ["true"]}}),
        );
        assert!(failed(spec).is_empty(), "{hook}");
    }
}

#[test]
fn app_armor_profile() {
    for allowed in ["RuntimeDefault", "Localhost"] {
        let profile = json!({"type": allowed, "localhostProfile": "p"});
        assert!(failed(with("/securityContext/appArmorProfile", profile.clone())).is_empty());
        assert!(failed(with("/containers/0/securityContext/appArmorProfile", profile)).is_empty());
    }
    let unconfined = json!({"type": "Unconfined"});
    assert_eq!(
        failed(with("/securityContext/appArmorProfile", unconfined.clone())),
        ["appArmorProfile"]
    );
    assert_eq!(
        failed(with("/containers/0/securityContext/appArmorProfile", unconfined)),
        ["appArmorProfile"]
    );

    let prefix = APP_ARMOR_ANNOTATION_PREFIX;
    let with_annotation = |value: &str| {
        let metadata = json!({"annotations": {format!("{prefix}a"): value, "env": "prod"}});
        Violations::of_pod(Some(&metadata), Some(&compliant()))
    };
    assert!(with_annotation("runtime/default").is_empty());
    assert!(with_annotation("localhost/sec-profile01").is_empty());
    assert!(with_annotation("").is_empty());
    assert_eq!(
        ids(&with_annotation("unconfined").failed_at(Level::Baseline)),
        ["appArmorProfile"]
    );
    // Other annotations are not AppArmor's.
    let metadata = json!({"annotations": {"apparmor": "unconfined"}});
    assert!(Violations::of_pod(Some(&metadata), Some(&compliant())).is_empty());
}

#[test]
fn se_linux_options() {
    for ty in [
        "",
        "container_t",
        "container_init_t",
        "container_kvm_t",
        "container_engine_t",
    ] {
        let options = json!({"type": ty, "level": "s0:c123,c456"});
        assert!(
            failed(with("/securityContext/seLinuxOptions", options.clone())).is_empty(),
            "{ty}"
        );
        assert!(
            failed(with("/containers/0/securityContext/seLinuxOptions", options)).is_empty(),
            "{ty}"
        );
    }
    for bad in [
        json!({"type": "spc_t"}),
        json!({"user": "bar"}),
        json!({"role": "baz"}),
    ] {
        assert_eq!(
            failed(with("/securityContext/seLinuxOptions", bad.clone())),
            ["seLinuxOptions"]
        );
        assert_eq!(
            failed(with("/containers/0/securityContext/seLinuxOptions", bad)),
            ["seLinuxOptions"]
        );
    }
}

#[test]
fn proc_mount_baseline_and_restricted() {
    let at = "/containers/0/securityContext/procMount";
    assert!(failed(with(at, json!("Default"))).is_empty());
    let unmasked = of_spec(with(at, json!("Unmasked")));
    assert_eq!(ids(&unmasked.failed_at(Level::Baseline)), ["procMount"]);
    assert_eq!(
        ids(&unmasked.failed_at(Level::Restricted)),
        ["procMount_restricted"]
    );
    // In a user namespace baseline relaxes procMount; restricted does not.
    let mut spec = with(at, json!("Unmasked"));
    set(&mut spec, "/hostUsers", json!(false));
    let userns = of_spec(spec);
    assert!(userns.allowed_at(Level::Baseline));
    assert_eq!(
        ids(&userns.failed_at(Level::Restricted)),
        ["procMount_restricted"]
    );
    assert_eq!(userns.strictest_allowed(), Level::Baseline);
}

#[test]
fn seccomp_baseline() {
    let empty = json!({"containers": [{"name": "a", "image": "x"}]});
    let mut spec = empty.clone();
    set(
        &mut spec,
        "/securityContext/seccompProfile",
        json!({"type": "Unconfined"}),
    );
    assert!(!of_spec(spec).allowed_at(Level::Baseline));
    let mut spec = empty.clone();
    set(
        &mut spec,
        "/containers/0/securityContext/seccompProfile",
        json!({"type": "Unconfined"}),
    );
    assert!(
        of_spec(spec.clone())
            .failed_at(Level::Baseline)
            .contains(&Check::SeccompProfileBaseline)
    );
    // At restricted the restricted check stands in for it.
    let restricted = of_spec(spec).failed_at(Level::Restricted);
    assert!(restricted.contains(&Check::SeccompProfileRestricted));
    assert!(!restricted.contains(&Check::SeccompProfileBaseline));
    let mut spec = empty;
    set(
        &mut spec,
        "/securityContext/seccompProfile",
        json!({"type": "Localhost", "localhostProfile": "p"}),
    );
    assert!(of_spec(spec).allowed_at(Level::Baseline));
}

#[test]
fn seccomp_restricted_pod_and_container_levels() {
    // Set at the pod only: enough.
    let mut spec = with("/containers/0/securityContext/seccompProfile", Value::Null);
    assert_eq!(failed(spec.clone()), ["seccompProfile_restricted"]);
    set(
        &mut spec,
        "/securityContext/seccompProfile",
        json!({"type": "Localhost", "localhostProfile": "p"}),
    );
    assert!(failed(spec).is_empty());
    // Pod Unconfined fails even if every container sets its own.
    let spec = with("/securityContext/seccompProfile", json!({"type": "Unconfined"}));
    assert_eq!(
        failed(spec),
        ["seccompProfile_baseline", "seccompProfile_restricted"]
    );
    // Pod RuntimeDefault, one container Unconfined.
    let mut spec = with(
        "/securityContext/seccompProfile",
        json!({"type": "RuntimeDefault"}),
    );
    set(
        &mut spec,
        "/containers/0/securityContext/seccompProfile",
        json!({"type": "Unconfined"}),
    );
    assert_eq!(
        failed(spec),
        ["seccompProfile_baseline", "seccompProfile_restricted"]
    );
    // A profile object without a type is not an allowed profile.
    let spec = with("/containers/0/securityContext/seccompProfile", json!({}));
    assert_eq!(
        failed(spec),
        ["seccompProfile_baseline", "seccompProfile_restricted"]
    );
}

#[test]
fn sysctls() {
    let safe = json!([
        {"name": "net.ipv4.ip_local_reserved_ports", "value": "1024-4999"},
        {"name": "net.ipv4.tcp_keepalive_time", "value": "7200"},
        {"name": "net.ipv4.tcp_rmem", "value": "4096 87380 16777216"},
        {"name": "kernel.shm_rmid_forced", "value": "1"},
    ]);
    assert!(failed(with("/securityContext/sysctls", safe)).is_empty());
    let unsafe_ = json!([{"name": "kernel.msgmax", "value": "1"}]);
    assert_eq!(failed(with("/securityContext/sysctls", unsafe_)), ["sysctls"]);
    assert_eq!(
        failed(with("/securityContext/sysctls", json!([{"value": "1"}]))),
        ["sysctls"]
    );
}

#[test]
fn windows_host_process() {
    let on = json!({"hostProcess": true});
    assert_eq!(
        failed(with("/securityContext/windowsOptions", on.clone())),
        ["windowsHostProcess"]
    );
    assert_eq!(
        failed(with("/containers/0/securityContext/windowsOptions", on)),
        ["windowsHostProcess"]
    );
    let off = json!({"hostProcess": false, "runAsUserName": "u"});
    assert!(failed(with("/securityContext/windowsOptions", off)).is_empty());
}

#[test]
fn allow_privilege_escalation() {
    let at = "/containers/0/securityContext/allowPrivilegeEscalation";
    assert_eq!(failed(with(at, json!(true))), ["allowPrivilegeEscalation"]);
    assert_eq!(failed(with(at, Value::Null)), ["allowPrivilegeEscalation"]);
    assert!(failed(with(at, json!(false))).is_empty());
}

#[test]
fn run_as_non_root_pod_and_container_levels() {
    let at = "/containers/0/securityContext/runAsNonRoot";
    // Set at the pod only: enough.
    let mut spec = with(at, Value::Null);
    assert_eq!(failed(spec.clone()), ["runAsNonRoot"]);
    set(&mut spec, "/securityContext/runAsNonRoot", json!(true));
    assert!(failed(spec.clone()).is_empty());
    // The pod says true, one container overrides it with false.
    set(&mut spec, at, json!(false));
    assert_eq!(failed(spec), ["runAsNonRoot"]);
    // The pod says false: every container setting true does not help.
    let spec = with("/securityContext/runAsNonRoot", json!(false));
    assert_eq!(failed(spec), ["runAsNonRoot"]);
    // A pod with its own user namespace is exempt.
    let mut spec = with(at, json!(false));
    set(&mut spec, "/hostUsers", json!(false));
    assert!(failed(spec).is_empty());
}

#[test]
fn run_as_user() {
    assert_eq!(
        failed(with("/securityContext/runAsUser", json!(0))),
        ["runAsUser"]
    );
    assert_eq!(
        failed(with("/containers/0/securityContext/runAsUser", json!(0))),
        ["runAsUser"]
    );
    assert!(failed(with("/securityContext/runAsUser", json!(1000))).is_empty());
    let mut spec = with("/securityContext/runAsUser", json!(0));
    set(&mut spec, "/hostUsers", json!(false));
    assert!(failed(spec.clone()).is_empty());
    // hostUsers: true is no user namespace.
    set(&mut spec, "/hostUsers", json!(true));
    assert_eq!(failed(spec), ["runAsUser"]);
}

#[test]
fn windows_pods_are_exempt_where_podsecurity_exempts_them() {
    let empty = json!({"os": {"name": "windows"}, "containers": [{"name": "a", "image": "x"}]});
    // runAsNonRoot has no Windows exemption.
    assert_eq!(
        ids(&of_spec(empty).failed_at(Level::Restricted)),
        ["runAsNonRoot"]
    );
    let linux = json!({"os": {"name": "linux"}, "containers": [{"name": "a", "image": "x"}]});
    assert_eq!(of_spec(linux).failed_at(Level::Restricted).len(), 4);
    // The overridden baseline check goes with it at restricted, not at baseline.
    let spec = json!({
        "os": {"name": "windows"},
        "securityContext": {"runAsNonRoot": true},
        "containers": [{"name": "a", "securityContext": {"capabilities": {"add": ["SYS_ADMIN"]}}}],
    });
    let v = of_spec(spec);
    assert_eq!(ids(&v.failed_at(Level::Baseline)), ["capabilities_baseline"]);
    assert!(v.allowed_at(Level::Restricted));
    assert_eq!(v.strictest_allowed(), Level::Restricted);
}

#[test]
fn init_and_ephemeral_containers_are_visited() {
    for list in ["initContainers", "ephemeralContainers"] {
        let mut spec = compliant();
        set(
            &mut spec,
            &format!("/{list}"),
            json!([{"name": "b", "securityContext": {"privileged": true}}]),
        );
        let v = of_spec(spec);
        assert!(
            v.failed_at(Level::Baseline).contains(&Check::Privileged),
            "{list}"
        );
        assert_eq!(v.failed_at(Level::Restricted).len(), 5, "{list}");
    }
}

#[test]
fn wrong_types_read_as_absent() {
    let spec = json!({
        "hostNetwork": "true",
        "hostPID": 1,
        "hostUsers": "false",
        "os": "windows",
        "securityContext": {
            "runAsNonRoot": "true",
            "runAsUser": "0",
            "seccompProfile": "RuntimeDefault",
            "seLinuxOptions": ["spc_t"],
            "sysctls": {"name": "kernel.msgmax"},
            "windowsOptions": {"hostProcess": "true"},
            "appArmorProfile": 7,
        },
        "volumes": [null, 3, "x", {"name": "v", "hostPath": "/", "emptyDir": {}}],
        "initContainers": {"name": "i"},
        "ephemeralContainers": [1, [], null],
        "containers": [
            "not a container",
            {
                "name": 5,
                "ports": [{"hostPort": "80"}, {"hostPort": 80.5}, 9],
                "livenessProbe": {"httpGet": {"host": 1}},
                "lifecycle": [],
                "securityContext": {
                    "privileged": 1,
                    "procMount": false,
                    "runAsUser": 0.0,
                    "capabilities": {"add": [1, null, {"x": 1}], "drop": "ALL"},
                    "seccompProfile": {"type": 3},
                },
            },
        ],
    });
    let v = of_spec(spec);
    // Only what reads as a real value counts: the missing drop ALL, the typeless seccomp
    // profile, and the restricted checks' unset requirements.
    assert_eq!(ids(&v.failed_at(Level::Restricted)), UNSET_RESTRICTED);
    assert_eq!(ids(&v.failed_at(Level::Baseline)), ["seccompProfile_baseline"]);

    let metadata = json!({"annotations": {"container.apparmor.security.beta.kubernetes.io/a": 1}});
    assert!(Violations::of_pod(Some(&metadata), Some(&compliant())).is_empty());
    for odd in [
        json!(null),
        json!(1),
        json!("spec"),
        json!([]),
        json!({"containers": "a"}),
    ] {
        assert!(Violations::of_pod(Some(&odd), Some(&odd)).is_empty());
    }
}

#[test]
fn violations_are_four_bytes() {
    assert_eq!(std::mem::size_of::<Violations>(), 4);
    assert_eq!(Violations::default(), Violations::of_pod(None, None));
}
