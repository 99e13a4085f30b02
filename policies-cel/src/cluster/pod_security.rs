//! Pod Security Standards: which checks of kube-apiserver's PodSecurity admission a pod fails,
//! and so which levels (`privileged`, `baseline`, `restricted`) admit it.
//!
//! Each check behaves as its newest version does (PodSecurity's `latest`, Kubernetes v1.36):
//! the Windows exemptions (`spec.os.name: windows`) of the restricted checks that have them,
//! the user-namespace relaxations (`spec.hostUsers: false`), pod-level security context
//! settings standing in for container-level ones where PodSecurity lets them, and every
//! container visited (init, regular and ephemeral). At `restricted`, a restricted check that
//! overrides a baseline check replaces it (`capabilities_restricted` for
//! `capabilities_baseline`, `seccompProfile_restricted` for `seccompProfile_baseline`,
//! `restrictedVolumes` for `hostPathVolumes`, `procMount_restricted` for `procMount`).
//!
//! A pod is read leniently: a field of an unexpected type reads as absent, a list entry that
//! is not an object is skipped, and a missing string inside an object reads as `""` (Go's zero
//! value, as the API server's decoding would leave it). Evaluation allocates nothing; its
//! result is a 4-byte [`Violations`] set kept for every pod of the model.
//!
//! Not modelled: older policy versions (a namespace pinned by `enforce-version`), the cluster's
//! exemptions (users, runtime classes, namespaces), and the per-pod detail text PodSecurity
//! adds to its reasons.

use serde_json::{Map, Value};

type Object = Map<String, Value>;

/// A Pod Security Standards level, least strict first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    Privileged,
    Baseline,
    Restricted,
}

impl Level {
    /// The level a `pod-security.kubernetes.io/enforce` label value names (exact,
    /// case-sensitive, as `api.ParseLevel`); None for anything else.
    pub fn parse(value: &str) -> Option<Level> {
        match value {
            "privileged" => Some(Level::Privileged),
            "baseline" => Some(Level::Baseline),
            "restricted" => Some(Level::Restricted),
            _ => None,
        }
    }

    /// The label value: "privileged", "baseline", "restricted".
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Privileged => "privileged",
            Level::Baseline => "baseline",
            Level::Restricted => "restricted",
        }
    }
}

/// One check of the standards.
///
/// Declared in the order PodSecurity runs and lists them: baseline checks by ID, then
/// restricted checks by ID. The declaration order is also the bit of each in [`Violations`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Check {
    /// `appArmorProfile`: only the runtime default or a localhost AppArmor profile.
    AppArmorProfile,
    /// `capabilities_baseline`: only capabilities of the container runtime's default set added.
    CapabilitiesBaseline,
    /// `hostNamespaces`: no host network, PID or IPC namespace.
    HostNamespaces,
    /// `hostPathVolumes`: no hostPath volume.
    HostPathVolumes,
    /// `hostPorts`: no host port.
    HostPorts,
    /// `hostProbesAndHostLifecycle`: no `host` in probes and lifecycle handlers.
    HostProbesAndHostLifecycle,
    /// `privileged`: no privileged container.
    Privileged,
    /// `procMount`: the default `/proc` mask, unless the pod has its own user namespace.
    ProcMount,
    /// `seLinuxOptions`: only container SELinux types, no user or role.
    SeLinuxOptions,
    /// `seccompProfile_baseline`: a seccomp profile, when set, is the runtime default or a
    /// localhost one.
    SeccompProfileBaseline,
    /// `sysctls`: only the namespaced, isolated sysctls.
    Sysctls,
    /// `windowsHostProcess`: no Windows host process.
    WindowsHostProcess,
    /// `allowPrivilegeEscalation`: every container sets `allowPrivilegeEscalation: false`.
    AllowPrivilegeEscalation,
    /// `capabilities_restricted`: every container drops ALL and adds NET_BIND_SERVICE at most.
    CapabilitiesRestricted,
    /// `procMount_restricted`: the default `/proc` mask, user namespace or not.
    ProcMountRestricted,
    /// `restrictedVolumes`: only the volume types that expose nothing of the node.
    RestrictedVolumes,
    /// `runAsNonRoot`: every container runs as non-root (its own setting or the pod's).
    RunAsNonRoot,
    /// `runAsUser`: no `runAsUser: 0`.
    RunAsUser,
    /// `seccompProfile_restricted`: every container has the runtime default or a localhost
    /// seccomp profile (its own or the pod's).
    SeccompProfileRestricted,
}

impl Check {
    /// Every check, in PodSecurity's order (baseline then restricted, each by ID).
    const ALL: [Check; 19] = [
        Check::AppArmorProfile,
        Check::CapabilitiesBaseline,
        Check::HostNamespaces,
        Check::HostPathVolumes,
        Check::HostPorts,
        Check::HostProbesAndHostLifecycle,
        Check::Privileged,
        Check::ProcMount,
        Check::SeLinuxOptions,
        Check::SeccompProfileBaseline,
        Check::Sysctls,
        Check::WindowsHostProcess,
        Check::AllowPrivilegeEscalation,
        Check::CapabilitiesRestricted,
        Check::ProcMountRestricted,
        Check::RestrictedVolumes,
        Check::RunAsNonRoot,
        Check::RunAsUser,
        Check::SeccompProfileRestricted,
    ];

    /// The check's ID as PodSecurity names it ("allowPrivilegeEscalation",
    /// "capabilities_restricted", ...).
    pub fn id(self) -> &'static str {
        match self {
            Check::AppArmorProfile => "appArmorProfile",
            Check::CapabilitiesBaseline => "capabilities_baseline",
            Check::HostNamespaces => "hostNamespaces",
            Check::HostPathVolumes => "hostPathVolumes",
            Check::HostPorts => "hostPorts",
            Check::HostProbesAndHostLifecycle => "hostProbesAndHostLifecycle",
            Check::Privileged => "privileged",
            Check::ProcMount => "procMount",
            Check::SeLinuxOptions => "seLinuxOptions",
            Check::SeccompProfileBaseline => "seccompProfile_baseline",
            Check::Sysctls => "sysctls",
            Check::WindowsHostProcess => "windowsHostProcess",
            Check::AllowPrivilegeEscalation => "allowPrivilegeEscalation",
            Check::CapabilitiesRestricted => "capabilities_restricted",
            Check::ProcMountRestricted => "procMount_restricted",
            Check::RestrictedVolumes => "restrictedVolumes",
            Check::RunAsNonRoot => "runAsNonRoot",
            Check::RunAsUser => "runAsUser",
            Check::SeccompProfileRestricted => "seccompProfile_restricted",
        }
    }

    /// The level that enforces it.
    pub fn level(self) -> Level {
        match self {
            Check::AllowPrivilegeEscalation
            | Check::CapabilitiesRestricted
            | Check::ProcMountRestricted
            | Check::RestrictedVolumes
            | Check::RunAsNonRoot
            | Check::RunAsUser
            | Check::SeccompProfileRestricted => Level::Restricted,
            _ => Level::Baseline,
        }
    }

    /// PodSecurity's ForbiddenReason for it (e.g. "allowPrivilegeEscalation != false",
    /// "unrestricted capabilities", "host namespaces"), in the singular where PodSecurity
    /// pluralizes.
    pub fn reason(self) -> &'static str {
        match self {
            Check::AppArmorProfile => "forbidden AppArmor profile",
            Check::CapabilitiesBaseline => "non-default capabilities",
            Check::HostNamespaces => "host namespaces",
            Check::HostPathVolumes => "hostPath volumes",
            Check::HostPorts => "hostPort",
            Check::HostProbesAndHostLifecycle => "probe or lifecycle host",
            Check::Privileged => "privileged",
            Check::ProcMount | Check::ProcMountRestricted => "procMount",
            Check::SeLinuxOptions => "seLinuxOptions",
            Check::SeccompProfileBaseline | Check::SeccompProfileRestricted => "seccompProfile",
            Check::Sysctls => "forbidden sysctls",
            Check::WindowsHostProcess => "hostProcess",
            Check::AllowPrivilegeEscalation => "allowPrivilegeEscalation != false",
            Check::CapabilitiesRestricted => "unrestricted capabilities",
            Check::RestrictedVolumes => "restricted volume types",
            Check::RunAsNonRoot => "runAsNonRoot != true",
            Check::RunAsUser => "runAsUser=0",
        }
    }

    /// Its bit in [`Violations`].
    const fn bit(self) -> u32 {
        1 << self as u32
    }

    /// Whether `level` runs it: baseline checks at baseline and restricted, except those a
    /// restricted check overrides there; restricted checks at restricted only.
    fn enforced_at(self, level: Level) -> bool {
        match level {
            Level::Privileged => false,
            Level::Baseline => BASELINE & self.bit() != 0,
            Level::Restricted => RESTRICTED & self.bit() != 0,
        }
    }

    /// Whether the pod fails it.
    fn fails(self, pod: &Pod<'_>) -> bool {
        match self {
            Check::AppArmorProfile => app_armor_profile(pod),
            Check::CapabilitiesBaseline => capabilities_baseline(pod),
            Check::HostNamespaces => host_namespaces(pod),
            Check::HostPathVolumes => host_path_volumes(pod),
            Check::HostPorts => host_ports(pod),
            Check::HostProbesAndHostLifecycle => host_probes_and_lifecycle(pod),
            Check::Privileged => privileged(pod),
            Check::ProcMount => !pod.user_namespace && proc_mount(pod),
            Check::SeLinuxOptions => se_linux_options(pod),
            Check::SeccompProfileBaseline => seccomp_profile_baseline(pod),
            Check::Sysctls => sysctls(pod),
            Check::WindowsHostProcess => windows_host_process(pod),
            Check::AllowPrivilegeEscalation => !pod.windows && allow_privilege_escalation(pod),
            Check::CapabilitiesRestricted => !pod.windows && capabilities_restricted(pod),
            Check::ProcMountRestricted => proc_mount(pod),
            Check::RestrictedVolumes => restricted_volumes(pod),
            Check::RunAsNonRoot => !pod.user_namespace && run_as_non_root(pod),
            Check::RunAsUser => !pod.user_namespace && run_as_user(pod),
            Check::SeccompProfileRestricted => !pod.windows && seccomp_profile_restricted(pod),
        }
    }
}

/// The bits of the checks a level runs.
const fn mask(checks: &[Check]) -> u32 {
    let mut bits = 0;
    let mut i = 0;
    while i < checks.len() {
        bits |= checks[i].bit();
        i += 1;
    }
    bits
}

/// The checks `baseline` runs.
const BASELINE: u32 = mask(&[
    Check::AppArmorProfile,
    Check::CapabilitiesBaseline,
    Check::HostNamespaces,
    Check::HostPathVolumes,
    Check::HostPorts,
    Check::HostProbesAndHostLifecycle,
    Check::Privileged,
    Check::ProcMount,
    Check::SeLinuxOptions,
    Check::SeccompProfileBaseline,
    Check::Sysctls,
    Check::WindowsHostProcess,
]);

/// The baseline checks a restricted check overrides at `restricted`.
const OVERRIDDEN: u32 = mask(&[
    Check::CapabilitiesBaseline,
    Check::HostPathVolumes,
    Check::ProcMount,
    Check::SeccompProfileBaseline,
]);

/// The checks `restricted` runs: the restricted ones and the baseline ones not overridden.
const RESTRICTED: u32 = (BASELINE & !OVERRIDDEN)
    | mask(&[
        Check::AllowPrivilegeEscalation,
        Check::CapabilitiesRestricted,
        Check::ProcMountRestricted,
        Check::RestrictedVolumes,
        Check::RunAsNonRoot,
        Check::RunAsUser,
        Check::SeccompProfileRestricted,
    ]);

/// The checks a pod fails, as a bit set (Copy, 4 bytes: it is kept for every pod in the model).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Violations(u32);

impl Violations {
    /// Evaluates every check on a pod (`metadata` and `spec` of its JSON; either may be None).
    pub fn of_pod(metadata: Option<&Value>, spec: Option<&Value>) -> Self {
        let pod = Pod::new(metadata, spec);
        Violations(
            Check::ALL
                .iter()
                .filter(|check| check.fails(&pod))
                .fold(0, |bits, check| bits | check.bit()),
        )
    }

    /// No check failed.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// PodSecurity at `level` (latest version) admits the pod.
    pub fn allowed_at(self, level: Level) -> bool {
        match level {
            Level::Privileged => true,
            Level::Baseline => self.0 & BASELINE == 0,
            Level::Restricted => self.0 & RESTRICTED == 0,
        }
    }

    /// The checks `level` enforces that the pod fails (overridden baseline checks left out at
    /// restricted), in the order PodSecurity lists them.
    pub fn failed_at(self, level: Level) -> Vec<Check> {
        Check::ALL
            .into_iter()
            .filter(|check| check.enforced_at(level) && self.contains(*check))
            .collect()
    }

    /// The strictest level that admits the pod.
    ///
    /// Overrides make admission not quite monotonic: a Windows pod adding a capability fails
    /// `capabilities_baseline` but passes `capabilities_restricted` (Windows pods are exempt
    /// from it), so `restricted` admits it while `baseline` does not (the API server rejects
    /// such a pod, but a snapshot may hold one). The answer is then `Restricted`.
    pub fn strictest_allowed(self) -> Level {
        [Level::Restricted, Level::Baseline]
            .into_iter()
            .find(|level| self.allowed_at(*level))
            .unwrap_or(Level::Privileged)
    }

    /// The pod fails `check`.
    fn contains(self, check: Check) -> bool {
        self.0 & check.bit() != 0
    }
}

/// The parts of a pod the checks read, found once.
#[derive(Debug)]
struct Pod<'a> {
    annotations: Option<&'a Object>,
    spec: Option<&'a Object>,
    /// `spec.securityContext`.
    security_context: Option<&'a Object>,
    /// `spec.os.name` is `windows`.
    windows: bool,
    /// `spec.hostUsers` is `false`: the pod has its own user namespace.
    user_namespace: bool,
}

impl<'a> Pod<'a> {
    fn new(metadata: Option<&'a Value>, spec: Option<&'a Value>) -> Self {
        let spec = spec.and_then(Value::as_object);
        Pod {
            annotations: object(metadata.and_then(Value::as_object), "annotations"),
            spec,
            security_context: object(spec, "securityContext"),
            windows: text(object(spec, "os"), "name") == Some("windows"),
            user_namespace: flag(spec, "hostUsers") == Some(false),
        }
    }

    /// Every container, as PodSecurity visits them: init containers, containers, ephemeral
    /// containers.
    fn containers(&self) -> impl Iterator<Item = Container<'a>> + use<'a> {
        let spec = self.spec;
        ["initContainers", "containers", "ephemeralContainers"]
            .into_iter()
            .flat_map(move |list| objects(spec, list))
            .map(|fields| Container {
                fields,
                security_context: object(Some(fields), "securityContext"),
            })
    }

    /// `spec.volumes`.
    fn volumes(&self) -> impl Iterator<Item = &'a Object> + use<'a> {
        objects(self.spec, "volumes")
    }
}

/// One container of a pod.
#[derive(Debug, Clone, Copy)]
struct Container<'a> {
    fields: &'a Object,
    /// Its `securityContext`.
    security_context: Option<&'a Object>,
}

impl<'a> Container<'a> {
    /// An object of its `securityContext`.
    fn context(&self, key: &str) -> Option<&'a Object> {
        object(self.security_context, key)
    }
}

// Lenient readers: a missing parent, a missing key and a value of another type all read as
// absent.

fn object<'a>(parent: Option<&'a Object>, key: &str) -> Option<&'a Object> {
    parent?.get(key)?.as_object()
}

fn flag(parent: Option<&Object>, key: &str) -> Option<bool> {
    parent?.get(key)?.as_bool()
}

fn text<'a>(parent: Option<&'a Object>, key: &str) -> Option<&'a str> {
    parent?.get(key)?.as_str()
}

fn integer(parent: Option<&Object>, key: &str) -> Option<i64> {
    parent?.get(key)?.as_i64()
}

/// The entries of a list (none if it is absent or not a list).
fn entries<'a>(parent: Option<&'a Object>, key: &str) -> std::slice::Iter<'a, Value> {
    parent
        .and_then(|parent| parent.get(key))
        .and_then(Value::as_array)
        .map_or_else(|| [].iter(), |list| list.iter())
}

/// The object entries of a list.
fn objects<'a>(parent: Option<&'a Object>, key: &str) -> impl Iterator<Item = &'a Object> + use<'a> {
    entries(parent, key).filter_map(Value::as_object)
}

/// The string entries of a list.
fn strings<'a>(parent: Option<&'a Object>, key: &str) -> impl Iterator<Item = &'a str> + use<'a> {
    entries(parent, key).filter_map(Value::as_str)
}

/// A string field of an object that is there, `""` when unset (Go's zero value).
fn text_or_empty<'a>(parent: &'a Object, key: &str) -> &'a str {
    text(Some(parent), key).unwrap_or("")
}

// Baseline checks.

/// The deprecated per-container AppArmor annotations.
const APP_ARMOR_ANNOTATION_PREFIX: &str = "container.apparmor.security.beta.kubernetes.io/";

fn app_armor_type_allowed(profile: &Object) -> bool {
    matches!(text_or_empty(profile, "type"), "RuntimeDefault" | "Localhost")
}

fn app_armor_profile(pod: &Pod<'_>) -> bool {
    let bad_annotation = pod.annotations.is_some_and(|annotations| {
        annotations.iter().any(|(key, value)| {
            key.starts_with(APP_ARMOR_ANNOTATION_PREFIX)
                && value.as_str().is_some_and(|value| {
                    !(value.is_empty() || value == "runtime/default" || value.starts_with("localhost/"))
                })
        })
    });
    bad_annotation
        || object(pod.security_context, "appArmorProfile").is_some_and(|p| !app_armor_type_allowed(p))
        || pod.containers().any(|c| {
            c.context("appArmorProfile")
                .is_some_and(|p| !app_armor_type_allowed(p))
        })
}

/// The capabilities container runtimes grant by default, which baseline lets a container add.
const DEFAULT_CAPABILITIES: [&str; 13] = [
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
];

fn capabilities_baseline(pod: &Pod<'_>) -> bool {
    pod.containers().any(|c| {
        strings(c.context("capabilities"), "add").any(|added| !DEFAULT_CAPABILITIES.contains(&added))
    })
}

fn host_namespaces(pod: &Pod<'_>) -> bool {
    ["hostNetwork", "hostPID", "hostIPC"]
        .into_iter()
        .any(|key| flag(pod.spec, key) == Some(true))
}

fn host_path_volumes(pod: &Pod<'_>) -> bool {
    pod.volumes()
        .any(|volume| object(Some(volume), "hostPath").is_some())
}

fn host_ports(pod: &Pod<'_>) -> bool {
    pod.containers().any(|c| {
        objects(Some(c.fields), "ports").any(|port| integer(Some(port), "hostPort").is_some_and(|p| p != 0))
    })
}

/// A probe or lifecycle handler names a host for its HTTP GET or TCP socket.
fn handler_has_host(handler: Option<&Object>) -> bool {
    ["httpGet", "tcpSocket"]
        .into_iter()
        .any(|action| text(object(handler, action), "host").is_some_and(|host| !host.is_empty()))
}

fn host_probes_and_lifecycle(pod: &Pod<'_>) -> bool {
    pod.containers().any(|c| {
        let lifecycle = object(Some(c.fields), "lifecycle");
        ["livenessProbe", "readinessProbe", "startupProbe"]
            .into_iter()
            .any(|probe| handler_has_host(object(Some(c.fields), probe)))
            || ["postStart", "preStop"]
                .into_iter()
                .any(|hook| handler_has_host(object(lifecycle, hook)))
    })
}

fn privileged(pod: &Pod<'_>) -> bool {
    pod.containers()
        .any(|c| flag(c.security_context, "privileged") == Some(true))
}

/// A container sets a `procMount` other than `Default` (both procMount checks; the baseline one
/// is relaxed for pods with their own user namespace by its caller).
fn proc_mount(pod: &Pod<'_>) -> bool {
    pod.containers()
        .any(|c| text(c.security_context, "procMount").is_some_and(|m| m != "Default"))
}

fn se_linux_options_forbidden(options: &Object) -> bool {
    !matches!(
        text_or_empty(options, "type"),
        "" | "container_t" | "container_init_t" | "container_kvm_t" | "container_engine_t"
    ) || !text_or_empty(options, "user").is_empty()
        || !text_or_empty(options, "role").is_empty()
}

fn se_linux_options(pod: &Pod<'_>) -> bool {
    object(pod.security_context, "seLinuxOptions").is_some_and(se_linux_options_forbidden)
        || pod.containers().any(|c| {
            c.context("seLinuxOptions")
                .is_some_and(se_linux_options_forbidden)
        })
}

fn seccomp_type_allowed(profile: &Object) -> bool {
    matches!(text_or_empty(profile, "type"), "RuntimeDefault" | "Localhost")
}

fn seccomp_profile_baseline(pod: &Pod<'_>) -> bool {
    object(pod.security_context, "seccompProfile").is_some_and(|p| !seccomp_type_allowed(p))
        || pod.containers().any(|c| {
            c.context("seccompProfile")
                .is_some_and(|p| !seccomp_type_allowed(p))
        })
}

/// The sysctls baseline allows: namespaced, and isolated from other pods.
const SAFE_SYSCTLS: [&str; 12] = [
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
];

fn sysctls(pod: &Pod<'_>) -> bool {
    objects(pod.security_context, "sysctls")
        .any(|sysctl| !SAFE_SYSCTLS.contains(&text_or_empty(sysctl, "name")))
}

fn host_process(security_context: Option<&Object>) -> bool {
    flag(object(security_context, "windowsOptions"), "hostProcess") == Some(true)
}

fn windows_host_process(pod: &Pod<'_>) -> bool {
    host_process(pod.security_context) || pod.containers().any(|c| host_process(c.security_context))
}

// Restricted checks.

fn allow_privilege_escalation(pod: &Pod<'_>) -> bool {
    pod.containers()
        .any(|c| flag(c.security_context, "allowPrivilegeEscalation") != Some(false))
}

fn capabilities_restricted(pod: &Pod<'_>) -> bool {
    pod.containers().any(|c| match c.context("capabilities") {
        None => true,
        Some(capabilities) => {
            !strings(Some(capabilities), "drop").any(|dropped| dropped == "ALL")
                || strings(Some(capabilities), "add").any(|added| added != "NET_BIND_SERVICE")
        }
    })
}

/// The volume sources restricted allows; any other (or none) is restricted.
const UNRESTRICTED_VOLUME_SOURCES: [&str; 9] = [
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "image",
    "persistentVolumeClaim",
    "projected",
    "secret",
];

fn restricted_volumes(pod: &Pod<'_>) -> bool {
    pod.volumes().any(|volume| {
        !UNRESTRICTED_VOLUME_SOURCES
            .into_iter()
            .any(|source| object(Some(volume), source).is_some())
    })
}

fn run_as_non_root(pod: &Pod<'_>) -> bool {
    let pod_setting = flag(pod.security_context, "runAsNonRoot");
    pod_setting == Some(false)
        || pod
            .containers()
            .any(|c| match flag(c.security_context, "runAsNonRoot") {
                Some(non_root) => !non_root,
                None => pod_setting != Some(true),
            })
}

fn run_as_user(pod: &Pod<'_>) -> bool {
    integer(pod.security_context, "runAsUser") == Some(0)
        || pod
            .containers()
            .any(|c| integer(c.security_context, "runAsUser") == Some(0))
}

fn seccomp_profile_restricted(pod: &Pod<'_>) -> bool {
    let pod_profile = object(pod.security_context, "seccompProfile");
    if pod_profile.is_some_and(|p| !seccomp_type_allowed(p)) {
        return true;
    }
    let pod_sets_one = pod_profile.is_some();
    pod.containers().any(|c| match c.context("seccompProfile") {
        Some(profile) => !seccomp_type_allowed(profile),
        None => !pod_sets_one,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

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
        assert_eq!(
            ids(&v.failed_at(Level::Restricted)),
            [
                "allowPrivilegeEscalation",
                "capabilities_restricted",
                "runAsNonRoot",
                "seccompProfile_restricted"
            ]
        );
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
        assert_eq!(
            ids(&v.failed_at(Level::Restricted)),
            [
                "allowPrivilegeEscalation",
                "capabilities_restricted",
                "runAsNonRoot",
                "seccompProfile_restricted"
            ]
        );
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
}
