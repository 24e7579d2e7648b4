#!/usr/bin/env python3
"""Repeatability of two tuning runs: for every (dtype, op, grid size) both runs chose a winner
for, is it the same kernel, or is the first run's winner within noise of the second's in the
second run's own measurements (medians closer than the smaller relative p10-p90 spread of the
two, clamped to [1%, 5%]: looser than the tuner's tie rule, which decides between candidates of
one run)? Then the same per (dtype, op): a key is repeatable when every grid size of it is.

usage: scripts/compare-runs.py RUN1.db RUN2.db [--sizes-from-winners]
"""
import sqlite3
import sys


def best_by_size(path):
    """(dtype, op, n) -> winner id at the grid sizes (the sizes most candidates were measured at),
    and (dtype, op, n, kernel) -> (median, p10, p90) of its most-repeated ok measurement."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    meas = {}
    for dtype, op, n, kid, med, p10, p90, rep in con.execute(
            "select dtype, op, n, kernel_id, median_us, p10_us, p90_us, repeats from measurements "
            "where outcome = 'ok'"):
        key = (dtype, op, n, kid)
        if key not in meas or rep > meas[key][3]:
            meas[key] = (med, p10, p90, rep)
    counts = {}
    for (dtype, op, n, kid) in meas:
        counts[(dtype, op, n)] = counts.get((dtype, op, n), 0) + 1
    grid = {k for k, c in counts.items() if c > 50}  # grid sizes, not bisection midpoints
    winners = {}
    for dtype, op, lo, hi, kid in con.execute(
            "select dtype, op, n_lo, n_hi, kernel_id from winners"):
        for (d, o, n) in grid:
            if d == dtype and o == op and lo <= n <= hi:
                winners[(d, o, n)] = kid
    return winners, meas


def spread(m):
    med, p10, p90, _ = m
    return (p90 - p10) / med if med else 0.0


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    w1, m1 = best_by_size(sys.argv[1])
    w2, m2 = best_by_size(sys.argv[2])
    keys = sorted(set(w1) & set(w2))
    same = within = differ = 0
    bad_keys = set()
    for k in keys:
        a, b = w1[k], w2[k]
        if a == b:
            same += 1
            continue
        ma, mb = m2.get(k + (a,)), m2.get(k + (b,))
        if ma and mb:
            tol = min(0.05, max(0.01, min(spread(ma), spread(mb))))
            if abs(ma[0] - mb[0]) / min(ma[0], mb[0]) <= tol:
                within += 1
                continue
        differ += 1
        bad_keys.add(k[:2])
        print(f"differs: {k[0]} {k[1]} n={k[2]}: {a} ({ma[0] if ma else '?'} us in run 2) vs "
              f"{b} ({mb[0] if mb else '?'} us)")
    total = len(keys)
    print(f"keys compared: {total}; same winner: {same}; different but within noise: {within}; "
          f"different beyond noise: {differ}; repeatable: {100.0 * (same + within) / total:.1f}%")
    dtype_ops = sorted({k[:2] for k in keys})
    print(f"(dtype, op) keys: {len(dtype_ops)}; every size within noise: "
          f"{len(dtype_ops) - len(bad_keys)} ({100.0 * (len(dtype_ops) - len(bad_keys)) / len(dtype_ops):.1f}%)"
          + (f"; not: {', '.join(d + ' ' + o for d, o in sorted(bad_keys))}" if bad_keys else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
