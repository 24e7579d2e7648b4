#!/usr/bin/env bash
# The database fixtures can be made again: runs tests/data/db/make_fixtures.sh in a scratch copy
# of the folder and compares every SQLite file it makes with the one checked in (the schema's
# text, user_version, min_reader_version and every table's row count; run uuids and times differ
# by design), the other files byte for byte. corrupt.db is damaged on purpose and left out.
#   tests/db/check_fixtures.sh BUILD_DIR
# Exit 77 (skipped) without the sqlite3 shell.
set -euo pipefail
command -v sqlite3 > /dev/null || { echo "no sqlite3 shell: skipped"; exit 77; }
src=$(cd "$(dirname "$0")/../data/db" && pwd)
build=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$src/make_fixtures.sh" "$src/schema_v0.sql" "$src/schema_v10.db" "$tmp/"
(cd "$tmp" && bash make_fixtures.sh "$build" > "$tmp/make.log" 2>&1) || {
  cat "$tmp/make.log"
  echo "make_fixtures.sh failed"
  exit 1
}
summary() {
  sqlite3 "$1" ".schema" "PRAGMA user_version;" \
    "SELECT value FROM meta WHERE key = 'min_reader_version';" 2> /dev/null || true
  for t in $(sqlite3 "$1" "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name"); do
    echo "$t $(sqlite3 "$1" "SELECT count(*) FROM \"$t\"")"
  done
}
made=0
for f in "$tmp"/*.db; do
  name=$(basename "$f")
  [ "$name" = corrupt.db ] && continue
  [ -f "$src/$name" ] || { echo "$name: made, but not checked in"; exit 1; }
  if [ "$(head -c 15 "$f")" = "SQLite format 3" ]; then
    diff <(summary "$src/$name") <(summary "$f") > "$tmp/diff" || {
      echo "$name: the file made again differs from the one checked in (< checked in, > made):"
      cat "$tmp/diff"
      exit 1
    }
  else
    cmp -s "$src/$name" "$f" || { echo "$name: the file made again differs"; exit 1; }
  fi
  made=$((made + 1))
done
echo "$made fixtures made again and equal to the checked-in ones"
