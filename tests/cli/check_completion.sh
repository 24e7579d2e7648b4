#!/usr/bin/env bash
# The bash completion script (`tunedreduce completion bash`, cli/docs.cpp): the file the build
# writes is what the CLI generates now; sourced in bash, with COMP_WORDS and COMP_CWORD set as
# bash sets them, it completes the sub-commands, db's actions, every option each command's --help
# lists (and no hidden old spelling), option values (words, comma-separated list items, files,
# --option=value) and report's KIND; every value it offers for an option the CLI accepts.
# usage: check_completion.sh TUNEDREDUCE_CLI GENERATED_FILE SOURCE_DIR
set -uo pipefail
cli=$1 generated=$2 src=$3
fail=0
bad() { echo "FAIL: $*"; fail=1; }

[ -f "$generated" ] || { echo "FAIL: the build wrote no $generated"; exit 1; }
script=$(mktemp "${TMPDIR:-/tmp}/tr_completion.XXXXXX")
work=$(mktemp -d "${TMPDIR:-/tmp}/tr_completion_dir.XXXXXX")
trap 'rm -rf "$script" "$work"' EXIT
"$cli" completion bash > "$script" || bad "tunedreduce completion bash failed"
"$cli" completion --output "$work/out" && cmp -s "$script" "$work/out" ||
  bad "completion --output wrote something else than standard output"
cmp -s "$script" "$generated" || bad "$generated differs from what the CLI generates now (stale build step)"
bash -n "$script" || bad "the script is not valid bash"
[ "$(bash -c 'source "$1" && complete -p tunedreduce' _ "$script")" = "complete -F _tunedreduce tunedreduce" ] ||
  bad "sourcing the script does not register _tunedreduce for tunedreduce"
"$cli" completion zsh > /dev/null 2>&1; [ $? -eq 2 ] || bad "completion zsh: not exit 2"

# complete WORDS...: the words of a command line, the last one being completed (may be empty);
# prints COMPREPLY, one a line. bash splits at '=' (COMP_WORDBREAKS), so "--dtypes=" is given as
# two words, "--dtypes" "=".
complete_line() {
  bash -c '
    source "$1"; shift
    COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
    _tunedreduce tunedreduce "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]:-}"
    printf "%s\n" "${COMPREPLY[@]}"' _ "$script" "$@" 2>&1
}
# expect "WANTED..." -- WORDS...: every wanted word is offered. reject "UNWANTED..." -- WORDS...
expect() {
  local want=$1; shift; shift
  local got; got=$(complete_line "$@")
  for w in $want; do grep -qxF -- "$w" <<<"$got" || bad "'$*' does not offer '$w' (offers: $(tr '\n' ' ' <<<"$got"))"; done
}
reject() {
  local unwanted=$1; shift; shift
  local got; got=$(complete_line "$@")
  for w in $unwanted; do grep -qxF -- "$w" <<<"$got" && bad "'$*' offers '$w'"; done
}
exactly() {
  local want=$1; shift; shift
  local got; got=$(complete_line "$@" | sort | tr '\n' ' ' | sed 's/ $//')
  want=$(tr ' ' '\n' <<<"$want" | sort | tr '\n' ' ' | sed 's/ $//')
  [ "$got" = "$want" ] || bad "'$*' offers '$got', expected '$want'"
}

# Sub-commands: every one of the top-level --help.
commands=$("$cli" --help | sed -n '/^commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }')
[ "$(wc -w <<<"$commands")" -ge 6 ] || bad "could not read the commands of --help: $commands"
expect "$commands --help --version" -- tunedreduce ""
exactly "report" -- tunedreduce re
# db's actions: every one its --help lists.
actions=$("$cli" db --help | sed -n '/^actions:/,/^$/p' | awk 'NR > 1 && /^  [a-z]/ { print $1 }')
[ "$(wc -w <<<"$actions")" -ge 6 ] || bad "could not read db's actions: $actions"
expect "$actions" -- tunedreduce db ""

# Options: every one each command's --help lists, and no hidden one.
help_options() { "$@" --help | grep -oE '^  (-[a-zA-Z] \[ )?--[a-z0-9-]+' | grep -oE -- '--[a-z0-9-]+'; }
for c in $commands; do
  [ "$c" = db ] && continue
  expect "$(help_options "$cli" "$c")" -- tunedreduce "$c" --
done
for a in $actions; do expect "$(help_options "$cli" db "$a")" -- tunedreduce db "$a" --; done
expect "--sizes --dtypes --families --blocks --strategy --dry-run" -- tunedreduce tune --
reject "--dtype --family --op" -- tunedreduce list --
reject "--dtype --device --op --family --kind" -- tunedreduce report --
exactly "--dtypes" -- tunedreduce list --dt
exactly "-o" -- tunedreduce report -o  # a complete short option completes to itself

# Values: words, list items after a comma, --option=value, old spellings, files.
exactly "i32 u32 i64 u64 f32 f64 f16 bf16" -- tunedreduce list --dtypes ""
exactly "i32,f32 i32,f64 i32,f16" -- tunedreduce bench --dtypes i32,f
exactly "i32 u32 i64 u64 f32 f64 f16 bf16" -- tunedreduce report --dtypes = ""
exactly "sum" -- tunedreduce tune --ops = s
exactly "f64" -- tunedreduce list --dtype f6  # old spelling: not offered, still completed
exactly "min max" -- tunedreduce report --op m
exactly "sum min max exact_sum wide_sum argmin argmax absmax" -- tunedreduce list --ops ""
exactly "argmin argmax" -- tunedreduce report --ops arg
exactly "sum,argmin sum,argmax" -- tunedreduce list --ops sum,arg
exactly "argmax" -- tunedreduce tune --ops = argma
expect "smem vectorized warp_shuffle" -- tunedreduce list --families ""
exactly "cold clean dirty warm" -- tunedreduce bench --l2 ""
exactly "cold warm" -- tunedreduce tune --l2 ""
exactly "cold warm" -- tunedreduce report --l2 ""
exactly "table markdown csv json html" -- tunedreduce report --format ""
exactly "trace debug info warn error critical off" -- tunedreduce db info --log-level ""
exactly "" -- tunedreduce tune --sizes ""
touch "$work/alpha.db" "$work/beta.toml"
exactly "$work/alpha.db" -- tunedreduce report --db "$work/al"
exactly "$work/beta.toml" -- tunedreduce tune --config "$work/b"
exactly "$work/alpha.db" -- tunedreduce deploy --db "$work/a"
exactly "$work/alpha.db" -- tunedreduce db merge --into out.db "$work/a"
exactly "$work/alpha.db" -- tunedreduce db merge --into out.db x.db "$work/a"  # any number
exactly "$work/alpha.db" -- tunedreduce db import "$work/a"
# report's KIND, once, wherever it comes among the options.
exactly "best" -- tunedreduce report bes
exactly "heatmap" -- tunedreduce report --dtypes i32 --db x.db he
exactly "" -- tunedreduce report best he
expect "--format" -- tunedreduce report best --fo

# Every value offered is accepted: by list (--log-level), report (--format, --l2) and
# tune --dry-run (--strategy, --l2, --bisect, --progress).
sample=$src/tests/data/h100-sample.db
small=$src/tests/data/tuner/small.toml
for v in $(complete_line tunedreduce list --log-level ""); do
  "$cli" list --log-level "$v" --families smem --dtypes f64 --ops max > /dev/null 2>&1 ||
    bad "list --log-level $v: offered, not accepted"
done
for v in $(complete_line tunedreduce report --format ""); do
  "$cli" report best --db "$sample" --immutable --format "$v" > /dev/null 2>&1 ||
    bad "report --format $v: offered, not accepted"
done
for opt in --strategy --l2 --bisect --progress; do
  for v in $(complete_line tunedreduce tune "$opt" ""); do
    "$cli" tune --dry-run --config "$small" --random-count 4 "$opt" "$v" > /dev/null 2>&1 ||
      bad "tune $opt $v: offered, not accepted"
  done
done
for v in $(complete_line tunedreduce list --families ""); do
  "$cli" list --families "$v" > /dev/null 2>&1 || bad "list --families $v: offered, not accepted"
done
# Every operator offered: listed (argmin and argmax too), and a report and a dry run accept it.
for v in $(complete_line tunedreduce list --ops ""); do
  [ -n "$("$cli" list --ops "$v" 2> /dev/null)" ] || bad "list --ops $v: offered, lists nothing"
  "$cli" report best --db "$sample" --immutable --ops "$v" > /dev/null 2>&1 ||
    bad "report --ops $v: offered, not accepted"
done
for v in argmin argmax; do
  "$cli" tune --dry-run --config "$small" --ops "$v" > /dev/null 2>&1 ||
    bad "tune --dry-run --ops $v: offered, not accepted"
done

[ $fail -eq 0 ] && echo "OK: the completion script completes commands, actions, options and values"
exit $fail
