//! podman as this project's tests run the gateway's image: the runtime and limits these machines
//! need, the tools a test needs (found, or named as missing), and the `podman run` flags that do
//! what a rendered pod's security contexts ask. Shared by the image test
//! (`cmd/tests/integration/image.rs`) and the e2e suite's image mode (`gateway::container`), so
//! the two run the container alike.

use std::path::Path;
use std::process::Command;

use k8s_openapi::api::core::v1::{Container, PodSpec};

/// `podman run` flags for the process limits: explicit, as a sandbox may not raise them to
/// podman's defaults (a `containers.conf` with `default_ulimits` does the same).
pub const LIMITS: [&str; 2] = ["--ulimit=nofile=20000:20000", "--ulimit=nproc=32768:32768"];

/// podman with the runtime these machines need: runc (crun refuses hybrid cgroups).
pub fn podman() -> Command {
    let mut cmd = Command::new("podman");
    cmd.args(["--runtime", "runc"]);
    cmd
}

/// The tools of `tools` that are absent here (do not answer `--version`).
pub fn missing(tools: &[&'static str]) -> Vec<&'static str> {
    tools
        .iter()
        .copied()
        .filter(|tool| {
            !Command::new(tool)
                .arg("--version")
                .output()
                .is_ok_and(|out| out.status.success())
        })
        .collect()
}

/// The pod's first container (the gateway's pod has one).
fn first_container(pod: &PodSpec) -> anyhow::Result<&Container> {
    pod.containers
        .first()
        .ok_or_else(|| anyhow::anyhow!("the pod has no container"))
}

/// The `podman run` flags that do what the pod's security contexts (its own and its first
/// container's) ask: the user and group, a read-only root with nothing writable mounted on it,
/// the capabilities dropped, no privilege escalation, and the seccomp profile. An error for a
/// pod that would run as root, or that asks for what these flags cannot give.
pub fn security_flags(pod: &PodSpec) -> anyhow::Result<Vec<String>> {
    let pod_context = pod.security_context.clone().unwrap_or_default();
    let container = first_container(pod)?.security_context.clone().unwrap_or_default();
    let user = container
        .run_as_user
        .or(pod_context.run_as_user)
        .ok_or_else(|| anyhow::anyhow!("the pod names no runAsUser"))?;
    let group = container
        .run_as_group
        .or(pod_context.run_as_group)
        .ok_or_else(|| anyhow::anyhow!("the pod names no runAsGroup"))?;
    let non_root = container.run_as_non_root.or(pod_context.run_as_non_root);
    anyhow::ensure!(
        user != 0 && non_root == Some(true),
        "the pod would run as root (runAsUser {user}, runAsNonRoot {non_root:?})"
    );
    let mut flags = vec![format!("--user={user}:{group}")];
    if container.read_only_root_filesystem == Some(true) {
        // Kubernetes mounts nothing writable over a read-only root; podman would add tmpfs
        // /tmp, /var/tmp and /run unless told not to.
        flags.extend(["--read-only".to_owned(), "--read-only-tmpfs=false".to_owned()]);
    }
    let capabilities = container.capabilities.unwrap_or_default();
    for dropped in capabilities.drop.unwrap_or_default() {
        flags.push(format!("--cap-drop={}", dropped.to_lowercase()));
    }
    for added in capabilities.add.unwrap_or_default() {
        flags.push(format!("--cap-add={}", added.to_lowercase()));
    }
    if container.allow_privilege_escalation == Some(false) {
        flags.push("--security-opt=no-new-privileges".to_owned());
    }
    let seccomp = container.seccomp_profile.or(pod_context.seccomp_profile);
    match seccomp.as_ref().map(|profile| profile.type_.as_str()) {
        // podman's own default profile is the runtime's default.
        None | Some("RuntimeDefault") => {}
        Some("Unconfined") => flags.push("--security-opt=seccomp=unconfined".to_owned()),
        Some(other) => anyhow::bail!("a seccomp profile of type {other} is not run here"),
    }
    Ok(flags)
}

/// The `podman run` flags for the environment of the pod's first container, as a kubelet sets
/// it: plain values, and the downward API's pod name and namespace (`pod_name`, `namespace`).
/// An error for a source these flags cannot give (a Secret's or ConfigMap's key, a resource).
pub fn env_flags(pod: &PodSpec, pod_name: &str, namespace: &str) -> anyhow::Result<Vec<String>> {
    let container = first_container(pod)?;
    let mut flags = Vec::new();
    for var in container.env.iter().flatten() {
        let value = match (&var.value, &var.value_from) {
            (Some(value), None) => value.clone(),
            (None, Some(source)) => match source.field_ref.as_ref().map(|f| f.field_path.as_str()) {
                Some("metadata.name") => pod_name.to_owned(),
                Some("metadata.namespace") => namespace.to_owned(),
                _ => anyhow::bail!("the environment variable {} has a source not run here", var.name),
            },
            _ => String::new(),
        };
        flags.push(format!("--env={}={value}", var.name));
    }
    Ok(flags)
}

/// The `podman run` flags mounting the pod's first container's volumes: each mount's volume from
/// `volumes` (the volume's name and the host directory holding its files), read-only where the
/// mount is. An error naming a mounted volume `volumes` does not give.
pub fn volume_flags(pod: &PodSpec, volumes: &[(&str, &Path)]) -> anyhow::Result<Vec<String>> {
    let container = first_container(pod)?;
    let mut flags = Vec::new();
    for mount in container.volume_mounts.iter().flatten() {
        let (_, dir) = volumes
            .iter()
            .find(|(name, _)| *name == mount.name)
            .ok_or_else(|| anyhow::anyhow!("the pod mounts the volume {}, not given here", mount.name))?;
        let ro = if mount.read_only == Some(true) { ":ro" } else { "" };
        flags.push(format!("--volume={}:{}{ro}", dir.display(), mount.mount_path));
    }
    Ok(flags)
}

/// A container's process as the kernel reports it (`/proc/PID`): what its security flags did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confinement {
    /// Real, effective, saved and filesystem user ids.
    pub uids: Vec<u32>,
    /// Real, effective, saved and filesystem group ids.
    pub gids: Vec<u32>,
    /// The effective capabilities (a hexadecimal mask; all zeros: none).
    pub effective_capabilities: String,
    /// The bounding set (all zeros: none can ever be gained, as `drop: [ALL]` leaves it; a
    /// non-root process has no effective ones whether or not they were dropped).
    pub bounding_capabilities: String,
    /// Whether `no_new_privs` is set.
    pub no_new_privileges: bool,
    /// Whether its root filesystem is mounted read-only.
    pub read_only_root: bool,
    /// Whether anything is mounted on its `/tmp`.
    pub tmp_mounted: bool,
}

impl Confinement {
    /// The confinement of the process `pid` of this host.
    pub fn of(pid: u32) -> anyhow::Result<Self> {
        let read = |file: &str| {
            std::fs::read_to_string(format!("/proc/{pid}/{file}"))
                .map_err(|error| anyhow::anyhow!("cannot read /proc/{pid}/{file}: {error}"))
        };
        let status = read("status")?;
        let field = |name: &str| -> anyhow::Result<String> {
            status
                .lines()
                .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
                .map(|value| value.trim().to_owned())
                .ok_or_else(|| anyhow::anyhow!("/proc/{pid}/status has no {name}"))
        };
        let ids = |name: &str| -> anyhow::Result<Vec<u32>> {
            field(name)?
                .split_whitespace()
                .map(|id| {
                    id.parse()
                        .map_err(|_| anyhow::anyhow!("{name}: {id} is not an id"))
                })
                .collect()
        };
        let mounts = read("mountinfo")?;
        // mountinfo: id, parent, major:minor, root, mount point, mount options, ...
        let options = |point: &str| {
            mounts.lines().find_map(|line| {
                let fields: Vec<&str> = line.split_whitespace().collect();
                (fields.get(4) == Some(&point)).then(|| fields.get(5).copied().unwrap_or_default().to_owned())
            })
        };
        let root = options("/").ok_or_else(|| anyhow::anyhow!("/proc/{pid}/mountinfo has no /"))?;
        Ok(Self {
            uids: ids("Uid")?,
            gids: ids("Gid")?,
            effective_capabilities: field("CapEff")?,
            bounding_capabilities: field("CapBnd")?,
            no_new_privileges: field("NoNewPrivs")? == "1",
            read_only_root: root.split(',').any(|option| option == "ro"),
            tmp_mounted: options("/tmp").is_some(),
        })
    }

    /// Whether the process runs as `user:group` with no capabilities (none effective, none in its
    /// bounding set: all dropped), no new privileges, and a read-only root with nothing writable
    /// on `/tmp`: the install's pod. What differs, if not.
    pub fn check_installed(&self, user: u32, group: u32) -> anyhow::Result<()> {
        let mut wrong = Vec::new();
        if self.uids != [user; 4] {
            wrong.push(format!("uids {:?}", self.uids));
        }
        if self.gids != [group; 4] {
            wrong.push(format!("gids {:?}", self.gids));
        }
        if !self.effective_capabilities.trim_start_matches('0').is_empty() {
            wrong.push(format!("capabilities {}", self.effective_capabilities));
        }
        if !self.bounding_capabilities.trim_start_matches('0').is_empty() {
            wrong.push(format!("bounding capabilities {}", self.bounding_capabilities));
        }
        if !self.no_new_privileges {
            wrong.push("new privileges allowed".to_owned());
        }
        if !self.read_only_root {
            wrong.push("a writable root".to_owned());
        }
        if self.tmp_mounted {
            wrong.push("a mount on /tmp".to_owned());
        }
        anyhow::ensure!(
            wrong.is_empty(),
            "not confined as the install renders it ({user}:{group}): {}",
            wrong.join(", ")
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn pod(value: serde_json::Value) -> PodSpec {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn the_installs_security_contexts_become_podman_flags() {
        let spec = pod(serde_json::json!({
            "securityContext": {"runAsUser": 65532, "runAsGroup": 65532, "runAsNonRoot": true,
                                "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [{"name": "gateway", "securityContext": {
                "allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true,
                "capabilities": {"drop": ["ALL"]}}}],
        }));
        assert_eq!(
            security_flags(&spec).unwrap(),
            [
                "--user=65532:65532",
                "--read-only",
                "--read-only-tmpfs=false",
                "--cap-drop=all",
                "--security-opt=no-new-privileges",
            ]
        );
    }

    #[test]
    fn the_containers_own_context_wins_and_root_is_refused() {
        let spec = pod(serde_json::json!({
            "securityContext": {"runAsUser": 65532, "runAsGroup": 65532, "runAsNonRoot": true},
            "containers": [{"name": "gateway", "securityContext": {"runAsUser": 1000,
                "seccompProfile": {"type": "Unconfined"}}}],
        }));
        assert_eq!(
            security_flags(&spec).unwrap(),
            ["--user=1000:65532", "--security-opt=seccomp=unconfined"]
        );
        let root = pod(serde_json::json!({
            "securityContext": {"runAsUser": 0, "runAsGroup": 0},
            "containers": [{"name": "gateway"}],
        }));
        let error = security_flags(&root).unwrap_err().to_string();
        assert!(error.contains("as root"), "{error}");
        let unnamed = pod(serde_json::json!({"containers": [{"name": "gateway"}]}));
        assert!(
            security_flags(&unnamed).is_err(),
            "no user: podman would run the image's"
        );
    }

    #[test]
    fn the_environment_and_mounts_are_the_pods() {
        let spec = pod(serde_json::json!({"containers": [{"name": "gateway",
            "env": [
                {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
                {"name": "PLAIN", "value": "v"},
            ],
            "volumeMounts": [{"name": "tls", "mountPath": "/etc/suture/tls", "readOnly": true}],
        }]}));
        assert_eq!(
            env_flags(&spec, "gw-0", "suture-system").unwrap(),
            [
                "--env=POD_NAME=gw-0",
                "--env=POD_NAMESPACE=suture-system",
                "--env=PLAIN=v"
            ]
        );
        assert_eq!(
            volume_flags(&spec, &[("tls", Path::new("/run/tls"))]).unwrap(),
            ["--volume=/run/tls:/etc/suture/tls:ro"]
        );
        let error = volume_flags(&spec, &[]).unwrap_err().to_string();
        assert!(error.contains("tls"), "{error}");
        let secret = pod(serde_json::json!({"containers": [{"name": "gateway", "env": [
            {"name": "KEY", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]}]}));
        assert!(env_flags(&secret, "gw-0", "ns").is_err());
    }

    #[test]
    fn this_test_is_not_confined_as_the_install_renders_the_gateway() {
        let here = Confinement::of(std::process::id()).unwrap();
        assert_eq!(here.uids.len(), 4, "{here:?}");
        let error = here.check_installed(65532, 65532).unwrap_err().to_string();
        assert!(error.contains("uids"), "{error}");
        let confined = Confinement {
            uids: vec![65532; 4],
            gids: vec![65532; 4],
            effective_capabilities: "0000000000000000".to_owned(),
            bounding_capabilities: "0000000000000000".to_owned(),
            no_new_privileges: true,
            read_only_root: true,
            tmp_mounted: false,
        };
        confined.check_installed(65532, 65532).unwrap();
        let writable = Confinement {
            read_only_root: false,
            ..confined
        };
        let error = writable.check_installed(65532, 65532).unwrap_err().to_string();
        assert!(error.ends_with("a writable root"), "{error}");
    }
}
