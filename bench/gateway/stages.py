#!/usr/bin/env python3
"""The stages of the requests in a decision log written with `suture-gateway --stage-timings`:
the median and p90 time of each stage, in the order the stages run (standard library only).

    bench/gateway/stages.py DECISIONS.log [--skip N]

A stage that runs more than once per request (`policy`, once per candidate) is numbered in the
order it ran. Requests whose stages differ from the most common sequence (another lane, another
kind of request) are counted and left out.
"""

import argparse
import collections
import json
import statistics
import sys


def numbered(stages):
    seen = collections.Counter(stage["stage"] for stage in stages)
    count = collections.Counter()
    names = []
    for stage in stages:
        name = stage["stage"]
        count[name] += 1
        names.append(f"{name} {count[name]}" if seen[name] > 1 else name)
    return names


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log", help="the decision log")
    parser.add_argument("--skip", type=int, default=20, help="first requests left out (warm-up)")
    args = parser.parse_args()
    timed = []
    with open(args.log, encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                record = json.loads(line)
                if record.get("stages"):
                    timed.append(record)
    timed = timed[args.skip:]
    if not timed:
        sys.exit(f"{args.log}: no request with stages (was the gateway run with --stage-timings?)")
    shapes = collections.Counter(tuple(numbered(r["stages"])) for r in timed)
    shape, _ = shapes.most_common(1)[0]
    kept = [r for r in timed if tuple(numbered(r["stages"])) == shape]
    times = {name: [] for name in shape}
    for record in kept:
        for name, stage in zip(shape, record["stages"]):
            times[name].append(stage["us"])
    latency = [r["latencyUs"] for r in kept]
    print(f"{len(kept)} requests ({len(timed) - len(kept)} with other stages left out); "
          f"latencyUs median {statistics.median(latency):.0f}\n")
    print("| stage | median µs | p90 µs |")
    print("|---|---:|---:|")
    for name in shape:
        values = sorted(times[name])
        p90 = values[min(len(values) - 1, int(len(values) * 0.9))]
        print(f"| {name} | {statistics.median(values):.1f} | {p90:.1f} |")
    total = sum(statistics.median(times[name]) for name in shape)
    print(f"| sum of the medians | {total:.1f} | |")


if __name__ == "__main__":
    main()
