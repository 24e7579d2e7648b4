#!/usr/bin/env bash
# The segmented tune recorded on an H200 (tests/data/h200-segmented.db: `tunedreduce tune` with
# tests/data/h200-segmented.toml and --dtypes f32 --ops sum --sizes 1024, the six segmented keys
# of the repository's tune.toml, kernel revision 12, 2026-11-29): `db check` passes it, `--replay` of its
# measurements chooses the winner the GPU run chose at every grid point (the planes the run
# printed, tests/data/h200-segmented.planes.txt), and `report segmented` has a row per measured
# shape of each key.
#   check_segmented_replay.sh CLI SOURCE_DIR WORK_DIR
set -euo pipefail
cli=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
db=$work/h200-segmented.db
cp "$src/tests/data/h200-segmented.db" "$db"
"$cli" db check --db "$db" > "$work/check.out" || { cat "$work/check.out"; fail "db check"; }
grep -q "^segmented:   0 overlapping" "$work/check.out" || fail "db check's segmented line"
"$cli" tune --config "$src/tests/data/h200-segmented.toml" --replay "$db" --dtypes f32 --ops sum \
  --sizes 1024 > "$work/replay.out" 2>&1 || { tail -20 "$work/replay.out"; fail "replay"; }
awk '/: the winner at each grid point/{p=1} p&&/^$/{p=0} p' "$work/replay.out" > "$work/planes.txt"
diff "$src/tests/data/h200-segmented.planes.txt" "$work/planes.txt" ||
  fail "the replay's segmented winners differ from the GPU run's"
[ "$(wc -l < "$work/planes.txt")" -gt 60 ] || fail "no segmented planes in the replay"
"$cli" report segmented --db "$db" --format csv > "$work/report.csv"
for key in "f32,sum" "f64,sum" "i32,sum" "bf16,wide_sum" "f32,max" "f32,argmax"; do
  n=$(grep -c ",$key,fixed," "$work/report.csv" || true)
  [ "$n" -ge 54 ] || fail "report segmented: $n rows of $key, expected a row per grid point (54) at least"
done
echo "ok: db check, the replay's $(grep -c '^ *[0-9^]' "$work/planes.txt") plane rows and the report"
