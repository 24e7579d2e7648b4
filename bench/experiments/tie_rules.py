#!/usr/bin/env python3
"""What the tie rule gives away: the old rule (tolerance = the smaller p10-p90 spread of single
runs, clamped to [1 %, 5 %]) against the current one (two standard errors of the medians'
difference, clamped to [0.5 %, 1 %]; tuner/selection.cpp, docs/tuning.md), applied to the same
final-round measurements of a tuning database.

usage: bench/experiments/tie_rules.py DB [DB ...]

For every (dtype, op, grid size) -- powers of two; bisection probes are skipped -- the final round
is the measurements with the most repeats (halving's finalists, measured with the full policy).
Both rules choose a winner among them with the preference of tuner/selection.cpp (one launch
before two, then the smaller block x unroll, then the smaller id). Printed: how many winners
differ, and how much slower than the fastest finalist each rule's winners are (mean and worst).
This re-states the rule in Python to replay recorded data; the C++ rule is the product's.
"""
import math
import sqlite3
import sys


def parse(kernel_id):
    f = kernel_id.split(".")
    block = int(f[1][1:])
    unroll = int(f[2][1:]) if f[2].startswith("u") else 1
    finish = next(x for x in f if x in ("two_pass", "single_pass", "packed"))
    return finish != "two_pass", block * unroll


def preferred(a, b):
    (one_a, work_a), (one_b, work_b) = parse(a), parse(b)
    if one_a != one_b:
        return one_a
    if work_a != work_b:
        return work_a < work_b
    return a < b


def spread(r):
    return max(0.0, (r["p90"] - r["p10"]) / r["median"])


def old_rule(a, b):
    lo, hi = sorted([a["median"], b["median"]])
    return (hi - lo) / lo < min(max(min(spread(a), spread(b)), 0.01), 0.05)


def new_rule(a, b):
    lo, hi = sorted([a["median"], b["median"]])
    ea = 0.48898 * spread(a) / math.sqrt(a["repeats"])
    eb = 0.48898 * spread(b) / math.sqrt(b["repeats"])
    return (hi - lo) / lo < min(max(2 * math.sqrt(ea * ea + eb * eb), 0.005), 0.01)


def select(results, within):
    fastest = min(results, key=lambda r: (r["median"], r["id"]))
    winner = fastest
    for r in results:
        if r is not winner and within(r, fastest) and preferred(r["id"], winner["id"]):
            winner = r
    return winner, fastest


def main(paths):
    for path in paths:
        c = sqlite3.connect(path)
        groups = {}
        for kid, med, p10, p90, rep, dt, op, n in c.execute(
                "SELECT kernel_id, median_us, p10_us, p90_us, repeats, dtype, op, n "
                "FROM measurements WHERE outcome = 'ok' AND median_us > 0"):
            if n & (n - 1):
                continue
            groups.setdefault((dt, op, n), []).append(
                {"id": kid, "median": med, "p10": p10, "p90": p90, "repeats": max(rep, 1)})
        differ, lost_old, lost_new = 0, [], []
        for _, rs in sorted(groups.items()):
            most = max(r["repeats"] for r in rs)
            final = [r for r in rs if r["repeats"] == most]
            w_old, fastest = select(final, old_rule)
            w_new, _ = select(final, new_rule)
            differ += w_old["id"] != w_new["id"]
            lost_old.append(w_old["median"] / fastest["median"] - 1)
            lost_new.append(w_new["median"] / fastest["median"] - 1)
        k = len(groups)
        if not k:
            print("%s: no measurements" % path)
            continue
        print("%s: %d sizes, %d winners differ; slower than the fastest finalist: old rule "
              "mean %.2f%% worst %.2f%%, new rule mean %.2f%% worst %.2f%%"
              % (path, k, differ, 100 * sum(lost_old) / k, 100 * max(lost_old),
                 100 * sum(lost_new) / k, 100 * max(lost_new)))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
