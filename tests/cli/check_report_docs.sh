#!/usr/bin/env bash
# The reports committed under docs/reports/ are what the CLI renders now from the recorded
# databases they name (tests/data/README.md): a change to a report's text, or to the data,
# shows here instead of leaving the document stale.
# usage: check_report_docs.sh TUNEDREDUCE_CLI SOURCE_DIR
set -uo pipefail
cli=$1 src=$2
fail=0
out=$(mktemp "${TMPDIR:-/tmp}/tr_report_doc.XXXXXX")
trap 'rm -f "$out"' EXIT
cd "$src" || exit 1
# document | the command that renders it, from the source folder (the database path is part of
# the text)
while IFS='|' read -r doc args; do
  # shellcheck disable=SC2086  # the arguments are words
  if ! TUNEDREDUCE_LOG_LEVEL=off "$cli" $args > "$out"; then
    echo "FAIL: tunedreduce $args failed"
    fail=1
  elif ! cmp -s "$out" "$doc"; then
    echo "FAIL: $doc is not what \`tunedreduce $args\` renders now (render it again):"
    diff "$doc" "$out" | head -20
    fail=1
  fi
done <<'LIST'
docs/reports/h200-bench.md|report bench --db tests/data/h200-bench.db --format markdown
LIST
[ "$fail" = 0 ] && echo "the reports under docs/reports/ are current"
exit "$fail"
