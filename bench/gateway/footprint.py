#!/usr/bin/env python3
"""One cold request's counts per step, from callgrind summaries at two round counts (standard
library only): reads `STEP<TAB>ROUNDS<TAB>SUMMARY` lines (SUMMARY: callgrind's `summary:` counts,
events Ir Dr Dw I1mr D1mr D1mw ...) on stdin and prints a Markdown table.

    bench/gateway/footprint.sh | ...   (it runs this itself)
"""

import argparse
import sys

# Positions in callgrind's event list with --cache-sim=yes.
IR, I1MR, D1MR, D1MW = 0, 3, 4, 5
EVENTS = 9


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, required=True, help="the larger round count")
    args = parser.parse_args()
    counts = {}
    order = []
    for line in sys.stdin:
        step, rounds, summary = line.rstrip("\n").split("\t")
        if step not in counts:
            counts[step] = {}
            order.append(step)
        # callgrind leaves out trailing zero counts.
        numbers = [int(n) for n in summary.split()]
        counts[step][int(rounds)] = numbers + [0] * (EVENTS - len(numbers))
    per_request = {}
    for step in order:
        few, many = counts[step].get(2), counts[step].get(args.rounds)
        if few is None or many is None:
            sys.exit(f"{step}: a run is missing")
        rounds = args.rounds - 2
        per_request[step] = [(b - a) / rounds for a, b in zip(few, many)]

    def row(name, c):
        code, data = c[I1MR], c[D1MR] + c[D1MW]
        print(f"| {name} | {c[IR]:,.0f} | {code:,.0f} | {data:,.0f} | {code + data:,.0f} |")

    print("| step | instructions | code lines missed | data lines missed | lines in all |")
    print("|---|---:|---:|---:|---:|")
    for step in order:
        row(step.strip() if not step.startswith(" ") else "— " + step.strip(), per_request[step])
    evaluate = next((s for s in order if s.startswith("evaluate")), None)
    parts = [s for s in order if s.startswith(" ")]
    if evaluate and parts:
        rest = list(per_request[evaluate])
        for part in parts:
            rest = [r - p for r, p in zip(rest, per_request[part])]
        row("— judging the candidates (the rest of evaluate)", rest)
    tops = [s for s in order if not s.startswith(" ")]
    total = [sum(per_request[s][i] for s in tops) for i in range(len(per_request[tops[0]]))]
    row("**the request, read to judged**", total)


if __name__ == "__main__":
    main()
