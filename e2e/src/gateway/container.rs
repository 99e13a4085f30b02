//! The suite's image mode (`SUTURE_E2E_GATEWAY=image`): the gateway run from its container image
//! by podman on the host network, as `kubectl suture install` renders its pod — the rendered
//! container's arguments, user and security contexts, environment and TLS Secret mount
//! ([`crate::podman`], as the image test runs it), the install's ServiceAccount token and the
//! cluster's CA mounted where a kubelet mounts them, and `KUBERNETES_SERVICE_HOST`/`_PORT` naming
//! the suite's kube-apiserver, so the gateway takes the in-cluster configuration a replica in a
//! cluster takes. kube-apiserver calls it at the loopback URL the install's webhook names.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::Context;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::PodSpec;
use serde::Deserialize;

use crate::binaries;
use crate::control_plane::Process;
use crate::podman::{self, podman};

/// The environment variable that chooses how the suite runs the gateway.
pub const MODE_VAR: &str = "SUTURE_E2E_GATEWAY";

/// Where a kubelet mounts a pod's ServiceAccount token, CA and namespace.
const ACCOUNT_MOUNT: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// How the suite runs the gateway.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// `suture-gateway` as a process of this host (`SUTURE_E2E_GATEWAY` unset, or `host`).
    Host,
    /// From the image: `image` builds it from the suite's own `suture-gateway` with
    /// scripts/image.sh; `image=REF` runs the image REF from podman's storage (a release's, after
    /// `podman load -i ...docker.tar`).
    Image(Option<String>),
}

impl Mode {
    /// The mode `SUTURE_E2E_GATEWAY` names.
    pub fn from_env() -> anyhow::Result<Self> {
        match std::env::var(MODE_VAR) {
            Err(std::env::VarError::NotPresent) => Ok(Self::Host),
            Err(std::env::VarError::NotUnicode(_)) => anyhow::bail!("{MODE_VAR} is not UTF-8"),
            Ok(value) => Self::parse(&value),
        }
    }

    fn parse(value: &str) -> anyhow::Result<Self> {
        match value.trim() {
            "" | "host" => Ok(Self::Host),
            "image" => Ok(Self::Image(None)),
            other => match other.strip_prefix("image=") {
                Some(reference) if !reference.is_empty() => Ok(Self::Image(Some(reference.to_owned()))),
                _ => anyhow::bail!("{MODE_VAR}={other}: expected `host`, `image` or `image=REF`"),
            },
        }
    }

    /// What this mode needs that this machine lacks, in a sentence (the suite skips saying it).
    pub fn unavailable(&self) -> Option<String> {
        let Self::Image(reference) = self else {
            return None;
        };
        let tools: &[&'static str] = match reference {
            Some(_) => &["podman", "runc"],
            None => &["podman", "runc", "buildah"],
        };
        let missing = podman::missing(tools);
        (!missing.is_empty()).then(|| {
            format!(
                "{MODE_VAR}=image needs {} (Debian: apt-get install podman runc buildah)",
                missing.join(", ")
            )
        })
    }
}

/// The image the suite runs the gateway from.
#[derive(Debug)]
pub struct Image {
    /// Its name in podman's storage.
    pub reference: String,
    /// Built by the suite, and so removed when dropped.
    built: bool,
}

impl Image {
    /// The image `reference` (which podman must hold), or without one an image built now by
    /// scripts/image.sh from the suite's own `suture-gateway`, the build the host mode runs.
    pub fn prepare(reference: Option<&str>) -> anyhow::Result<Self> {
        if let Some(reference) = reference {
            let found = podman()
                .args(["image", "exists", reference])
                .status()
                .context("cannot run podman")?;
            anyhow::ensure!(
                found.success(),
                "{MODE_VAR}=image={reference}: podman holds no such image (a release's: `podman load -i \
                 dist/suture-gateway_<version>_linux_amd64.docker.tar`)"
            );
            return Ok(Self {
                reference: reference.to_owned(),
                built: false,
            });
        }
        static BUILDS: AtomicUsize = AtomicUsize::new(0);
        let reference = format!(
            "localhost/suture-gateway-e2e:{}-{}",
            std::process::id(),
            BUILDS.fetch_add(1, Ordering::Relaxed)
        );
        let binary = binaries::path("suture-gateway")?;
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/image.sh");
        let started = Instant::now();
        let out = Command::new("bash")
            .arg(&script)
            .arg("--binary")
            .arg(&binary)
            .args(["--no-archives", "--image", &reference])
            .output()
            .with_context(|| format!("cannot run {}", script.display()))?;
        anyhow::ensure!(
            out.status.success(),
            "scripts/image.sh failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        println!(
            "  built the gateway's image {reference} from {} in {:.1}s",
            binary.display(),
            started.elapsed().as_secs_f64()
        );
        Ok(Self {
            reference,
            built: true,
        })
    }
}

impl Drop for Image {
    fn drop(&mut self) {
        if self.built {
            let _ = podman().args(["rmi", "--force", &self.reference]).output();
        }
    }
}

/// What the gateway's pod is given from outside it: the files of the Secrets it mounts, its
/// ServiceAccount's token, and the API server.
#[derive(Debug)]
pub struct Given<'a> {
    /// Each Secret's name and a directory holding its keys as files.
    pub secrets: &'a [(&'a str, &'a Path)],
    /// The ServiceAccount's token.
    pub token: &'a str,
    /// The cluster's CA certificate file (the `ca.crt` a kubelet mounts beside the token).
    pub ca: &'a Path,
    /// kube-apiserver's URL, as the gateway's network (the host's) reaches it.
    pub server: &'a str,
    /// Where the mounted token's directory is written.
    pub dir: &'a Path,
}

/// The gateway's pod as the install renders it, in podman's terms: what every container the
/// suite starts from it shares.
#[derive(Debug)]
pub struct Pod {
    image: Image,
    spec: PodSpec,
    namespace: String,
    /// Limits, security contexts, mounts and the API server's address.
    flags: Vec<String>,
    /// The rendered container's arguments.
    pub args: Vec<String>,
}

impl Pod {
    /// The pod of the gateway Deployment in the install's YAML `stream`, run from `image` with
    /// what `given` gives it.
    pub fn from_install(stream: &str, image: Image, given: &Given<'_>) -> anyhow::Result<Self> {
        let deployment = deployment(stream)?;
        let namespace = deployment.metadata.namespace.clone().unwrap_or_default();
        let spec = deployment
            .spec
            .and_then(|spec| spec.template.spec)
            .ok_or_else(|| anyhow::anyhow!("the gateway Deployment has no pod"))?;
        let args = spec
            .containers
            .first()
            .and_then(|container| container.args.clone())
            .ok_or_else(|| anyhow::anyhow!("the gateway Deployment's container has no args"))?;
        let mut volumes = Vec::new();
        for volume in spec.volumes.iter().flatten() {
            let Some(secret) = volume.secret.as_ref().and_then(|s| s.secret_name.as_deref()) else {
                continue;
            };
            if let Some((_, dir)) = given.secrets.iter().find(|(name, _)| *name == secret) {
                readable(dir)?;
                volumes.push((volume.name.as_str(), *dir));
            }
        }
        let mut flags: Vec<String> = podman::LIMITS.map(String::from).into();
        flags.extend(podman::security_flags(&spec)?);
        flags.extend(podman::volume_flags(&spec, &volumes)?);
        let account = write_account(given, &namespace)?;
        flags.push(format!("--volume={}:{ACCOUNT_MOUNT}:ro", account.display()));
        let server: http::Uri = given
            .server
            .parse()
            .with_context(|| format!("the API server {} is not a URL", given.server))?;
        let host = server
            .host()
            .ok_or_else(|| anyhow::anyhow!("the API server {} has no host", given.server))?;
        flags.extend([
            format!("--env=KUBERNETES_SERVICE_HOST={}", host.trim_matches(['[', ']'])),
            format!(
                "--env=KUBERNETES_SERVICE_PORT={}",
                server.port_u16().unwrap_or(443)
            ),
        ]);
        Ok(Self {
            image,
            spec,
            namespace,
            flags,
            args,
        })
    }

    /// The image the pod runs.
    pub fn image(&self) -> &str {
        &self.image.reference
    }

    /// The rendered pod.
    pub fn spec(&self) -> &PodSpec {
        &self.spec
    }
}

/// The gateway Deployment in an install's YAML `stream`.
fn deployment(stream: &str) -> anyhow::Result<Deployment> {
    for document in serde_yaml_ng::Deserializer::from_str(stream) {
        let object = serde_json::Value::deserialize(document).context("the install's YAML")?;
        if object["kind"] == "Deployment" {
            return serde_json::from_value(object).context("the install's Deployment");
        }
    }
    anyhow::bail!("the install renders no Deployment")
}

/// The ServiceAccount's token, CA and namespace written as a kubelet mounts them; their directory.
fn write_account(given: &Given<'_>, namespace: &str) -> anyhow::Result<PathBuf> {
    let dir = given.dir.join("serviceaccount");
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("token"), given.token)?;
    std::fs::copy(given.ca, dir.join("ca.crt"))
        .with_context(|| format!("cannot copy {}", given.ca.display()))?;
    std::fs::write(dir.join("namespace"), namespace)?;
    readable(&dir)?;
    Ok(dir)
}

/// `dir` and its files made readable by the container's user, as a Secret volume's are (0644).
fn readable(dir: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let set = |path: &Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
            .with_context(|| format!("cannot make {} readable", path.display()))
    };
    set(dir, 0o755)?;
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_file() {
            set(&path, 0o644)?;
        }
    }
    Ok(())
}

/// `args` with the port of the address flag `flag` (`--listen`) set to `port`, its host kept.
pub fn set_port(args: &mut [String], flag: &str, port: u16) -> anyhow::Result<()> {
    let prefix = format!("{flag}=");
    let arg = args
        .iter_mut()
        .find(|arg| arg.starts_with(&prefix))
        .ok_or_else(|| anyhow::anyhow!("the rendered arguments have no {flag}"))?;
    let (host, _) = arg[prefix.len()..]
        .rsplit_once(':')
        .ok_or_else(|| anyhow::anyhow!("{arg} names no port"))?;
    *arg = format!("{prefix}{host}:{port}");
    Ok(())
}

/// The files of this host that `flags` (`--name=value`) name by absolute path: what a test adds
/// beside the rendered pod (e.g. a replica's `--params`), for its container to see at that path.
pub fn host_files(flags: &[&str]) -> Vec<PathBuf> {
    flags
        .iter()
        .filter_map(|flag| flag.split_once('=').map(|(_, value)| Path::new(value)))
        .filter(|path| path.is_absolute() && path.is_file())
        .map(Path::to_path_buf)
        .collect()
}

/// A gateway container, run attached (`podman run --rm`: its output appended to the gateway's
/// log, as the host process's is), killed and removed when stopped or dropped.
#[derive(Debug)]
pub struct Container {
    name: String,
    client: Process,
    pid: Option<u32>,
}

impl Container {
    /// Runs the gateway `identity` (its pod name) from `pod` with `args`, the host's `files`
    /// mounted read-only at their paths, logging into `dir`.
    pub fn run(
        pod: &Pod,
        identity: &str,
        args: &[String],
        files: &[PathBuf],
        dir: &Path,
    ) -> anyhow::Result<Self> {
        let name = format!("suture-e2e-{}-{identity}", std::process::id());
        // One left by a start that failed half-way goes first (a name is unique).
        remove(&name);
        let mut run: Vec<String> = ["--runtime", "runc", "run", "--rm", "--network=host", "--name"]
            .map(String::from)
            .into();
        run.push(name.clone());
        run.extend(pod.flags.iter().cloned());
        run.extend(podman::env_flags(&pod.spec, identity, &pod.namespace)?);
        for file in files {
            run.push(format!("--volume={0}:{0}:ro", file.display()));
        }
        run.push(pod.image.reference.clone());
        run.extend(args.iter().cloned());
        let client = Process::spawn("suture-gateway", Path::new("podman"), &run, dir)?;
        Ok(Self {
            name,
            client,
            pid: None,
        })
    }

    /// The gateway's process id on this host (podman's record, read once it runs).
    pub fn pid(&mut self) -> Option<u32> {
        if self.pid.is_none() {
            let out = podman()
                .args(["inspect", "--format", "{{.State.Pid}}", &self.name])
                .output()
                .ok()?;
            self.pid = String::from_utf8_lossy(&out.stdout)
                .trim()
                .parse()
                .ok()
                .filter(|pid| *pid != 0);
        }
        self.pid
    }

    /// An error if the container has exited (with the end of its log).
    pub fn check_alive(&mut self) -> anyhow::Result<()> {
        self.client.check_alive()
    }

    /// Kills the gateway (SIGKILL) and removes its container.
    pub fn stop(&mut self) {
        let _ = podman().args(["kill", "--signal", "KILL", &self.name]).output();
        self.client.stop();
        remove(&self.name);
        self.pid = None;
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Removes the container `name`, if there is one.
fn remove(name: &str) {
    let _ = podman()
        .args(["rm", "--force", "--ignore", "--time", "0", name])
        .output();
}

/// A running gateway: a process of this host, or a container.
#[derive(Debug)]
pub enum Running {
    /// `suture-gateway` on this host.
    Host(Process),
    /// The image, run by podman.
    Container(Container),
}

impl Running {
    /// The gateway's process id on this host.
    pub fn pid(&mut self) -> Option<u32> {
        match self {
            Self::Host(process) => Some(process.id()),
            Self::Container(container) => container.pid(),
        }
    }

    /// An error if the gateway has exited (with the end of its log).
    pub fn check_alive(&mut self) -> anyhow::Result<()> {
        match self {
            Self::Host(process) => process.check_alive(),
            Self::Container(container) => container.check_alive(),
        }
    }

    /// Kills the gateway.
    pub fn stop(&mut self) {
        match self {
            Self::Host(process) => process.stop(),
            Self::Container(container) => container.stop(),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_mode_is_host_image_or_a_named_image() {
        assert_eq!(Mode::parse("").unwrap(), Mode::Host);
        assert_eq!(Mode::parse("host").unwrap(), Mode::Host);
        assert_eq!(Mode::parse("image").unwrap(), Mode::Image(None));
        assert_eq!(
            Mode::parse("image=ghcr.io/suture-dev/suture-gateway:v0.1.0").unwrap(),
            Mode::Image(Some("ghcr.io/suture-dev/suture-gateway:v0.1.0".to_owned()))
        );
        for bad in ["image=", "docker", "imag"] {
            let error = Mode::parse(bad).unwrap_err().to_string();
            assert!(error.contains("expected"), "{bad}: {error}");
        }
        assert_eq!(Mode::Host.unavailable(), None, "the host mode needs no tool");
    }

    #[test]
    fn the_files_a_flag_names_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let params = dir.path().join("params.yaml");
        std::fs::write(&params, "kind: SafetyPackParams\n").unwrap();
        let flag = format!("--params={}", params.display());
        let missing = format!("--params={}", dir.path().join("absent.yaml").display());
        assert_eq!(
            host_files(&[
                &flag,
                "--keep-warm=2ms",
                "--no-events",
                &missing,
                "--params=relative.yaml"
            ]),
            [params]
        );
    }

    #[test]
    fn a_port_is_set_and_the_host_kept() {
        let mut args = vec![
            "--listen=0.0.0.0:8443".to_owned(),
            "--metrics-listen=0.0.0.0:8080".to_owned(),
        ];
        set_port(&mut args, "--listen", 31000).unwrap();
        set_port(&mut args, "--metrics-listen", 31001).unwrap();
        assert_eq!(args, ["--listen=0.0.0.0:31000", "--metrics-listen=0.0.0.0:31001"]);
        assert!(set_port(&mut args, "--tls-cert", 1).is_err());
    }

    #[test]
    fn the_pod_is_read_from_the_rendered_deployment() {
        let dir = tempfile::tempdir().unwrap();
        let tls = dir.path().join("tls");
        std::fs::create_dir(&tls).unwrap();
        std::fs::write(tls.join("tls.crt"), "cert").unwrap();
        let ca = dir.path().join("ca.crt");
        std::fs::write(&ca, "ca").unwrap();
        let stream = "kind: Namespace\nmetadata: {name: suture-system}\n---\n\
            kind: Deployment\napiVersion: apps/v1\nmetadata: {name: suture-gateway, namespace: suture-system}\n\
            spec:\n  selector: {}\n  template:\n    spec:\n      \
            securityContext: {runAsUser: 65532, runAsGroup: 65532, runAsNonRoot: true}\n      \
            containers:\n      - name: gateway\n        args: [--listen=0.0.0.0:8443, --decision-log=stdout]\n        \
            env: [{name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]\n        \
            volumeMounts: [{name: tls, mountPath: /etc/suture/tls, readOnly: true}]\n      \
            volumes: [{name: tls, secret: {secretName: suture-gateway-tls}}]\n";
        let image = Image {
            reference: "localhost/x:1".to_owned(),
            built: false,
        };
        let given = Given {
            secrets: &[("suture-gateway-tls", &tls)],
            token: "t0ken",
            ca: &ca,
            server: "https://127.0.0.1:6443",
            dir: dir.path(),
        };
        let pod = Pod::from_install(stream, image, &given).unwrap();
        assert_eq!(pod.args, ["--listen=0.0.0.0:8443", "--decision-log=stdout"]);
        assert_eq!(pod.namespace, "suture-system");
        let account = dir.path().join("serviceaccount");
        for flag in [
            "--user=65532:65532",
            &format!("--volume={}:/etc/suture/tls:ro", tls.display()),
            &format!("--volume={}:{ACCOUNT_MOUNT}:ro", account.display()),
            "--env=KUBERNETES_SERVICE_HOST=127.0.0.1",
            "--env=KUBERNETES_SERVICE_PORT=6443",
        ] {
            assert!(
                pod.flags.iter().any(|f| f == flag),
                "{flag} not in {:?}",
                pod.flags
            );
        }
        assert_eq!(std::fs::read_to_string(account.join("token")).unwrap(), "t0ken");
        assert_eq!(
            std::fs::read_to_string(account.join("namespace")).unwrap(),
            "suture-system"
        );
        assert_eq!(std::fs::read_to_string(account.join("ca.crt")).unwrap(), "ca");

        let no_secret = Given {
            secrets: &[],
            ..given
        };
        let image = Image {
            reference: "localhost/x:1".to_owned(),
            built: false,
        };
        let error = Pod::from_install(stream, image, &no_secret)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("tls"),
            "a mounted volume the suite does not give: {error}"
        );
    }
}
