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

use serde_json::Value;

mod checks;

use checks::*;

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
    pub const fn level(self) -> Level {
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

/// The checks of `level` itself (a restricted check is not run at baseline).
const fn of_level(level: Level) -> u32 {
    let mut bits = 0;
    let mut i = 0;
    while i < Check::ALL.len() {
        if Check::ALL[i].level() as u8 == level as u8 {
            bits |= Check::ALL[i].bit();
        }
        i += 1;
    }
    bits
}

/// The checks `baseline` runs.
const BASELINE: u32 = of_level(Level::Baseline);

/// The baseline checks a restricted check overrides at `restricted`.
const OVERRIDDEN: u32 = mask(&[
    Check::CapabilitiesBaseline,
    Check::HostPathVolumes,
    Check::ProcMount,
    Check::SeccompProfileBaseline,
]);

/// The checks `restricted` runs: the restricted ones and the baseline ones not overridden.
const RESTRICTED: u32 = (BASELINE & !OVERRIDDEN) | of_level(Level::Restricted);

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

#[cfg(test)]
mod tests;
