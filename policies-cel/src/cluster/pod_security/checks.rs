//! The checks of the Pod Security Standards, one function each, over a pod read leniently (a
//! field of an unexpected type reads as absent, a list entry that is not an object is skipped, a
//! missing string inside an object reads as `""`, Go's zero value). Each returns whether the pod
//! fails the check; [`super::Check`] names them and applies the Windows and user-namespace
//! exemptions.

use serde_json::{Map, Value};

type Object = Map<String, Value>;

/// The parts of a pod the checks read, found once.
#[derive(Debug)]
pub(super) struct Pod<'a> {
    annotations: Option<&'a Object>,
    spec: Option<&'a Object>,
    /// `spec.securityContext`.
    security_context: Option<&'a Object>,
    /// `spec.os.name` is `windows`.
    pub(super) windows: bool,
    /// `spec.hostUsers` is `false`: the pod has its own user namespace.
    pub(super) user_namespace: bool,
    /// Every container, found once for all the checks.
    containers: Vec<Container<'a>>,
}

impl<'a> Pod<'a> {
    pub(super) fn new(metadata: Option<&'a Value>, spec: Option<&'a Value>) -> Self {
        let spec = spec.and_then(Value::as_object);
        Pod {
            annotations: object(metadata.and_then(Value::as_object), "annotations"),
            spec,
            security_context: object(spec, "securityContext"),
            windows: text(object(spec, "os"), "name") == Some("windows"),
            user_namespace: flag(spec, "hostUsers") == Some(false),
            // As PodSecurity visits them: init containers, containers, ephemeral containers.
            containers: ["initContainers", "containers", "ephemeralContainers"]
                .into_iter()
                .flat_map(|list| objects(spec, list))
                .map(|fields| Container {
                    fields,
                    security_context: object(Some(fields), "securityContext"),
                })
                .collect(),
        }
    }

    /// Every container (init, regular and ephemeral).
    fn containers(&self) -> impl Iterator<Item = Container<'a>> + '_ {
        self.containers.iter().copied()
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
pub(super) const APP_ARMOR_ANNOTATION_PREFIX: &str = "container.apparmor.security.beta.kubernetes.io/";

fn app_armor_type_allowed(profile: &Object) -> bool {
    matches!(text_or_empty(profile, "type"), "RuntimeDefault" | "Localhost")
}

pub(super) fn app_armor_profile(pod: &Pod<'_>) -> bool {
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

pub(super) fn capabilities_baseline(pod: &Pod<'_>) -> bool {
    pod.containers().any(|c| {
        strings(c.context("capabilities"), "add").any(|added| !DEFAULT_CAPABILITIES.contains(&added))
    })
}

pub(super) fn host_namespaces(pod: &Pod<'_>) -> bool {
    ["hostNetwork", "hostPID", "hostIPC"]
        .into_iter()
        .any(|key| flag(pod.spec, key) == Some(true))
}

pub(super) fn host_path_volumes(pod: &Pod<'_>) -> bool {
    pod.volumes()
        .any(|volume| object(Some(volume), "hostPath").is_some())
}

pub(super) fn host_ports(pod: &Pod<'_>) -> bool {
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

pub(super) fn host_probes_and_lifecycle(pod: &Pod<'_>) -> bool {
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

pub(super) fn privileged(pod: &Pod<'_>) -> bool {
    pod.containers()
        .any(|c| flag(c.security_context, "privileged") == Some(true))
}

/// A container sets a `procMount` other than `Default` (both procMount checks; the baseline one
/// is relaxed for pods with their own user namespace by its caller).
pub(super) fn proc_mount(pod: &Pod<'_>) -> bool {
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

pub(super) fn se_linux_options(pod: &Pod<'_>) -> bool {
    object(pod.security_context, "seLinuxOptions").is_some_and(se_linux_options_forbidden)
        || pod.containers().any(|c| {
            c.context("seLinuxOptions")
                .is_some_and(se_linux_options_forbidden)
        })
}

fn seccomp_type_allowed(profile: &Object) -> bool {
    matches!(text_or_empty(profile, "type"), "RuntimeDefault" | "Localhost")
}

pub(super) fn seccomp_profile_baseline(pod: &Pod<'_>) -> bool {
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

pub(super) fn sysctls(pod: &Pod<'_>) -> bool {
    objects(pod.security_context, "sysctls")
        .any(|sysctl| !SAFE_SYSCTLS.contains(&text_or_empty(sysctl, "name")))
}

fn host_process(security_context: Option<&Object>) -> bool {
    flag(object(security_context, "windowsOptions"), "hostProcess") == Some(true)
}

pub(super) fn windows_host_process(pod: &Pod<'_>) -> bool {
    host_process(pod.security_context) || pod.containers().any(|c| host_process(c.security_context))
}

// Restricted checks.

pub(super) fn allow_privilege_escalation(pod: &Pod<'_>) -> bool {
    pod.containers()
        .any(|c| flag(c.security_context, "allowPrivilegeEscalation") != Some(false))
}

pub(super) fn capabilities_restricted(pod: &Pod<'_>) -> bool {
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

pub(super) fn restricted_volumes(pod: &Pod<'_>) -> bool {
    pod.volumes().any(|volume| {
        !UNRESTRICTED_VOLUME_SOURCES
            .into_iter()
            .any(|source| object(Some(volume), source).is_some())
    })
}

pub(super) fn run_as_non_root(pod: &Pod<'_>) -> bool {
    let pod_setting = flag(pod.security_context, "runAsNonRoot");
    pod_setting == Some(false)
        || pod
            .containers()
            .any(|c| match flag(c.security_context, "runAsNonRoot") {
                Some(non_root) => !non_root,
                None => pod_setting != Some(true),
            })
}

pub(super) fn run_as_user(pod: &Pod<'_>) -> bool {
    integer(pod.security_context, "runAsUser") == Some(0)
        || pod
            .containers()
            .any(|c| integer(c.security_context, "runAsUser") == Some(0))
}

pub(super) fn seccomp_profile_restricted(pod: &Pod<'_>) -> bool {
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
