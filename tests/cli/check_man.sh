#!/usr/bin/env bash
# The man page (`tunedreduce man`, cli/docs.cpp): the file the build writes is what the CLI
# generates now; it has the sections of a man page, a section for every command and db action,
# every option their --help lists and no hidden one, every exit code of common/exit_codes.hpp;
# groff (groff-base, scripts/install-deps.sh) renders it without a warning, and so does man -l
# where man-db is installed.
# usage: check_man.sh TUNEDREDUCE_CLI GENERATED_FILE SOURCE_DIR
set -uo pipefail
cli=$1 generated=$2 src=$3
fail=0
bad() { echo "FAIL: $*"; fail=1; }

[ -f "$generated" ] || { echo "FAIL: the build wrote no $generated"; exit 1; }
page=$(mktemp "${TMPDIR:-/tmp}/tr_man.XXXXXX")
err=$(mktemp "${TMPDIR:-/tmp}/tr_man_err.XXXXXX")
trap 'rm -f "$page" "$err"' EXIT
"$cli" man > "$page" || bad "tunedreduce man failed"
cmp -s "$page" "$generated" || bad "$generated differs from what the CLI generates now (stale build step)"

# Structure.
head -5 "$page" | grep '^\.TH TUNEDREDUCE 1 ' > /dev/null || bad "no .TH TUNEDREDUCE 1 line at the top"
for s in NAME SYNOPSIS DESCRIPTION COMMANDS OPTIONS '"ELEMENT COUNTS AND LISTS"' \
         '"SHELL COMPLETION"' '"EXIT STATUS"' \
         ENVIRONMENT FILES '"SEE ALSO"'; do
  grep -qx "\.SH $s" "$page" || bad "no section .SH $s"
done
# A line that starts with ' or a '.' that is not a request would be eaten by roff.
if grep -nE "^'|^\.[^A-Za-z\\]" "$page"; then bad "lines that roff would take for requests"; fi

# Every command and db action, with every option its --help lists; no hidden option.
commands=$("$cli" --help | sed -n '/^commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }')
actions=$("$cli" db --help | sed -n '/^actions:/,/^$/p' | awk 'NR > 1 && /^  [a-z]/ { print $1 }')
help_options() { "$@" --help | grep -oE '^  (-[a-zA-Z] \[ )?--[a-z0-9-]+' | grep -oE -- '--[a-z0-9-]+'; }
# The section of "tunedreduce NAME": from its .SS line to the next .SS or .SH.
section() { awk -v t=".SS \"tunedreduce $1\"" '$0 == t { on = 1; next } /^\.S[SH] / { on = 0 } on' "$page"; }
check_section() {  # NAME HELP-COMMAND...
  local name=$1; shift
  local text; text=$(section "$name")
  [ -n "$text" ] || { bad "no section for 'tunedreduce $name'"; return; }
  for o in $(help_options "$@"); do
    grep -qF "\\fB${o//-/\\-}\\fR" <<<"$text" || bad "'tunedreduce $name' section lacks $o"
  done
}
for c in $commands; do
  [ "$c" = db ] && continue
  check_section "$c" "$cli" "$c"
  grep -qx "\.B $c" "$page" || bad "COMMANDS does not list $c"
done
for a in $actions; do check_section "db $a" "$cli" db "$a"; done
for hidden in "list dtype" "list family" "list op" "report dtype" "report family" "report op" \
              "report device" "report kind"; do
  if section "${hidden% *}" | grep -F "\\fB\\-\\-${hidden#* }\\fR" > /dev/null; then
    bad "the ${hidden% *} section shows the hidden option --${hidden#* }"
  fi
done
# Every exit code the CLI has.
codes=$(sed -nE 's/^inline constexpr int [a-z_]+ = ([0-9]+);.*/\1/p' "$src/common/exit_codes.hpp")
[ "$(wc -w <<<"$codes")" -ge 12 ] || bad "could not read common/exit_codes.hpp: $codes"
status=$(awk '/^\.SH "EXIT STATUS"/ { on = 1; next } /^\.SH / { on = 0 } on' "$page")
for c in $codes; do grep -qx "\.B $c" <<<"$status" || bad "EXIT STATUS lacks $c"; done

# Rendering: no warning from groff (all warnings on) or man.
if command -v groff > /dev/null; then
  groff -man -Tutf8 -ww -z "$page" 2> "$err" || bad "groff failed"
  [ -s "$err" ] && { cat "$err"; bad "groff warns"; }
  out=$(groff -man -Tutf8 "$page" 2>/dev/null | sed $'s/.\b//g')  # without overstrikes
  grep -q "ELEMENT COUNTS AND LISTS" <<<"$out" || bad "the rendered page lacks its grammar section"
  grep -q -- "--sizes COUNTS" <<<"$out" || bad "the rendered page lacks --sizes COUNTS"
else
  echo "note: groff is not installed (Debian: groff-base): the page was not rendered"
fi
if command -v man > /dev/null; then
  MANWIDTH=80 man --warnings -l "$page" > /dev/null 2> "$err" || bad "man -l failed"
  [ -s "$err" ] && { cat "$err"; bad "man -l warns"; }
fi

[ $fail -eq 0 ] && echo "OK: the man page is complete and renders without warnings"
exit $fail
