//! The image mode (`SUTURE_E2E_GATEWAY=image`): the gateway kube-apiserver calls is the image's,
//! run as the install renders its pod. The kernel's view of its process: the rendered user and
//! group, no capabilities, no new privileges, a read-only root with nothing on /tmp, the image's
//! executable, exactly the rendered arguments (ports aside) and the pod's environment; and its
//! model built over the in-cluster credentials. In the host mode it says it has nothing to check.

use std::collections::BTreeSet;

use suture_e2e::Cluster;
use suture_e2e::gateway::{self, LEDGER_IDENTITY};
use suture_e2e::harness::{Test, TestFuture};
use suture_e2e::podman::Confinement;

pub const TESTS: [Test; 1] = [Test {
    name: "image::the_gateway_runs_as_the_install_renders_its_pod",
    run: the_gateway_runs_as_the_install_renders_its_pod,
}];

/// The NUL-separated strings of `/proc/PID/<file>`.
fn proc_strings(pid: u32, file: &str) -> anyhow::Result<Vec<String>> {
    let bytes = std::fs::read(format!("/proc/{pid}/{file}"))?;
    Ok(bytes
        .split(|b| *b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect())
}

/// The flag names (`--listen`) of `args`.
fn names(args: &[String]) -> BTreeSet<&str> {
    args.iter()
        .map(|arg| arg.split_once('=').map_or(arg.as_str(), |(name, _)| name))
        .collect()
}

fn the_gateway_runs_as_the_install_renders_its_pod(cluster: &mut Cluster) -> TestFuture<'_> {
    Box::pin(async move {
        gateway::ensure(cluster).await?;
        let gateway = cluster
            .gateway
            .as_ref()
            .ok_or_else(|| anyhow::anyhow!("no gateway"))?;
        let Some(pod) = gateway.pod() else {
            println!(
                "  nothing to check: the gateway runs on the host (SUTURE_E2E_GATEWAY=image runs its image)"
            );
            return Ok(());
        };
        let pid = gateway
            .pid()
            .ok_or_else(|| anyhow::anyhow!("the gateway's container has no process"))?;

        let context = pod.spec().security_context.clone().unwrap_or_default();
        let (user, group) = context
            .run_as_user
            .zip(context.run_as_group)
            .ok_or_else(|| anyhow::anyhow!("the rendered pod names no user and group"))?;
        let confinement = Confinement::of(pid)?;
        confinement.check_installed(u32::try_from(user)?, u32::try_from(group)?)?;
        println!("  process {pid}: {confinement:?}");

        let exe = std::fs::read_link(format!("/proc/{pid}/exe"))?;
        anyhow::ensure!(
            exe == std::path::Path::new("/usr/local/bin/suture-gateway"),
            "the gateway runs {}, not the image's entrypoint",
            exe.display()
        );

        // The rendered arguments, every one of them, the two listening ports aside; and the
        // suite's one addition.
        let cmdline = proc_strings(pid, "cmdline")?;
        let running = cmdline.get(1..).unwrap_or_default();
        anyhow::ensure!(
            running == gateway.args(),
            "runs {running:?}, not {:?}",
            gateway.args()
        );
        let rendered = &pod
            .spec()
            .containers
            .first()
            .and_then(|c| c.args.clone())
            .unwrap_or_default();
        let on_ports = ["--listen", "--metrics-listen"];
        for arg in rendered {
            let name = arg.split_once('=').map_or(arg.as_str(), |(name, _)| name);
            anyhow::ensure!(
                on_ports.contains(&name) || running.contains(arg),
                "the rendered {arg} is not what the gateway runs with: {running:?}"
            );
        }
        let added: Vec<&str> = names(running).difference(&names(rendered)).copied().collect();
        anyhow::ensure!(added == ["--poll-interval"], "arguments not rendered: {added:?}");

        // The pod's environment: its name (the ledger identity), namespace and the in-cluster
        // API server; no kubeconfig.
        let environment = proc_strings(pid, "environ")?;
        for expected in [
            format!("POD_NAME={LEDGER_IDENTITY}"),
            format!("POD_NAMESPACE={}", gateway::NAMESPACE),
        ] {
            anyhow::ensure!(
                environment.contains(&expected),
                "no {expected} in {environment:?}"
            );
        }
        anyhow::ensure!(
            environment
                .iter()
                .any(|v| v.starts_with("KUBERNETES_SERVICE_HOST=")),
            "no in-cluster API server in {environment:?}"
        );
        anyhow::ensure!(
            !environment.iter().any(|v| v.starts_with("KUBECONFIG="))
                && !names(running).contains("--kubeconfig"),
            "the gateway is given a kubeconfig"
        );

        // Its model is built from the cluster over the mounted ServiceAccount token.
        let (status, detail) = gateway.readiness().await?;
        anyhow::ensure!(
            status == 200 && detail["modelReady"] == true,
            "/readyz {status}: {detail}"
        );
        println!(
            "  {} runs as {user}:{group}, confined, with the {} rendered arguments and the pod's environment; model ready",
            pod.image(),
            rendered.len()
        );
        Ok(())
    })
}
