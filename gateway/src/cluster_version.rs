//! The Kubernetes version the gateway compiles policies for (`--kubernetes-version`): given, or
//! with `auto` read once at start from the API server's `/version` (its own version: the
//! policies the gateway judges are stored ones, which kube-apiserver runs with every library
//! it knows). A cluster outside the versions Suture knows is judged with the nearest one, and
//! the start-up log says so.

use std::fmt;
use std::str::FromStr;

use anyhow::Context as _;
use k8s_openapi::apimachinery::pkg::version::Info;
use policies_cel::{KubernetesVersion, VersionError};

/// What `--kubernetes-version` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VersionSetting {
    Given(KubernetesVersion),
    /// The API server's own version, asked at start (live mode only).
    Auto,
}

impl Default for VersionSetting {
    fn default() -> Self {
        VersionSetting::Given(KubernetesVersion::DEFAULT)
    }
}

impl fmt::Display for VersionSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VersionSetting::Given(version) => version.fmt(f),
            VersionSetting::Auto => f.write_str("auto"),
        }
    }
}

impl FromStr for VersionSetting {
    type Err = VersionError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if text.trim().eq_ignore_ascii_case("auto") {
            return Ok(VersionSetting::Auto);
        }
        text.parse().map(VersionSetting::Given)
    }
}

/// The version a cluster reports, as the nearest one Suture knows, and a note when it is not
/// the cluster's own.
pub fn from_info(info: &Info) -> anyhow::Result<(KubernetesVersion, Option<String>)> {
    let (major, minor) = major_minor(info).with_context(|| {
        format!(
            "the API server reports no readable version ({:?})",
            info.git_version
        )
    })?;
    if let Ok(version) = KubernetesVersion::new(major, minor) {
        return Ok((version, None));
    }
    let nearest = if (major, minor) > (1, KubernetesVersion::NEWEST.minor()) {
        KubernetesVersion::NEWEST
    } else {
        KubernetesVersion::OLDEST
    };
    let note = format!(
        "the cluster runs Kubernetes {major}.{minor}; Suture knows the CEL environments of {} to {}, and compiles policies for {nearest}",
        KubernetesVersion::OLDEST,
        KubernetesVersion::NEWEST
    );
    Ok((nearest, Some(note)))
}

/// Major and minor from `gitVersion` (`v1.36.2-gke.1000`), else from `major` and `minor`
/// (`"1"`, `"36+"`).
fn major_minor(info: &Info) -> Option<(u16, u16)> {
    let number = |text: &str| text.trim_end_matches('+').parse::<u16>().ok();
    let git = info.git_version.trim_start_matches(['v', 'V']);
    let mut parts = git.split(['.', '-', '+']);
    if let (Some(major), Some(minor)) = (parts.next().and_then(number), parts.next().and_then(number)) {
        return Some((major, minor));
    }
    Some((number(&info.major)?, number(&info.minor)?))
}

/// Asks the API server for its version (`GET /version`).
pub async fn read(client: &kube::Client) -> anyhow::Result<(KubernetesVersion, Option<String>)> {
    let info = client
        .apiserver_version()
        .await
        .context("cannot read the API server's /version")?;
    from_info(&info)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::{Request, Response};
    use kube::client::Body;
    use tower_test::mock;

    fn info(git_version: &str, major: &str, minor: &str) -> Info {
        Info {
            git_version: git_version.into(),
            major: major.into(),
            minor: minor.into(),
            ..Info::default()
        }
    }

    #[test]
    fn the_setting_is_a_version_or_auto() {
        assert_eq!("auto".parse(), Ok(VersionSetting::Auto));
        assert_eq!(
            "v1.35.4".parse(),
            Ok(VersionSetting::Given(KubernetesVersion::V1_35))
        );
        assert!("1.99".parse::<VersionSetting>().is_err());
        assert_eq!(VersionSetting::default().to_string(), "1.36");
    }

    #[test]
    fn versions_are_read_from_what_the_api_server_reports() {
        let read = |i: &Info| from_info(i).unwrap();
        assert_eq!(
            read(&info("v1.37.1", "1", "37")),
            (KubernetesVersion::V1_37, None)
        );
        assert_eq!(
            read(&info("v1.34.3-eks-4096722", "1", "34+")),
            (KubernetesVersion::V1_34, None)
        );
        assert_eq!(read(&info("", "1", "36+")), (KubernetesVersion::V1_36, None));
        let (version, note) = read(&info("v1.40.0", "1", "40"));
        assert_eq!(version, KubernetesVersion::NEWEST);
        assert!(note.is_some_and(|n| n.contains("runs Kubernetes 1.40")));
        let (version, note) = read(&info("v1.31.2", "1", "31"));
        assert_eq!((version, note.is_some()), (KubernetesVersion::OLDEST, true));
        assert!(from_info(&info("", "", "")).is_err());
    }

    /// kube's mock-service pattern: the client's one request answered by this test.
    #[tokio::test]
    async fn auto_asks_the_api_server_once() {
        let (service, mut handle) = mock::pair::<Request<Body>, Response<Body>>();
        let client = kube::Client::new(service, "default");
        let server = tokio::spawn(async move {
            let (request, send) = handle.next_request().await.expect("a request");
            assert_eq!(request.uri().path(), "/version");
            let body = serde_json::json!({
                "major": "1", "minor": "35", "gitVersion": "v1.35.2", "gitCommit": "abc",
                "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z",
                "goVersion": "go1.25", "compiler": "gc", "platform": "linux/amd64"
            });
            send.send_response(Response::new(Body::from(body.to_string().into_bytes())));
        });
        let (version, note) = read(&client).await.unwrap();
        assert_eq!((version, note), (KubernetesVersion::V1_35, None));
        server.await.unwrap();
    }
}
