#!/usr/bin/env python3
"""Reads wrk's `--latency` output and prints `requests/s p50_ms p99_ms errors cpu_us`.

`--cpu-seconds S`: the server's CPU time over the run; `cpu_us` is it per request served
(`nan` without it).
"""

import argparse
import re

UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0}


def millis(text):
    match = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text)
    if not match:
        raise ValueError(f"not a wrk duration: {text}")
    return float(match.group(1)) * UNITS[match.group(2)]


def parse(text):
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    percentiles = dict(re.findall(r"^\s+(50|75|90|99)%\s+(\S+)", text, re.M))
    errors = 0
    non_2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
    if non_2xx:
        errors += int(non_2xx.group(1))
    sockets = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if sockets:
        errors += sum(int(n) for n in sockets.groups())
    requests = int(re.search(r"(\d+) requests in", text).group(1))
    return rps, millis(percentiles["50"]), millis(percentiles["99"]), errors, requests


if __name__ == "__main__":
    args = argparse.ArgumentParser()
    args.add_argument("output")
    args.add_argument("--cpu-seconds", type=float)
    a = args.parse_args()
    with open(a.output, encoding="utf-8") as f:
        rps, p50, p99, errors, requests = parse(f.read())
    cpu_us = a.cpu_seconds / requests * 1e6 if a.cpu_seconds is not None and requests else float("nan")
    print(f"{rps:.0f} {p50:.3f} {p99:.3f} {errors} {cpu_us:.1f}")
