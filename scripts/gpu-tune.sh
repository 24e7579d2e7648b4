#!/usr/bin/env bash
# On the device machine: tune this GPU into a database with the binaries packed by
# scripts/device-pack.sh, for at most SECONDS (then SIGINT: the tuner commits what finished
# and exits 130; running this again resumes). The database is copied, xz-compressed, to $OUT.
#
# usage: [TUNE_CONFIG=FILE] scripts/gpu-tune.sh DB SECONDS [tunedreduce tune arguments ...]
#   e.g. scripts/gpu-tune.sh .carry/h100.db 540 --dtypes i32,u32,f32
# TUNE_CONFIG: the tune.toml to read (default: the repository's tune.toml).
set -uo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: scripts/gpu-tune.sh DB SECONDS [tune arguments ...]" >&2; exit 2; }
db=$1 secs=$2
shift 2
out=${OUT:-gpu-suite-out}
mkdir -p "$out" "$(dirname "$db")"
bin=${TR_BIN:-/tmp/tr-bin}
if [ ! -x "$bin/tunedreduce" ]; then
  mkdir -p "$bin"
  xz -dc .carry/bin/tunedreduce.xz > "$bin/tunedreduce" && chmod +x "$bin/tunedreduce"
fi
# A database carried compressed (from an earlier call) is resumed.
if [ ! -f "$db" ] && [ -f "$db.xz" ]; then xz -dc "$db.xz" > "$db"; fi
t0=$(date +%s)
timeout -s INT -k 60 "$secs" "$bin/tunedreduce" tune --config "${TUNE_CONFIG:-tune.toml}" --db "$db" --progress lines "$@" \
  > "$out/tune-$(basename "$db").log" 2>&1
rc=$?
echo "tune $(basename "$db") $*: exit $rc after $(( $(date +%s) - t0 )) s"
tail -n 5 "$out/tune-$(basename "$db").log"
# A tuner that was killed (not stopped) leaves its last commits in the -wal file: fold them into
# the database before copying it.
if [ -f "$db-wal" ]; then
  python3 -c 'import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute("PRAGMA wal_checkpoint(TRUNCATE)")' "$db"
fi
xz -T0 -6 -c "$db" > "$out/$(basename "$db").xz"
ls -la "$out/$(basename "$db").xz"
exit $rc
