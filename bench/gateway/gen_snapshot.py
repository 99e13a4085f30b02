#!/usr/bin/env python3
"""Generates a realistic cluster snapshot of about N pods, as `kubectl get -o json` prints a List.

The shape of a multi-tenant cluster: Nodes; tenant namespaces each holding Deployments (with their
ReplicaSets and pods), StatefulSets (pods with PersistentVolumeClaims bound to PersistentVolumes),
Services selecting the pods with EndpointSlices listing them, PodDisruptionBudgets, ConfigMaps and
Secrets the pods read. Labels, owner references, claims and endpoint targets all match, so the
impact estimate walks the same indexes it walks in a real cluster. Objects carry the fields the
API server fills (status conditions, tolerations, the projected token volume) but no managedFields.

The `databases` namespace reproduces testdata/clusters/database/snapshot.yaml's StatefulSet
pg-main (3 ready members, PDB minAvailable 2), so testdata/reviews/statefulset-update-scale-down.json
and pod-delete-pg-main-0.json find their target.

Standard library only; deterministic for a given --seed; streams its output (150k pods in a few
hundred MB without holding them in memory).

    python3 bench/gateway/gen_snapshot.py --pods 10000 -o /tmp/snap-10k.json
    python3 bench/gateway/gen_snapshot.py --pods 150000 --split 10000 -o /tmp/snap-150k/
"""

import argparse
import json
import os
import random
import sys
import uuid

NS_UUID = uuid.UUID("6f1b7c52-3a0e-4d8e-9c1f-2b5a7e9d4c30")
CREATED = "2025-01-08T17:02:11Z"


HEADER = '{"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":""},"items":[\n'
FOOTER = "\n]}\n"


class Gen:
    def __init__(self, opener, seed):
        self.opener = opener
        self.files = 0
        self.out = None
        self.rand = random.Random(seed)
        self.count = 0
        self.pods = 0
        self.pods_in_file = 0
        self.first = True

    def open_next(self):
        """Ends the current List file (if any) and starts the next one."""
        self.close()
        self.out = self.opener(self.files)
        self.files += 1
        self.out.write(HEADER)
        self.first = True
        self.pods_in_file = 0

    def close(self):
        if self.out is not None:
            self.out.write(FOOTER)
            if self.out is not sys.stdout:
                self.out.close()
            self.out = None

    def uid(self, *parts):
        return str(uuid.uuid5(NS_UUID, "/".join(parts)))

    def emit(self, obj):
        self.out.write("" if self.first else ",\n")
        self.first = False
        self.out.write(json.dumps(obj, separators=(",", ":")))
        self.count += 1
        if obj["kind"] == "Pod":
            self.pods += 1
            self.pods_in_file += 1

    def meta(self, kind, namespace, name, labels=None, owner=None, extra=None):
        meta = {
            "creationTimestamp": CREATED,
            "name": name,
            "resourceVersion": str(1000 + self.count),
            "uid": self.uid(kind, namespace or "", name),
        }
        if namespace:
            meta["namespace"] = namespace
        if labels:
            meta["labels"] = dict(labels)
        if owner:
            meta["ownerReferences"] = [
                {
                    "apiVersion": owner["apiVersion"],
                    "blockOwnerDeletion": True,
                    "controller": True,
                    "kind": owner["kind"],
                    "name": owner["metadata"]["name"],
                    "uid": owner["metadata"]["uid"],
                }
            ]
        if extra:
            meta.update(extra)
        return meta


def node(g, name, zone):
    g.emit(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": g.meta(
                "Node",
                None,
                name,
                {
                    "kubernetes.io/hostname": name,
                    "kubernetes.io/os": "linux",
                    "node.kubernetes.io/instance-type": "m6i.4xlarge",
                    "topology.kubernetes.io/zone": zone,
                },
            ),
            "spec": {"providerID": f"aws:///{zone}/i-{g.uid('i', name)[:17]}"},
            "status": {
                "allocatable": {"cpu": "15890m", "memory": "60055064Ki", "pods": "110"},
                "capacity": {"cpu": "16", "memory": "64786728Ki", "pods": "110"},
                "conditions": [
                    {"lastHeartbeatTime": CREATED, "lastTransitionTime": CREATED, "message": "kubelet is posting ready status",
                     "reason": "KubeletReady", "status": "True", "type": "Ready"}
                ],
                "nodeInfo": {"kubeletVersion": "v1.33.2", "containerRuntimeVersion": "containerd://1.7.27",
                             "osImage": "Ubuntu 24.04.2 LTS", "architecture": "amd64", "operatingSystem": "linux"},
            },
        }
    )


def namespace(g, name, team):
    g.emit(
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": g.meta("Namespace", None, name, {"kubernetes.io/metadata.name": name, "team": team}),
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"},
        }
    )


def config_map(g, ns, name, keys):
    g.emit(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": g.meta("ConfigMap", ns, name, {"app.kubernetes.io/part-of": ns}),
            "data": {k: f"value-of-{k}" for k in keys},
        }
    )


def secret(g, ns, name, keys):
    g.emit(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": g.meta("Secret", ns, name, {"app.kubernetes.io/part-of": ns}),
            "type": "Opaque",
            "data": {k: "c2VjcmV0LXZhbHVl" for k in keys},
        }
    )


def pod_spec(g, ns, app, image, node_name, claim=None, config=None, creds=None, hostname=None, subdomain=None):
    token = f"kube-api-access-{g.uid('tok', ns, app, node_name)[:5]}"
    mounts = [{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "name": token, "readOnly": True}]
    volumes = [
        {
            "name": token,
            "projected": {
                "defaultMode": 420,
                "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}},
                    {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}, "path": "namespace"}]}},
                ],
            },
        }
    ]
    env_from = []
    if claim:
        mounts.append({"mountPath": "/data", "name": "data"})
        volumes.append({"name": "data", "persistentVolumeClaim": {"claimName": claim}})
    if config:
        mounts.append({"mountPath": "/etc/app", "name": "config", "readOnly": True})
        volumes.append({"name": "config", "configMap": {"name": config, "defaultMode": 420}})
    if creds:
        env_from.append({"secretRef": {"name": creds}})
    container = {
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "name": app,
        "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
        "resources": {"limits": {"memory": "512Mi"}, "requests": {"cpu": "100m", "memory": "256Mi"}},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "volumeMounts": mounts,
    }
    if env_from:
        container["envFrom"] = env_from
    spec = {
        "containers": [container],
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": True,
        "nodeName": node_name,
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": 0,
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "serviceAccount": app,
        "serviceAccountName": app,
        "terminationGracePeriodSeconds": 30,
        "tolerations": [
            {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300},
            {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300},
        ],
        "volumes": volumes,
    }
    if hostname:
        spec["hostname"] = hostname
        spec["subdomain"] = subdomain
    return spec


def pod_status(ip):
    conditions = [
        {"lastProbeTime": None, "lastTransitionTime": CREATED, "status": "True", "type": t}
        for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")
    ]
    return {"conditions": conditions, "phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}], "qosClass": "Burstable",
            "startTime": CREATED}


class Ips:
    def __init__(self):
        self.n = 0

    def next(self):
        self.n += 1
        return f"10.{(self.n >> 16) & 255}.{(self.n >> 8) & 255}.{self.n & 255}"


def service(g, ns, name, selector, headless=False):
    spec = {
        "internalTrafficPolicy": "Cluster",
        "ipFamilies": ["IPv4"],
        "ipFamilyPolicy": "SingleStack",
        "ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": "http"}],
        "selector": dict(selector),
        "sessionAffinity": "None",
        "type": "ClusterIP",
    }
    if headless:
        spec["clusterIP"] = "None"
        spec["clusterIPs"] = ["None"]
    else:
        ip = f"172.20.{g.rand.randrange(256)}.{g.rand.randrange(1, 255)}"
        spec["clusterIP"] = ip
        spec["clusterIPs"] = [ip]
    obj = {"apiVersion": "v1", "kind": "Service", "metadata": g.meta("Service", ns, name, selector), "spec": spec,
           "status": {"loadBalancer": {}}}
    g.emit(obj)
    return obj


def endpoint_slice(g, ns, svc, pods):
    name = f"{svc['metadata']['name']}-{g.uid('eps', ns, svc['metadata']['name'])[:5]}"
    endpoints = [
        {
            "addresses": [p["status"]["podIP"]],
            "conditions": {"ready": True, "serving": True, "terminating": False},
            "nodeName": p["spec"]["nodeName"],
            "targetRef": {"kind": "Pod", "name": p["metadata"]["name"], "namespace": ns, "uid": p["metadata"]["uid"]},
        }
        for p in pods
    ]
    g.emit(
        {
            "addressType": "IPv4",
            "apiVersion": "discovery.k8s.io/v1",
            "endpoints": endpoints,
            "kind": "EndpointSlice",
            "metadata": g.meta(
                "EndpointSlice", ns, name,
                {"endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
                 "kubernetes.io/service-name": svc["metadata"]["name"]},
                owner=svc, extra={"generateName": svc["metadata"]["name"] + "-"},
            ),
            "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
        }
    )


def pdb(g, ns, name, selector, min_available=None, max_unavailable=None, expected=0):
    spec = {"selector": {"matchLabels": dict(selector)}}
    if min_available is not None:
        spec["minAvailable"] = min_available
    else:
        spec["maxUnavailable"] = max_unavailable
    desired = min_available if min_available is not None else max(expected - max_unavailable, 0)
    g.emit(
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": g.meta("PodDisruptionBudget", ns, name, selector),
            "spec": spec,
            "status": {"currentHealthy": expected, "desiredHealthy": desired, "disruptionsAllowed": max(expected - desired, 0),
                       "expectedPods": expected, "observedGeneration": 1},
        }
    )


def deployment(g, ns, app, replicas, nodes, ips, config, creds):
    labels = {"app.kubernetes.io/name": app, "app.kubernetes.io/instance": f"{ns}-{app}"}
    selector = {"app.kubernetes.io/instance": f"{ns}-{app}"}
    image = f"registry.example.com/{ns}/{app}:1.{g.rand.randrange(40)}.{g.rand.randrange(10)}"
    template_spec = pod_spec(g, ns, app, image, "", config=config, creds=creds)
    del template_spec["nodeName"]
    dep = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": g.meta("Deployment", ns, app, labels, extra={"generation": 3, "annotations": {"deployment.kubernetes.io/revision": "3"}}),
        "spec": {
            "progressDeadlineSeconds": 600,
            "replicas": replicas,
            "revisionHistoryLimit": 10,
            "selector": {"matchLabels": selector},
            "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}, "type": "RollingUpdate"},
            "template": {"metadata": {"labels": labels}, "spec": template_spec},
        },
        "status": {"availableReplicas": replicas, "observedGeneration": 3, "readyReplicas": replicas, "replicas": replicas,
                   "updatedReplicas": replicas},
    }
    g.emit(dep)
    hash_ = g.uid("hash", ns, app)[:10].replace("-", "")
    rs_labels = dict(labels, **{"pod-template-hash": hash_})
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": g.meta("ReplicaSet", ns, f"{app}-{hash_}", rs_labels, owner=dep,
                           extra={"annotations": {"deployment.kubernetes.io/desired-replicas": str(replicas),
                                                  "deployment.kubernetes.io/revision": "3"}}),
        "spec": {"replicas": replicas, "selector": {"matchLabels": dict(selector, **{"pod-template-hash": hash_})},
                 "template": {"metadata": {"labels": rs_labels}, "spec": template_spec}},
        "status": {"availableReplicas": replicas, "fullyLabeledReplicas": replicas, "observedGeneration": 3,
                   "readyReplicas": replicas, "replicas": replicas},
    }
    g.emit(rs)
    pods = []
    suffixes = set()
    for i in range(replicas):
        salt = 0
        while (suffix := g.uid("pod", ns, app, str(i), str(salt))[:5]) in suffixes:
            salt += 1  # pod names are unique, as the ReplicaSet controller makes them
        suffixes.add(suffix)
        name = f"{app}-{hash_}-{suffix}"
        p = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": g.meta("Pod", ns, name, rs_labels, owner=rs, extra={"generateName": f"{app}-{hash_}-"}),
            "spec": pod_spec(g, ns, app, image, g.rand.choice(nodes), config=config, creds=creds),
            "status": pod_status(ips.next()),
        }
        g.emit(p)
        pods.append(p)
    svc = service(g, ns, app, selector)
    endpoint_slice(g, ns, svc, pods)
    if replicas >= 2:
        pdb(g, ns, app, selector, max_unavailable=1, expected=replicas)


def stateful_set(g, ns, app, replicas, nodes, ips, name_label="postgresql", uid=None, min_available=None):
    labels = {"app.kubernetes.io/name": name_label, "app.kubernetes.io/instance": app}
    selector = {"app.kubernetes.io/instance": app}
    image = "registry.example.com/db/postgres:16.4"
    template_spec = pod_spec(g, ns, app, image, "", claim="data")
    del template_spec["nodeName"]
    template_spec["volumes"] = [v for v in template_spec["volumes"] if v["name"] != "data"]
    meta = g.meta("StatefulSet", ns, app, dict(labels, **{"app.kubernetes.io/managed-by": "pg-operator"}), extra={"generation": 7})
    if uid:
        meta["uid"] = uid
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": meta,
        "spec": {
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
            "podManagementPolicy": "OrderedReady",
            "replicas": replicas,
            "revisionHistoryLimit": 10,
            "selector": {"matchLabels": selector},
            "serviceName": f"{app}-headless",
            "template": {"metadata": {"labels": labels}, "spec": template_spec},
            "updateStrategy": {"rollingUpdate": {"partition": 0}, "type": "RollingUpdate"},
            "volumeClaimTemplates": [
                {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
                 "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "200Gi"}},
                          "storageClassName": "fast-ssd", "volumeMode": "Filesystem"}}
            ],
        },
        "status": {"availableReplicas": replicas, "currentReplicas": replicas, "observedGeneration": 7,
                   "readyReplicas": replicas, "replicas": replicas, "updatedReplicas": replicas},
    }
    g.emit(sts)
    pods = []
    for i in range(replicas):
        pod_name = f"{app}-{i}"
        claim_name = f"data-{app}-{i}"
        claim_uid = g.uid("PersistentVolumeClaim", ns, claim_name)
        pv_name = f"pvc-{claim_uid}"
        g.emit(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": g.meta("PersistentVolumeClaim", ns, claim_name, labels,
                                   extra={"finalizers": ["kubernetes.io/pvc-protection"]}),
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "200Gi"}},
                         "storageClassName": "fast-ssd", "volumeMode": "Filesystem", "volumeName": pv_name},
                "status": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "200Gi"}, "phase": "Bound"},
            }
        )
        g.emit(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": g.meta("PersistentVolume", None, pv_name, None,
                                   extra={"annotations": {"pv.kubernetes.io/provisioned-by": "ebs.csi.aws.com"},
                                          "finalizers": ["kubernetes.io/pv-protection"]}),
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "capacity": {"storage": "200Gi"},
                    "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "name": claim_name, "namespace": ns,
                                 "uid": claim_uid},
                    "csi": {"driver": "ebs.csi.aws.com", "fsType": "ext4", "volumeHandle": f"vol-{claim_uid[:17]}"},
                    "persistentVolumeReclaimPolicy": "Delete",
                    "storageClassName": "fast-ssd",
                    "volumeMode": "Filesystem",
                },
                "status": {"phase": "Bound"},
            }
        )
        pod_labels = dict(labels, **{"apps.kubernetes.io/pod-index": str(i), "statefulset.kubernetes.io/pod-name": pod_name})
        p = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": g.meta("Pod", ns, pod_name, pod_labels, owner=sts, extra={"generateName": f"{app}-"}),
            "spec": pod_spec(g, ns, app, image, g.rand.choice(nodes), claim=claim_name,
                             hostname=pod_name, subdomain=f"{app}-headless"),
            "status": pod_status(ips.next()),
        }
        g.emit(p)
        pods.append(p)
    for svc_name, headless in ((app, False), (f"{app}-headless", True)):
        svc = service(g, ns, svc_name, selector, headless=headless)
        endpoint_slice(g, ns, svc, pods)
    pdb(g, ns, app, selector, min_available=min_available if min_available is not None else replicas // 2 + 1,
        expected=replicas)


def generate(opener, target_pods, seed, pods_per_file=None):
    g = Gen(opener, seed)
    g.open_next()
    ips = Ips()
    node_count = max(3, target_pods // 30)  # ~30 pods per node, as in busy production clusters
    zones = ["eu-west-1a", "eu-west-1b", "eu-west-1c"]
    nodes = [f"ip-10-{i // 250}-{i % 250}-{(i * 7) % 250}.eu-west-1.compute.internal" for i in range(node_count)]
    for i, name in enumerate(nodes):
        node(g, name, zones[i % 3])

    # The namespace the recorded reviews target (testdata/clusters/database).
    namespace(g, "databases", "data-platform")
    stateful_set(g, "databases", "pg-main", 3, nodes, ips, uid="9d2e4b7a-61c3-4f0e-8a5d-2c7b9e1f4a36", min_available=2)

    tenant = 0
    while g.pods < target_pods:
        if pods_per_file and g.pods_in_file >= pods_per_file:
            g.open_next()
        ns = f"team-{tenant:04d}"
        namespace(g, ns, f"team-{tenant % 40}")
        config_map(g, ns, "kube-root-ca.crt", ["ca.crt"])
        apps = ["api", "web", "worker", "cron-runner", "gateway", "search", "billing", "notifier"]
        for app in apps[: 4 + tenant % 5]:
            if g.pods >= target_pods:
                break
            config = f"{app}-config"
            creds = f"{app}-credentials"
            config_map(g, ns, config, ["app.yaml", "logging.yaml"])
            secret(g, ns, creds, ["username", "password"])
            replicas = min(g.rand.choice([2, 3, 3, 4, 6, 8, 12, 20]), max(target_pods - g.pods, 1))
            deployment(g, ns, app, replicas, nodes, ips, config, creds)
        if g.pods < target_pods and tenant % 3 == 0:
            stateful_set(g, ns, "db", min(3, max(target_pods - g.pods, 1)), nodes, ips)
        tenant += 1
    g.close()
    return g


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pods", type=int, default=10_000, help="number of pods (default 10000)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("-o", "--output", default="-", help="output file (default stdout), or directory with --split")
    parser.add_argument("--split", type=int, metavar="PODS",
                        help="write a directory of List files of about PODS pods each (namespaces are never split)")
    args = parser.parse_args()
    if args.split:
        if args.output == "-":
            parser.error("--split needs -o DIR")
        os.makedirs(args.output, exist_ok=True)

        def opener(index):
            return open(os.path.join(args.output, f"snapshot-{index:03d}.json"), "w", encoding="utf-8")
    else:

        def opener(index):
            return sys.stdout if args.output == "-" else open(args.output, "w", encoding="utf-8")

    g = generate(opener, args.pods, args.seed, args.split)
    print(f"generated {g.pods} pods in {g.count} objects ({g.files} file(s))", file=sys.stderr)


if __name__ == "__main__":
    main()
