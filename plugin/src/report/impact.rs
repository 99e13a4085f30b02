//! The impact estimate as a readable tree (the default output of `kubectl suture impact`).

use std::fmt::Write;

use policies_cel::impact::Impact;

use crate::style::Style;

/// One section of the tree: a title and its lines.
struct Section {
    title: String,
    lines: Vec<String>,
}

fn sections(impact: &Impact, style: Style) -> Vec<Section> {
    let mut out = Vec::new();
    let mut add = |title: String, lines: Vec<String>| {
        if !lines.is_empty() {
            out.push(Section { title, lines });
        }
    };
    add(
        format!("deleted ({})", impact.deleted.len()),
        impact
            .deleted
            .iter()
            .map(|d| format!("{} — {}", d.object.display(), style.dim(&d.reason)))
            .collect(),
    );
    add(
        format!("pods stopped ({})", impact.pods.len()),
        impact
            .pods
            .iter()
            .map(|p| {
                let node = p.node.as_deref().map(|n| format!(" on {n}")).unwrap_or_default();
                let back = if p.replaced { ", replaced" } else { "" };
                format!(
                    "{}/{}{node} — {}{back}",
                    p.namespace,
                    p.name,
                    style.dim(&p.reason)
                )
            })
            .collect(),
    );
    add(
        format!("volumes losing data ({})", impact.volumes.len()),
        impact
            .volumes
            .iter()
            .map(|v| {
                let volume = v.volume.as_deref().map(|n| format!(" ({n})")).unwrap_or_default();
                let live = if v.in_use_by.is_empty() {
                    String::new()
                } else {
                    format!(", in use by {}", v.in_use_by.join(", "))
                };
                format!(
                    "{}/{}{volume}{live} — {}",
                    v.namespace,
                    v.claim,
                    style.dim(&v.reason)
                )
            })
            .collect(),
    );
    let flag = |bad: bool, word: &str| {
        if bad {
            format!("  {}", style.bad(&format!("✗ {word}")))
        } else {
            String::new()
        }
    };
    add(
        "workloads".into(),
        impact
            .workloads
            .iter()
            .map(|w| {
                let down = w.ready_before > 0 && w.ready_worst == 0;
                format!(
                    "{}: ready {} → {} (worst {}){}",
                    w.workload.display(),
                    w.ready_before,
                    w.ready_after,
                    w.ready_worst,
                    flag(down, "down")
                )
            })
            .collect(),
    );
    add(
        "services".into(),
        impact
            .services
            .iter()
            .map(|s| {
                let lost = s.ready_before > 0 && s.ready_after == 0;
                format!(
                    "{}/{}: ready endpoints {} → {}{}",
                    s.namespace,
                    s.name,
                    s.ready_before,
                    s.ready_after,
                    flag(lost, "no endpoints")
                )
            })
            .collect(),
    );
    add(
        "disruption budgets".into(),
        impact
            .pdbs
            .iter()
            .map(|p| {
                format!(
                    "{}/{}: healthy {} → {}, needs {}{}",
                    p.namespace,
                    p.name,
                    p.current_healthy,
                    p.healthy_after,
                    p.desired_healthy,
                    flag(p.violated, "violated")
                )
            })
            .collect(),
    );
    add(
        "quorum".into(),
        impact
            .quorum
            .iter()
            .map(|q| {
                format!(
                    "StatefulSet {}/{}: ready {} → {}, majority {}{}",
                    q.namespace,
                    q.name,
                    q.ready_before,
                    q.ready_after,
                    q.majority,
                    flag(q.lost, "quorum lost")
                )
            })
            .collect(),
    );
    add(
        format!("broken references ({})", impact.broken_references.len()),
        impact
            .broken_references
            .iter()
            .map(|b| {
                format!(
                    "{}/{} reads key {} of {} {}/{}",
                    b.namespace, b.pod, b.key, b.kind, b.namespace, b.name
                )
            })
            .collect(),
    );
    add(
        format!(
            "force-deleted on unreachable nodes ({})",
            impact.unconfirmed_deletions.len()
        ),
        impact
            .unconfirmed_deletions
            .iter()
            .map(|u| {
                let claims = if u.claims.is_empty() {
                    String::new()
                } else {
                    format!(", claims {}", u.claims.join(", "))
                };
                format!(
                    "{}/{} of StatefulSet {} on unreachable Node {}{claims} {}",
                    u.namespace,
                    u.pod,
                    u.stateful_set,
                    u.node,
                    flag(true, "may run twice")
                )
            })
            .collect(),
    );
    add(
        format!("outside the cluster ({})", impact.external.len()),
        impact
            .external
            .iter()
            .map(|e| {
                format!(
                    "{} {} in {} — {}, through {}{}",
                    e.kind,
                    e.id,
                    e.provider,
                    style.dim(&e.reason),
                    e.by,
                    flag(e.data_loss, "data lost")
                )
            })
            .collect(),
    );
    add(
        format!("intended by ({})", impact.intended.len()),
        impact
            .intended
            .iter()
            .map(|i| format!("{} — {}", i.by, style.dim(&i.reason)))
            .collect(),
    );
    add(
        format!("load balancers torn down ({})", impact.released_addresses.len()),
        impact
            .released_addresses
            .iter()
            .map(|r| {
                format!(
                    "{}/{} {}{}",
                    r.namespace,
                    r.service,
                    r.addresses.join(", "),
                    flag(true, "address released")
                )
            })
            .collect(),
    );
    add(
        format!(
            "pods losing their ServiceAccount ({})",
            impact.lost_service_accounts.len()
        ),
        impact
            .lost_service_accounts
            .iter()
            .map(|l| {
                format!(
                    "{}/{} runs as ServiceAccount {}{}",
                    l.namespace,
                    l.pod,
                    l.service_account,
                    if l.token {
                        flag(true, "token rejected")
                    } else {
                        flag(true, "cannot be replaced")
                    }
                )
            })
            .collect(),
    );
    add(
        format!("pods left naming a deleted class ({})", impact.lost_classes.len()),
        impact
            .lost_classes
            .iter()
            .map(|l| {
                format!(
                    "{}/{} names {} {} (controller: {}){}",
                    l.namespace,
                    l.pod,
                    l.kind,
                    l.class,
                    l.controller,
                    flag(true, "cannot be replaced")
                )
            })
            .collect(),
    );
    add(
        format!(
            "pods whose replacements Pod Security refuses ({})",
            impact.pod_security_violations.len()
        ),
        impact
            .pod_security_violations
            .iter()
            .map(|v| {
                format!(
                    "{}/{}: level {} refuses its replacement ({}; controller: {}){}",
                    v.namespace,
                    v.pod,
                    v.level,
                    v.reasons.join(", "),
                    v.controller,
                    flag(true, "cannot be replaced")
                )
            })
            .collect(),
    );
    add(
        "notes".into(),
        impact.notes.iter().map(|n| style.dim(n)).collect(),
    );
    out
}

/// The tree: the action, the summary line, then one branch per non-empty section.
pub fn tree(impact: &Impact, style: Style) -> String {
    let s = &impact.summary;
    let mut out = String::new();
    let _ = writeln!(out, "{}", style.bold(&impact.action));
    let summary = format!(
        "deleted {} · podsDisrupted {} · dataLoss {} · servicesWithoutEndpoints {} · pdbViolations {} · workloadsDown {} · quorumLost {} · brokenReferences {}",
        s.deleted,
        s.pods_disrupted,
        s.data_loss,
        s.services_without_endpoints,
        s.pdb_violations,
        s.workloads_down,
        s.quorum_lost,
        s.broken_references
    );
    // Shown when an operator destroys something outside the cluster (most requests: never).
    let summary = if s.external_data_loss > 0 {
        format!("{summary} · externalDataLoss {}", s.external_data_loss)
    } else {
        summary
    };
    let sections = sections(impact, style);
    let _ = writeln!(out, "{} summary", if sections.is_empty() { "└─" } else { "├─" });
    let _ = writeln!(out, "{}  {summary}", if sections.is_empty() { " " } else { "│" });
    for (index, section) in sections.iter().enumerate() {
        let last = index + 1 == sections.len();
        let (branch, rail) = if last {
            ("└─", "   ")
        } else {
            ("├─", "│  ")
        };
        let _ = writeln!(out, "{branch} {}", section.title);
        for (line_index, line) in section.lines.iter().enumerate() {
            let leaf = if line_index + 1 == section.lines.len() {
                "└─"
            } else {
                "├─"
            };
            let _ = writeln!(out, "{rail}{leaf} {line}");
        }
    }
    out
}
