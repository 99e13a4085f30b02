#!/usr/bin/env python3
"""The training run of a profile-guided build (scripts/pgo-build.sh): posts AdmissionReviews to a
running suture-gateway, each as sent and as a dry run, ROUNDS times over one kept-alive HTTPS
connection, and checks every answer (standard library only).

    scripts/pgo-train.py --port 18443 --rounds 40 testdata/reviews/*.json

An answer must be HTTP 200 with an AdmissionReview whose response carries the request's uid, or,
for a body that is no AdmissionReview request (testdata/reviews/malformed-no-request.json), HTTP
400: an instrumented build that answered otherwise would train the optimizer on a broken path,
so the run stops. Prints what was posted and how it was answered.
"""

import argparse
import http.client
import json
import ssl
import sys


def bodies(paths):
    """Each file's text, and a dry-run copy of each review that has a request."""
    for path in paths:
        with open(path, "rb") as file:
            raw = file.read()
        try:
            review = json.loads(raw)
        except ValueError:
            review = None
        request = review.get("request") if isinstance(review, dict) else None
        yield path, raw, request.get("uid") if isinstance(request, dict) else None
        if isinstance(request, dict) and not request.get("dryRun"):
            request["dryRun"] = True
            yield f"{path} (dry run)", json.dumps(review).encode(), request.get("uid")


def answer(connection, body):
    connection.request("POST", "/validate", body, {"Content-Type": "application/json"})
    response = connection.getresponse()
    return response.status, response.read()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True, help="the gateway's HTTPS port on 127.0.0.1")
    parser.add_argument("--rounds", type=int, default=40, help="times each body is posted")
    parser.add_argument("reviews", nargs="+", help="AdmissionReview files")
    args = parser.parse_args()
    posted = list(bodies(args.reviews))
    context = ssl._create_unverified_context()  # the gateway's --self-signed certificate
    connection = http.client.HTTPSConnection("127.0.0.1", args.port, context=context, timeout=30)
    tally = {"allowed": 0, "denied": 0, "rejected": 0}
    for _ in range(args.rounds):
        for name, body, uid in posted:
            status, text = answer(connection, body)
            if uid is None:
                if status != 400:
                    sys.exit(f"pgo-train: {name}: HTTP {status}, expected 400 for a body with no request")
                tally["rejected"] += 1
                continue
            if status != 200:
                sys.exit(f"pgo-train: {name}: HTTP {status}")
            response = json.loads(text).get("response") or {}
            if response.get("uid") != uid:
                sys.exit(f"pgo-train: {name}: the answer's uid is {response.get('uid')!r}, not {uid!r}")
            tally["allowed" if response.get("allowed") else "denied"] += 1
    print(f"pgo-train: {len(posted)} bodies x {args.rounds} rounds: " + ", ".join(f"{n} {k}" for k, n in tally.items()))


if __name__ == "__main__":
    main()
