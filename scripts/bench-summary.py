#!/usr/bin/env python3
"""The summary tables of `tunedreduce bench --json` files, for scripts/gpu-suite.sh.

usage: scripts/bench-summary.py BENCH.json [HOST.json]

Prints, per library call (cached, two-phase), the speed-up over cub::DeviceReduce (CUB's median
/ the call's median) for the keys the issues name (i32/i64/f32/f64 sum, i32/f32 min and max,
f32/f64/f16/bf16 exact_sum, i32/u32/f32/f16/bf16 wide_sum, i32/f32/f64 argmin and argmax) at
every size, and how many rows of every type and operator are below 1.0x (and below 0.985x, the
1.5 % allowance at CUB's single-tile size); then, when HOST.json is given, the host's cost per
call. A file of `bench --segments` gets the segmented summary instead: per key and layout, the
speed-up over cub::DeviceSegmentedReduce of the slower call at every (total, segment size), the
shapes below 1.0x, and the % of the floor at totals of 2^24 and more.
"""
import json
import sys

KEYS = ["i32.sum", "i64.sum", "f32.sum", "f64.sum", "i32.min", "i32.max", "f32.min", "f32.max",
        "f32.exact_sum", "f64.exact_sum", "f16.exact_sum", "bf16.exact_sum", "i32.wide_sum", "u32.wide_sum", "f32.wide_sum",
        "f16.wide_sum", "bf16.wide_sum", "i32.argmin", "i32.argmax", "f32.argmin", "f32.argmax",
        "f64.argmin", "f64.argmax"]


def size_text(n):
    """As `tunedreduce bench` prints it (common/grammar.hpp count_text): 2^k for powers of two
    from 64 up, else the decimal (bench --sizes takes any element count)."""
    return "2^%d" % (n.bit_length() - 1) if n >= 64 and n & (n - 1) == 0 else str(n)


def device_line(doc):
    d = doc["device"]
    t = doc.get("timing", {})
    return "%s (%s), L2 %s, %s" % (d["name"], d["fingerprint"], t.get("l2", "-"),
                                    "medians of %s" % t.get("repeats", "-"))


def speedups(doc):
    rows = doc["results"]
    for api, field in (("cached", "cached_speedup_vs_cub"), ("two-phase", "two_phase_speedup_vs_cub")):
        have = [r for r in rows if field in r]
        if not have:
            continue
        table = {}
        sizes = set()
        levels = {}
        for r in have:
            key = "%s.%s" % (r["dtype"], r["op"])
            table[(key, r["n"])] = r[field]
            sizes.add(r["n"])
            levels[r["lookup_level"]] = levels.get(r["lookup_level"], 0) + 1
        keys = [k for k in KEYS if any((k, n) in table for n in sizes)]
        print("%s call: speed-up over cub::DeviceReduce (CUB us / tuned us)" % api)
        width = max([8] + [len(k) for k in keys])
        print("%-6s" % "n" + "".join(" %*s" % (width, k) for k in keys))
        for n in sorted(sizes):
            line = "%-6s" % size_text(n)
            for k in keys:
                v = table.get((k, n))
                line += " %*s" % (width, "-" if v is None else "%.3fx" % v)
            print(line)
        below = [(r, r[field]) for r in have if r[field] < 1.0]
        far = [(r, v) for r, v in below if v < 0.985]
        print("rows of every type and operator below 1.0x: %d of %d (below 0.985x: %d); lookup "
              "levels: %s" % (len(below), len(have), len(far),
                              ", ".join("%s %d" % kv for kv in sorted(levels.items()))))
        for r, v in sorted(below, key=lambda x: x[1])[:12]:
            print("  %s %s %s: %.3fx (%s)" % (r["dtype"], r["op"], size_text(r["n"]), v, r["kernel_id"]))
    wrong = [r for r in rows for m in ("cached", "two_phase", "cub")
             if m in r and not r[m].get("verified", False)]
    if wrong:
        print("rows with a result that was wrong or did not run: %d" % len(wrong))


def segmented(doc):
    """The summary of a `bench --segments` file: x CUB of the slower library call per shape."""
    groups = {}
    for r in doc["results"]:
        groups.setdefault((r["dtype"], r["op"], r["layout"]), []).append(r)
    for (dtype, op, layout), rows in sorted(groups.items()):
        print("%s %s, %s: x CUB (the slower call) / %% of the floor, by total and segment size"
              % (dtype, op, layout))
        cells, sizes, totals, below, low, wrong = {}, set(), set(), [], [], 0
        for r in rows:
            m = [r[k].get("median_us") for k in ("cached", "two_phase", "cub", "floor")
                 if k in r]
            if not all(r[k].get("verified") for k in ("cached", "two_phase", "cub", "floor")
                       if k in r):
                wrong += 1
                continue
            slower = max(r[k]["median_us"] for k in ("cached", "two_phase") if k in r)
            x, pct = r["cub"]["median_us"] / slower, 100 * r["floor"]["median_us"] / slower
            cells[(r["n"], r["segment_size"])] = "%.2f/%.0f" % (x, pct)
            sizes.add(r["segment_size"])
            totals.add(r["n"])
            if x < 1.0:
                below.append((r, x))
            if r["n"] >= 1 << 24 and pct < 90:
                low.append((r, pct))
        print("%-6s" % "total" + "".join(" %10s" % size_text(z) for z in sorted(sizes)))
        for n in sorted(totals):
            print("%-6s" % size_text(n) + "".join(" %10s" % cells.get((n, z), "")
                                                   for z in sorted(sizes)))
        print("shapes below 1.0x CUB: %d of %d; below 90%% of the floor at 2^24 and up: %d; wrong or "
              "failed: %d" % (len(below), len(rows), len(low), wrong))
        for r, v in sorted(below, key=lambda x: x[1])[:8]:
            print("  %s x %s: %.3fx (%s)" % (size_text(r["segment_size"]), size_text(r["n"]), v,
                                            r["kernel_id"]))


def host_costs(doc):
    print("host cost per call, us (b2b: back-to-back wall time / calls; enq: host time alone)")
    print("%-10s %-6s %9s %9s %9s %9s %9s %9s" % ("key", "n", "CUB b2b", "cached", "2-phase",
                                                   "CUB enq", "cached", "2-phase"))
    for r in doc["results"]:
        h = r.get("host_cost")
        if not h:
            continue
        print("%-10s %-6s %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f" % (
            "%s %s" % (r["dtype"], r["op"]), size_text(r["n"]),
            h["cub"]["back_to_back_us_per_call"], h["cached"]["back_to_back_us_per_call"],
            h["two_phase"]["back_to_back_us_per_call"], h["cub"]["enqueue_us_per_call"],
            h["cached"]["enqueue_us_per_call"], h["two_phase"]["enqueue_us_per_call"]))


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        doc = json.load(f)
    print("benchmark: " + device_line(doc))
    if any("segment_size" in r for r in doc["results"]):
        segmented(doc)
        return 0
    speedups(doc)
    if len(argv) > 2:
        with open(argv[2]) as f:
            host_costs(json.load(f))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
