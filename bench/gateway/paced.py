#!/usr/bin/env python3
"""Suture's cost over the no-op floor when requests come one at a time, as a function of the gap
between them (standard library only).

kube-apiserver calls a webhook once per request it admits; an operator's requests are sparse, so
the gateway usually meets a request with cold caches. This posts one AdmissionReview to a judging
gateway and to its no-op floor alternately (a pair every GAP seconds, each over its own kept-alive
HTTPS connection, the order alternating), and reports per gap: the median and p99 round trip of
each, and the median of the paired differences (gateway minus floor).

    bench/gateway/paced.py --gateway 18443 --floor 18444 --review REVIEW.json \\
        --gaps 0 0.005 0.025 --pairs 400

bench/gateway/run.sh starts both servers and runs this when PACED_GAPS is set.
"""

import argparse
import http.client
import ssl
import statistics
import sys
import time


def connect(port):
    context = ssl._create_unverified_context()  # the bench's self-signed certificates
    return http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=10)


def post(connection, body):
    began = time.perf_counter()
    connection.request("POST", "/validate", body, {"Content-Type": "application/json"})
    response = connection.getresponse()
    response.read()
    if response.status != 200:
        sys.exit(f"HTTP {response.status} from the server")
    return (time.perf_counter() - began) * 1e6


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gateway", type=int, required=True, help="the judging gateway's port")
    parser.add_argument("--floor", type=int, required=True, help="the no-op floor's port")
    parser.add_argument("--review", required=True, help="the AdmissionReview posted")
    parser.add_argument("--gaps", type=float, nargs="+", default=[0, 0.005, 0.025])
    parser.add_argument("--pairs", type=int, default=400, help="pairs timed per gap")
    parser.add_argument("--warmup", type=int, default=20, help="untimed pairs per gap")
    args = parser.parse_args()
    with open(args.review, "rb") as file:
        body = file.read()
    gateway, floor = connect(args.gateway), connect(args.floor)
    print("| gap between requests | floor p50 µs | floor p99 | gateway p50 µs | gateway p99 | gateway − floor, paired median µs |")
    print("|---:|---:|---:|---:|---:|---:|")
    for gap in args.gaps:
        timed = {"gateway": [], "floor": []}
        paired = []
        for n in range(args.warmup + args.pairs):
            order = [("gateway", gateway), ("floor", floor)]
            if n % 2:
                order.reverse()
            took = {}
            for name, connection in order:
                took[name] = post(connection, body)
                if gap:
                    time.sleep(gap / 2)
            if n >= args.warmup:
                for name in took:
                    timed[name].append(took[name])
                paired.append(took["gateway"] - took["floor"])
        print(
            f"| {gap * 1000:g} ms | {statistics.median(timed['floor']):.0f} | {percentile(timed['floor'], 0.99):.0f} "
            f"| {statistics.median(timed['gateway']):.0f} | {percentile(timed['gateway'], 0.99):.0f} "
            f"| {statistics.median(paired):+.0f} |"
        )


if __name__ == "__main__":
    main()
