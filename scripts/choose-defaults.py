#!/usr/bin/env python3
"""Choose the built-in default rules (runtime/defaults.cpp) from tuning databases of several GPUs.

usage: scripts/choose-defaults.py DB [DB ...] [--bench BENCH.json ...] [--slack 0.01]
                                 [--keys f16.exact_sum,bf16.exact_sum]

The databases must hold, per GPU, a full search of the default tune.toml (halving measures
every candidate at every grid size in its first round), in one database or split over several
(e.g. by element type); keys the default leaves out (argmin and argmax: `--ops argmin,argmax`)
get rules where the databases have them, and a key no database has gets none. For each
(dtype, op) and grid size n,
each candidate measured on every GPU gets a score: the largest, over the GPUs, of its median
over the fastest median there (1.00 = the fastest on every GPU). A rule covers the longest run
of sizes over which some candidate stays within --slack of the lowest score at every size
(greedy interval covering: the fewest rules); among those candidates it takes the one the
tuners stored as a winner at most of those sizes (their winners were measured with more
repeats than the first round's three), then the lowest worst score. Before both, for rules
reaching 2^24 and above, the fewest blocks at the rule's largest size: every block of a single-pass kernel ends with a ticket, and
the two-phase call's acq_rel ticket makes that tail longer (on the H200, streaming.b1024.u4's
65535 blocks ran 3% slower at 2^30 through the two-phase call than through the cached one,
while persistent grids showed no difference), so among equals the longer-lived blocks win. A rule ends at the geometric
midpoint between two grid sizes (as the tuner's intervals do without bisection), or at the
tile of a single_tile kernel where that comes first (the runtime then takes the next rule).

From 2^24 up, single_pass candidates with more than --max-single-pass-blocks blocks (default
1056, a persistent grid of 256-thread blocks on 132 multiprocessors) are left out: through the
two-phase call every block of a single_pass kernel takes an acq_rel ticket, and with thousands
of blocks that costs 2-7 % on the H200 (docs/performance-log.md, 2026-11-25, "The two-phase
call leaves many-block single-pass winners to the built-in rules":
streaming.b1024.u4.single_pass ran 0.95-0.99x CUB through the two-phase call at 2^25-2^27,
1.01x through the cached one). A score stays relative to the fastest candidate of all.

From 2^26 up, single_pass candidates are left out (two_pass and packed remain; not for exact_sum,
whose persistent single_pass grids won every exact tune): in the H200 runs of
docs/performance.md 3.1 the persistent single_pass kernels (warp_shuffle, vectorized) that tied
the streaming two_pass ones within 0.2 % in the H200's tuning run ran 1-4 % slower than CUB
through the bench in the next call (another machine of the same model), where the streaming
two_pass ones ran 1.01-1.04x.

With --bench (tunedreduce bench --json of the same GPUs, matched by device fingerprint), each
rule's predicted speed-up over CUB is printed: CUB's bench median over the chosen candidate's
tuner median (the two are timed alike: cold L2, read flush; the bench waits for each run, the
tuner does not, which costs the tuner's figure ~0.1-0.6 us at the smallest sizes).

Prints the C++ table, then per GPU the worst predicted score and speed-up.
"""
import argparse
import json
import math
import sqlite3
from collections import defaultdict

# The half types' wide_sum rules are f32's by bytes (runtime/defaults.cpp), not chosen here.
DTYPES = ["i32", "u32", "i64", "u64", "f32", "f64"]
SIZE = {"i32": 4, "u32": 4, "i64": 8, "u64": 8, "f32": 4, "f64": 8, "f16": 2, "bf16": 2}
LARGE = 1 << 24  # from here on, fewer blocks first (see the docstring)
STREAM = 1 << 26  # from here on, no single_pass (see the docstring)
WINNERS = defaultdict(list)  # device key -> (dtype, op, n_lo, n_hi, kernel) of its stored winners
# In the order of the public header's all_ops; exact_sum's rules are the winners common to
# several tunes (runtime/defaults.cpp), not chosen here.
OPS = ["sum", "min", "max", "wide_sum", "argmin", "argmax", "absmax"]


def blocks(kernel_id, n, sms=132):
    """Blocks of the first kernel for n on an H100/H200 (kernels/dispatch.cuh's grid_size, with
    the resident blocks of a persistent grid approximated by 2048 threads per multiprocessor)."""
    parts = kernel_id.split(".")
    family, block = parts[0], int(parts[1][1:])
    unroll = int(parts[2][1:]) if parts[2].startswith("u") else 1
    size = SIZE[parts[-2]]  # the input element's bytes (argmin's 16-byte result is not read)
    chunk = block * unroll * (16 // size if family in ("vectorized", "tiled", "streaming") else 1)
    chunks = -(-n // chunk)
    if family == "single_tile":
        return 1
    if family.startswith("exact"):  # persistent: 1024 threads a multiprocessor (64 registers)
        return max(1, min(-(-n // (block * unroll * (16 // size))), sms * (1024 // block)))
    if family in ("vectorized", "warp_shuffle"):
        cap = sms * max(1, min(32, 2048 // block))
    elif family in ("tiled", "streaming"):
        cap = 65535
    else:
        cap = 65536
    if ".packed." in kernel_id:
        cap = min(cap, 65535)
    return max(1, min(chunks, cap))


def capacity(kernel_id):
    """The largest n the entry takes (kernels::max_elements_of): one tile for single_tile."""
    parts = kernel_id.split(".")
    if parts[0] != "single_tile":
        return None
    size = SIZE[parts[-2]]
    return int(parts[1][1:]) * int(parts[2][1:]) * (16 // size)


def load(path):
    """device key -> {(dtype, op, n, kernel): median of its most-repeated ok measurement}"""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    for dev, dtype, op, lo, hi, kid in con.execute(
            "select d.fingerprint, w.dtype, w.op, w.n_lo, w.n_hi, w.kernel_id "
            "from winners w join devices d on d.id = w.device_id"):
        WINNERS[dev].append((dtype, op, lo, hi, kid))
    out = defaultdict(dict)
    reps = {}
    for dev, dtype, op, n, kid, med, rep in con.execute(
            "select d.fingerprint, m.dtype, m.op, m.n, m.kernel_id, m.median_us, m.repeats "
            "from measurements m join devices d on d.id = m.device_id "
            "where m.outcome = 'ok' and m.l2_mode = 'cold'"):
        key = (dtype, op, n, kid)
        if (dev, key) not in reps or rep > reps[(dev, key)]:
            reps[(dev, key)] = rep
            out[dev][key] = med
    names = dict(con.execute("select fingerprint, name from devices"))
    return out, names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dbs", nargs="+")
    ap.add_argument("--bench", action="append", default=[])
    ap.add_argument("--slack", type=float, default=0.01)
    ap.add_argument("--keys", default="",
                    help="only these keys, e.g. f16.exact_sum,bf16.exact_sum (default: every "
                         "type of DTYPES with every operator of OPS)")
    ap.add_argument("--max-single-pass-blocks", type=int, default=1056,
                    help="from 2^24 up, leave out single_pass candidates with more blocks "
                         "(keep equal to Runtime::two_phase_max_single_pass_blocks)")
    a = ap.parse_args()
    devices, names = {}, {}
    for p in a.dbs:  # a GPU's measurements may come in several databases (e.g. split by type)
        d, nm = load(p)
        for dev, m in d.items():
            devices.setdefault(dev, {}).update(m)
        names.update(nm)
    cub = defaultdict(dict)  # dev -> (dtype, op, n) -> CUB median
    for p in a.bench:
        doc = json.load(open(p))
        dev = doc["device"]["fingerprint"]
        for r in doc["results"]:
            if r.get("cub", {}).get("verified"):
                cub[dev][(r["dtype"], r["op"], r["n"])] = r["cub"]["median_us"]
    devs = sorted(devices)
    rules = []
    worst = {d: (0, None) for d in devs}
    worst_cub = {d: (9, None) for d in devs}
    keys = [tuple(k.split(".")) for k in a.keys.split(",")] if a.keys else \
        [(dtype, op) for dtype in DTYPES for op in OPS]
    for dtype, op in keys:
        if True:
            # Grid sizes: powers of two measured on every GPU.
            sizes = None
            for d in devs:
                s = {n for (dt, o, n, k) in devices[d] if dt == dtype and o == op and n & (n - 1) == 0}
                sizes = s if sizes is None else sizes & s
            sizes = sorted(sizes)
            # Per size: each candidate's score (its worst ratio to the fastest over the GPUs).
            scores = []
            for n in sizes:
                best = {}
                cands = None
                for d in devs:
                    m = {k: v for (dt, o, nn, k), v in devices[d].items()
                         if dt == dtype and o == op and nn == n}
                    best[d] = min(m.values())
                    cands = set(m) if cands is None else cands & set(m)
                sc = {k: max(devices[d][(dtype, op, n, k)] / best[d] for d in devs) for k in cands}
                if n >= LARGE:  # the two-phase call's acq_rel ticket: see the docstring
                    sc = {k: v for k, v in sc.items()
                          if ".single_pass." not in k or blocks(k, n) <= a.max_single_pass_blocks}
                if n >= STREAM and op != "exact_sum":  # two_pass (and packed) only: see the docstring
                    sc = {k: v for k, v in sc.items() if ".single_pass." not in k}
                scores.append(sc)
            # Fewest rules: a rule grows over consecutive sizes while some candidate stays within
            # --slack of the fastest at every one of them (greedy covering, optimal for
            # intervals); the rule's kernel is the one with the lowest worst score over them.
            chosen = []
            i = 0
            while i < len(sizes):
                ok = {k for k, v in scores[i].items() if v <= scores[i][min(scores[i], key=scores[i].get)] * (1 + a.slack)}
                j = i + 1
                while j < len(sizes):
                    lo = min(scores[j].values())
                    nxt = {k for k in ok if k in scores[j] and scores[j][k] <= lo * (1 + a.slack)}
                    if not nxt:
                        break
                    ok = nxt
                    j += 1
                # The tuners' own winners first (chosen with more repeats than the first round's
                # three), then the lowest worst score.
                def won(c):
                    return -sum(1 for t in range(i, j) for d in devs for (dt, o, lo, hi, kid) in WINNERS[d]
                                if dt == dtype and o == op and lo <= sizes[t] <= hi and kid == c)
                top_n = sizes[j - 1]
                k = min(ok, key=lambda c: (blocks(c, top_n) if top_n >= LARGE else 0, won(c),
                                           max(scores[t][c] for t in range(i, j)), c))
                for t in range(i, j):
                    chosen.append((sizes[t], k, scores[t][k]))
                i = j
            for n, top, _ in chosen:
                for d in devs:
                    best_d = min(v for (dt, o, nn, kk), v in devices[d].items()
                                 if dt == dtype and o == op and nn == n)
                    s_ = devices[d][(dtype, op, n, top)] / best_d
                    if s_ > worst[d][0]:
                        worst[d] = (s_, (dtype, op, n, top))
                    c = cub[d].get((dtype, op, n))
                    if c:
                        sp = c / devices[d][(dtype, op, n, top)]
                        if sp < worst_cub[d][0]:
                            worst_cub[d] = (sp, (dtype, op, n, top))
            # Runs of one kernel become one rule, ending at the geometric midpoint to the next size.
            for i, (n, k, s) in enumerate(chosen):
                if i + 1 < len(chosen) and chosen[i + 1][1] == k:
                    continue
                hi = None if i + 1 == len(chosen) else int(math.sqrt(n * chosen[i + 1][0]))
                # A single_tile rule ends at its tile (it was measured only where it fits).
                if capacity(k) is not None:
                    hi = capacity(k) if hi is None else min(hi, capacity(k))
                hi = "all" if hi is None else str(hi)
                rules.append((dtype, op, hi, k, n))
    print("constexpr DefaultRule rules[] = {")
    for dtype, op, hi, k, n in rules:
        print('    {DType::%s, Op::%s, %s, "%s"},' % (dtype, op, hi, k))
    print("};")
    print("// %d rules" % len(rules))
    for d in devs:
        s, where = worst[d]
        print("// %s (%s): worst score %.3f at %s" % (names.get(d, d), d, s, where))
        if cub[d]:
            sp, where = worst_cub[d]
            print("//   worst predicted speed-up over CUB %.3f at %s" % (sp, where))


if __name__ == "__main__":
    main()
