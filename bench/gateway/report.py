#!/usr/bin/env python3
"""Writes bench/gateway/results.md from run.sh's measurements (markdown on stdout)."""

import argparse
import datetime
import os
import platform
import subprocess


def cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def command(args):
    try:
        return subprocess.run(args, capture_output=True, text=True, check=False).stdout.strip().splitlines()[0]
    except (OSError, IndexError):
        return "unknown"


def model(counts):
    """`10000 21088` (pods, objects, from /metrics) → `10,000 pods, 21,088 objects`."""
    if not counts:
        return "model size not reported"
    pods, objects = (int(n) for n in counts.split())
    return f"{pods:,} pods, {objects:,} objects in the model"


def mib(kib):
    return f"{int(kib) / 1024:.0f} MiB" if kib else "n/a"


def answer(verdict):
    """`True` or `False 403` (the response's allowed and status code) in words."""
    allowed, _, code = verdict.partition(" ")
    if allowed == "True":
        return "allowed"
    return f"denied, code {code}" if code else "denied"


def main():
    p = argparse.ArgumentParser()
    for name in ("duration", "pods", "review", "body", "verdict", "connections", "rss-10k", "big-pods", "rss-big", "hwm-big",
                 "rss-big-after", "load-big", "big-latency", "model-10k", "model-big"):
        p.add_argument("--" + name, default="")
    p.add_argument("--result", action="append", default=[])
    a = p.parse_args()
    results = {}
    for item in a.result:
        key, value = item.split("=", 1)
        rps, p50, p99, errors, cpu_us = value.split(",")
        results[key] = (float(rps), float(p50), float(p99), int(errors), float(cpu_us))

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    commit = command(["git", "-C", root, "rev-parse", "--short", "HEAD"])
    print("# suture-gateway load benchmark\n")
    print(f"Written by `bench/gateway/run.sh` on {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC "
          f"(commit {commit}).\n")
    print(f"- Machine: {os.cpu_count()} CPUs ({cpu_model()}), Linux {platform.release()}; the load generator "
          f"runs on the same cores as the server.")
    print(f"- Load: `{command(['wrk', '--version']) or 'wrk'}` over HTTPS keep-alive, {a.duration} per run, "
          f"POSTing `{a.review}` ({a.body}; the gateway answers it {answer(a.verdict)}).")
    print(f"- Gateway: `suture-gateway --self-signed --cluster <{int(a.pods):,}-pod snapshot>` (offline model, "
          f"built-in pack, decision log to a file). Floor: `suture-gateway --noop --self-signed`, the same "
          f"TLS/HTTP stack answering allowed without evaluating.\n")
    print("| connections | server | requests/s | p50 (ms) | p99 (ms) | errors | server CPU per request (µs) |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for conns in a.connections.split():
        for name in ("noop", "gateway"):
            r = results.get(f"{name}-{conns}")
            if r:
                label = "no-op floor" if name == "noop" else "gateway"
                print(f"| {conns} | {label} | {r[0]:,.0f} | {r[1]:.3f} | {r[2]:.3f} | {r[3]} | {r[4]:.1f} |")
    print("\nRatios, gateway / floor (throughput: higher is better; latency: lower is better):\n")
    print("| connections | throughput | p50 | p99 |")
    print("|---:|---:|---:|---:|")
    for conns in a.connections.split():
        g, n = results.get(f"gateway-{conns}"), results.get(f"noop-{conns}")
        if g and n:
            print(f"| {conns} | {g[0] / n[0]:.0%} | {g[1] / n[1]:.2f}× | {g[2] / n[2]:.2f}× |")
    print("\nServer CPU per request is the user + system time of the server process (every thread) over the "
          "wrk run, divided by the requests it served: the figure least disturbed by the load generator sharing "
          "the cores.")
    print(f"\nTargets (issue 5, 2 cores): p99 under 2 ms; throughput at least 70% of the floor. At 64 "
          f"connections latency follows Little's law (64 / throughput) for the floor too, so it is judged as a "
          f"ratio; absolute latency shows at 1 and 4 connections.\n")
    print("## Memory\n")
    print(f"- {int(a.pods):,}-pod snapshot ({model(a.model_10k)}), after the runs above: VmRSS {mib(a.rss_10k)}.")
    if a.rss_big:
        latency = ""
        if a.big_latency:
            rps, p50, p99 = a.big_latency.split()[:3]
            latency = f" Serving it at 1 connection: {float(rps):,.0f} requests/s, p50 {float(p50):.3f} ms, p99 {float(p99):.3f} ms."
        print(f"- {int(a.big_pods):,}-pod snapshot in {-(-int(a.big_pods) // 10000)} files ({model(a.model_big)}): VmRSS {mib(a.rss_big)} once ready "
              f"(peak VmHWM {mib(a.hwm_big)} while loading; ready {a.load_big} s after start)"
              f"{'; ' + mib(a.rss_big_after) + ' after serving' if a.rss_big_after else ''}.{latency}")
    else:
        print("- The large-model measurement was skipped (BIG_PODS=0).")


if __name__ == "__main__":
    main()
