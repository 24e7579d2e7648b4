#!/usr/bin/env bash
# NO_COLOR (https://no-color.org): the CLI's and the library's log lines carry no colour codes when
# it is set and not empty, even on a terminal; on a terminal without it they are coloured (which
# shows that the terminal, emulated with script(1), would have received colour).
# usage: check_no_color.sh TUNEDREDUCE_CLI TEST_C_API SOURCE_DIR
set -uo pipefail
cli=$1 capi=$2 src=$3
command -v script >/dev/null || { echo "SKIP: script(1) is not installed"; exit 77; }
esc=$'\033['
count() {  # the number of lines with an escape sequence in what "$@" writes to a terminal
  script -qec "$*" /dev/null 2>&1 | grep -cF "$esc"
}
replay="$cli tune --config $src/tests/data/tuner/small.toml --replay $src/tests/data/h100-sample.db --progress off --log-level info"
fail=0
n=$(count "env -u NO_COLOR $replay")
[ "$n" -gt 0 ] || { echo "FAIL: the CLI's log lines are not coloured on a terminal ($n)"; fail=1; }
n=$(count "env NO_COLOR= $replay")
[ "$n" -gt 0 ] || { echo "FAIL: an empty NO_COLOR turned colour off ($n)"; fail=1; }
n=$(count "env NO_COLOR=1 $replay")
[ "$n" -eq 0 ] || { echo "FAIL: NO_COLOR=1, yet $n coloured lines from the CLI"; fail=1; }
n=$(count "env -u NO_COLOR TUNEDREDUCE_CACHE_STATE= TUNEDREDUCE_LOG_LEVEL=loud $capi")
[ "$n" -gt 0 ] || { echo "FAIL: the library's warning is not coloured on a terminal ($n)"; fail=1; }
n=$(count "env NO_COLOR=1 TUNEDREDUCE_CACHE_STATE= TUNEDREDUCE_LOG_LEVEL=loud $capi")
[ "$n" -eq 0 ] || { echo "FAIL: NO_COLOR=1, yet $n coloured lines from the library"; fail=1; }
[ $fail -eq 0 ] && echo "OK: colour on a terminal, none under NO_COLOR, for the CLI and the library"
exit $fail
