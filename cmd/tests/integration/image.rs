//! The gateway's container image (`scripts/image.sh`), built with buildah from this test's own
//! (debug) `suture-gateway` (or `SUTURE_IMAGE_BINARY`'s) and run with podman as `kubectl suture install` renders the pod: the
//! rendered arguments, user, read-only root filesystem, dropped capabilities, no privilege
//! escalation, the rendered TLS Secret mounted where the Deployment mounts it. Offline: the
//! arguments gain `--cluster` (a recorded scene, mounted read-only), as no API server is here.
//!
//! It checks the image's layout (the archives' contents: no shell, root-owned files), its
//! configuration and labels, `/healthz` and `/readyz`, one recorded AdmissionReview judged over
//! HTTPS and verified against the rendered caBundle, the process's uid, capabilities and root
//! mount as the kernel reports them, and a drain on SIGTERM that exits 0.
//!
//! Skipped, saying so, where buildah, podman, runc or curl is absent (Debian: `apt-get install
//! buildah podman runc curl`; `.ci/run` installs them where it can). Podman runs with
//! `--runtime runc` (crun refuses hybrid cgroups) and explicit ulimits (a sandbox may not raise
//! them to podman's defaults): `suture_e2e::podman`, which the e2e suite's image mode runs the
//! gateway's container with too.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;
use suture_plugin::install::{Manifest, k8s, parse_stream};

use suture_e2e::podman::{self, podman};

use crate::common::{root, stderr, stdout, suture};

const SCENE: &str = "database";
/// Denied on the database scene by the built-in pack (gateway/tests/fixtures/expected-responses.json).
const REVIEW: &str = "statefulset-update-scale-down.json";

/// The gateway the image is built from: this test's own build, or `SUTURE_IMAGE_BINARY` (a
/// release, PGO or static musl build, to test the image a release ships).
fn gateway_binary() -> PathBuf {
    std::env::var_os("SUTURE_IMAGE_BINARY")
        .map(PathBuf::from)
        .unwrap_or_else(|| assert_cmd::cargo::cargo_bin("suture-gateway"))
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{}\n{}",
        out.status,
        stdout(&out),
        stderr(&out)
    );
    out
}

/// Removes the test's container and image, whatever happened.
struct Cleanup {
    container: String,
    image: String,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = podman().args(["rm", "-f", &self.container]).output();
        let _ = podman().args(["rmi", "-f", &self.image]).output();
    }
}

/// `tar -tv` of the one layer of a docker-archive.
fn layer_listing(archive: &Path) -> String {
    let manifest = run(Command::new("tar").arg("-xOf").arg(archive).arg("manifest.json"));
    let manifest: Value = serde_json::from_slice(&manifest.stdout).unwrap();
    let layers = manifest[0]["Layers"].as_array().unwrap();
    assert_eq!(layers.len(), 1, "one layer: {manifest}");
    let listing = run(Command::new("bash")
        .arg("-c")
        .arg("tar -xOf \"$1\" \"$2\" | tar -tv --numeric-owner")
        .arg("listing")
        .arg(archive)
        .arg(layers[0].as_str().unwrap()));
    stdout(&listing)
}

/// Mode, owner, size and path of each line of `tar -tv`.
fn listing_without_times(listing: &str) -> Vec<String> {
    let mut lines: Vec<String> = listing
        .lines()
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            format!(
                "{} {} {} {}",
                fields[0],
                fields[1],
                fields[2],
                fields[5..].join(" ")
            )
        })
        .collect();
    lines.sort();
    lines
}

/// Builds the Dockerfile's last stage with buildah, its `build` stage replaced by one holding
/// the root filesystem scripts/image-rootfs.sh assembles from this test's binary; returns the
/// image as a docker-archive. `revision` is the one scripts/image.sh labelled its image with.
fn dockerfile_build(work: &Path, image: &str, revision: &str) -> PathBuf {
    let dockerfile = std::fs::read_to_string(root().join("Dockerfile")).unwrap();
    let last_stage = dockerfile
        .rfind("\nFROM scratch")
        .expect("the Dockerfile's last stage is FROM scratch");
    assert!(
        dockerfile.contains("RUN scripts/image-rootfs.sh --binary /src/suture-gateway --rootfs /rootfs"),
        "the Dockerfile's build stage assembles /rootfs with scripts/image-rootfs.sh"
    );
    let context = work.join("dockerfile-context");
    std::fs::create_dir(&context).unwrap();
    run(Command::new("bash")
        .arg(root().join("scripts/image-rootfs.sh"))
        .arg("--binary")
        .arg(gateway_binary())
        .arg("--rootfs")
        .arg(context.join("rootfs")));
    let stand_in = "FROM scratch AS build\nCOPY rootfs /rootfs\n";
    std::fs::write(
        context.join("Dockerfile"),
        format!("{stand_in}{}", &dockerfile[last_stage..]),
    )
    .unwrap();
    run(Command::new("buildah")
        .args(["bud", "--quiet", "--format", "oci", "--layers=false"])
        .arg(format!("--build-arg=REVISION={revision}"))
        .args(["-t", image, "-f"])
        .arg(context.join("Dockerfile"))
        .arg(&context));
    let archive = work.join("dockerfile.docker.tar");
    run(Command::new("buildah")
        .args(["push", "--quiet", image])
        .arg(format!("docker-archive:{}:{image}", archive.display())));
    archive
}

fn deployment(manifests: &[Manifest]) -> &k8s::apps::v1::Deployment {
    manifests
        .iter()
        .find_map(|m| match m {
            Manifest::Deployment(d) => Some(d),
            _ => None,
        })
        .unwrap()
}

fn secret_file(manifests: &[Manifest], key: &str) -> Vec<u8> {
    manifests
        .iter()
        .find_map(|m| match m {
            Manifest::Secret(s) => s.data.as_ref()?.get(key).map(|b| b.0.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no {key} in the rendered Secret"))
}

/// The host address podman published a container port on.
fn published(container: &str, port: i32) -> String {
    let out = run(podman().args(["port", container, &format!("{port}/tcp")]));
    stdout(&out).lines().next().unwrap().trim().to_owned()
}

fn curl() -> Command {
    let mut cmd = Command::new("curl");
    cmd.args(["-sS", "--max-time", "10"]);
    cmd
}

#[test]
fn the_image_runs_the_installed_container_as_rendered() {
    let missing = podman::missing(&["buildah", "podman", "runc", "curl"]);
    if !missing.is_empty() {
        eprintln!(
            "skipped: the image test needs {} (Debian: apt-get install buildah podman runc curl)",
            missing.join(", ")
        );
        return;
    }
    let id = std::process::id();
    let cleanup = Cleanup {
        container: format!("suture-image-test-{id}"),
        image: format!("localhost/suture-gateway-test:{id}"),
    };
    let work = tempfile::tempdir().unwrap();

    // Build: the script with this test's binary (a debug build: the release build is the
    // release's business, and the layout does not depend on it).
    let started = Instant::now();
    let built = run(Command::new("bash")
        .arg(root().join("scripts/image.sh"))
        .arg("--binary")
        .arg(gateway_binary())
        .arg("--out")
        .arg(work.path())
        .args(["--image", &cleanup.image]));
    eprintln!("image built in {:?}", started.elapsed());
    let version = format!("v{}", env!("CARGO_PKG_VERSION"));
    let archive = |kind: &str| {
        work.path()
            .join(format!("suture-gateway_{version}_linux_amd64.{kind}.tar"))
    };
    let (oci, docker) = (archive("oci"), archive("docker"));
    assert_eq!(
        stdout(&built).lines().collect::<Vec<_>>(),
        [oci.to_str().unwrap(), docker.to_str().unwrap()]
    );

    // The archives: what `docker load`/`kind load image-archive` and `ctr import` read.
    let listing = layer_listing(&docker);
    for path in [
        "usr/local/bin/suture-gateway",
        "etc/ssl/certs/ca-certificates.crt",
        "etc/passwd",
        "etc/group",
        "tmp/",
    ] {
        assert!(
            listing
                .lines()
                .any(|l| l.ends_with(&format!(" {path}")) || l.ends_with(&format!(" ./{path}"))),
            "{path} missing from the layer:\n{listing}"
        );
    }
    for line in listing.lines() {
        assert!(line.contains(" 0/0 "), "not root-owned: {line}");
        assert!(!line.ends_with("bin/sh"), "a shell in the image: {line}");
    }
    let index = run(Command::new("tar").arg("-xOf").arg(&oci).arg("index.json"));
    let index: Value = serde_json::from_slice(&index.stdout).unwrap();
    assert_eq!(
        index["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"],
        cleanup.image.as_str(),
        "{index}"
    );

    // Its configuration.
    let inspect = run(podman().args(["image", "inspect", &cleanup.image]));
    let inspect: Value = serde_json::from_slice(&inspect.stdout).unwrap();
    let config = &inspect[0]["Config"];
    assert_eq!(config["User"], "65532:65532");
    assert_eq!(
        config["Entrypoint"],
        serde_json::json!(["/usr/local/bin/suture-gateway"])
    );
    let labels = &config["Labels"];
    assert_eq!(labels["org.opencontainers.image.version"], version.as_str());
    assert_eq!(
        labels["org.opencontainers.image.source"],
        "https://github.com/suture-dev/suture"
    );
    let head = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(root())
        .output();
    if let Some(head) = head.ok().filter(|out| out.status.success()) {
        let revision = labels["org.opencontainers.image.revision"].as_str().unwrap();
        assert!(revision.starts_with(stdout(&head).trim()), "{revision}");
    }

    // The Dockerfile's image stage, built with buildah on the same root filesystem (its build
    // stage, a Rust toolchain image, cannot be pulled here): the same layout and configuration.
    let dockerfile_image = format!("{}-dockerfile", cleanup.image);
    let _cleanup_dockerfile = Cleanup {
        container: format!("{}-dockerfile", cleanup.container),
        image: dockerfile_image.clone(),
    };
    let revision = config["Labels"]["org.opencontainers.image.revision"]
        .as_str()
        .unwrap();
    let from_dockerfile = dockerfile_build(work.path(), &dockerfile_image, revision);
    let inspect_dockerfile = run(podman().args(["image", "inspect", &dockerfile_image]));
    let inspect_dockerfile: Value = serde_json::from_slice(&inspect_dockerfile.stdout).unwrap();
    let comparable = |config: &Value| {
        let mut config = config.clone();
        let labels = config["Labels"].as_object_mut().unwrap();
        labels.remove("org.opencontainers.image.created");
        labels.remove("io.buildah.version");
        config
    };
    assert_eq!(comparable(&inspect_dockerfile[0]["Config"]), comparable(config));
    assert_eq!(
        listing_without_times(&layer_listing(&from_dockerfile)),
        listing_without_times(&listing)
    );

    // What a user does with the archives: load them (`podman load` reads both, as `kind load
    // image-archive` and `ctr images import` do). The container below runs the docker-archive's.
    for archive in [&oci, &docker] {
        run(podman().args(["rmi", "-f", &cleanup.image]));
        let loaded = run(podman().arg("load").arg("-i").arg(archive));
        assert!(stdout(&loaded).contains(&cleanup.image), "{}", stdout(&loaded));
        let loaded = run(podman().args(["image", "inspect", &cleanup.image]));
        let loaded: Value = serde_json::from_slice(&loaded.stdout).unwrap();
        assert_eq!(
            loaded[0]["Config"]["User"],
            "65532:65532",
            "{}",
            archive.display()
        );
        assert_eq!(
            loaded[0]["Config"]["Labels"],
            config["Labels"],
            "{}",
            archive.display()
        );
    }

    // The pod as `kubectl suture install` renders it.
    let rendered = suture()
        .args(["install", "--service-account", "ns/operator", "--self-signed"])
        .output()
        .unwrap();
    assert!(rendered.status.success(), "{}", stderr(&rendered));
    let manifests = parse_stream(&stdout(&rendered)).unwrap();
    let deployment = deployment(&manifests);
    let pod = deployment.spec.as_ref().unwrap().template.spec.clone().unwrap();
    let container = &pod.containers[0];
    let tls = work.path().join("tls");
    std::fs::create_dir(&tls).unwrap();
    for key in ["tls.crt", "tls.key"] {
        std::fs::write(tls.join(key), secret_file(&manifests, key)).unwrap();
    }
    // A Secret volume's files are 0644 by default; the directory is traversable.
    let chmod = |path: &Path, mode: &str| run(Command::new("chmod").arg(mode).arg(path));
    chmod(work.path(), "0755");
    chmod(&tls, "0755");
    chmod(&tls.join("tls.crt"), "0644");
    chmod(&tls.join("tls.key"), "0644");
    let ca = work.path().join("ca.crt");
    std::fs::write(&ca, secret_file(&manifests, "ca.crt")).unwrap();

    let mut args: Vec<String> = vec![
        "run".into(),
        "-d".into(),
        "--name".into(),
        cleanup.container.clone(),
    ];
    args.extend(podman::LIMITS.map(String::from));
    args.extend(podman::security_flags(&pod).unwrap());
    let namespace = deployment.metadata.namespace.clone().unwrap();
    args.extend(podman::env_flags(&pod, &cleanup.container, &namespace).unwrap());
    args.extend(podman::volume_flags(&pod, &[("tls", &tls)]).unwrap());
    for port in container.ports.as_ref().unwrap() {
        args.push(format!("--publish=127.0.0.1::{}", port.container_port));
    }
    let scene: PathBuf = root().join("testdata/clusters").join(SCENE);
    args.push(format!("--volume={}:/cluster:ro", scene.display()));
    args.push(cleanup.image.clone());
    args.extend(container.args.clone().unwrap());
    args.push("--cluster=/cluster".into());

    let started = Instant::now();
    run(podman().args(&args));
    let port = |name: &str| {
        container
            .ports
            .as_ref()
            .unwrap()
            .iter()
            .find(|p| p.name.as_deref() == Some(name))
            .unwrap()
            .container_port
    };
    let metrics = published(&cleanup.container, port("metrics"));
    let https = published(&cleanup.container, port("https"));

    // Health, then readiness.
    loop {
        let out = curl()
            .arg("-f")
            .arg(format!("http://{metrics}/healthz"))
            .output()
            .unwrap();
        if out.status.success() {
            assert_eq!(stdout(&out).trim(), "ok");
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no /healthz after 60s:\n{}",
            stderr(&podman().args(["logs", &cleanup.container]).output().unwrap())
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    eprintln!("container healthy {:?} after `podman run`", started.elapsed());
    let ready = run(curl().arg("-f").arg(format!("http://{metrics}/readyz")));
    let ready: Value = serde_json::from_slice(&ready.stdout).unwrap();
    assert_eq!(ready["ready"], true, "{ready}");
    assert_eq!(ready["modelReady"], true, "{ready}");

    // One recorded review, over HTTPS to the name the certificate carries, verified against
    // the caBundle the install rendered, at the path the webhook configuration names.
    let host = format!("{}.{namespace}.svc", deployment.metadata.name.clone().unwrap());
    let https_port = https.rsplit(':').next().unwrap();
    let path = "/validate";
    assert!(stdout(&rendered).contains(&format!("path: {path}")));
    let review_file = root().join("testdata/reviews").join(REVIEW);
    let review: Value = serde_json::from_slice(&std::fs::read(&review_file).unwrap()).unwrap();
    let answer = run(curl()
        .arg("--cacert")
        .arg(&ca)
        .arg("--resolve")
        .arg(format!("{host}:{https_port}:127.0.0.1"))
        .args(["-H", "Content-Type: application/json", "--data-binary"])
        .arg(format!("@{}", review_file.display()))
        .arg(format!("https://{host}:{https_port}{path}")));
    let answer: Value = serde_json::from_slice(&answer.stdout).unwrap();
    let response = &answer["response"];
    assert_eq!(response["uid"], review["request"]["uid"], "{answer}");
    assert_eq!(response["allowed"], false, "{answer}");
    assert_eq!(response["status"]["code"], 403, "{answer}");

    // The process as the kernel sees it: the rendered user, no capabilities, no new
    // privileges, and a read-only root with nothing writable mounted on /tmp.
    let inspect = run(podman().args(["inspect", "--format", "{{.State.Pid}}", &cleanup.container]));
    let pid = stdout(&inspect).trim().to_owned();
    let confinement = podman::Confinement::of(pid.parse().unwrap()).unwrap();
    confinement.check_installed(65532, 65532).unwrap();

    // SIGTERM: it drains and exits 0.
    run(podman().args(["kill", "--signal", "TERM", &cleanup.container]));
    let stopping = Instant::now();
    let waited = run(podman().args(["wait", &cleanup.container]));
    assert_eq!(stdout(&waited).trim(), "0", "exit code");
    eprintln!("stopped {:?} after SIGTERM", stopping.elapsed());
    let logs = run(podman().args(["logs", &cleanup.container]));
    let (out, err) = (stdout(&logs), stderr(&logs));
    assert!(
        err.contains("draining in-flight requests") && err.contains("stopped"),
        "{err}"
    );
    assert!(
        !err.contains('\u{1b}'),
        "colour codes in a log that is no terminal:\n{err}"
    );
    // The decision log on stdout (--decision-log=stdout) records the denial.
    let decision = out
        .lines()
        .find(|line| line.contains(review["request"]["uid"].as_str().unwrap()))
        .unwrap_or_else(|| panic!("no decision for the review in:\n{out}"));
    assert!(decision.contains("\"verdict\":\"denied\""), "{decision}");
    drop(cleanup);
}

/// The image the release builds is the one `kubectl suture install` names by default.
#[test]
fn the_install_names_the_image_the_release_builds() {
    let out = run(Command::new("bash")
        .arg(root().join("scripts/image.sh"))
        .arg("--print-ref"));
    let built = stdout(&out).trim().to_owned();
    let rendered = suture().arg("install").output().unwrap();
    let manifests = parse_stream(&stdout(&rendered)).unwrap();
    let pod = deployment(&manifests)
        .spec
        .clone()
        .unwrap()
        .template
        .spec
        .unwrap();
    assert_eq!(pod.containers[0].image.as_deref(), Some(built.as_str()));
}
