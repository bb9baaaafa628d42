#!/usr/bin/env bash
# Runs every test program, replays every fuzz corpus, runs each libFuzzer
# target for a bounded time, and prints one summary line:
#   N passed, N failed, N skipped
# Usage: test/run.sh BUILD_DIR [FILTER]
set -u
B=${1:-build}
F=${2:-}
FUZZ_SECONDS=${LEECHRT_FUZZ_SECONDS:-20}
pass=0 fail=0 skip=0
failed=()
log=$(mktemp)
# Tests get a private cubin cache so they neither read nor pollute the user's.
export LEECHRT_CACHE_DIR=${LEECHRT_TEST_CACHE_DIR:-$(mktemp -d)}

add() { # name, output file, exit code
  local line p f s
  line=$(grep -a '^t-summary:' "$2" | tail -1)
  if [ -z "$line" ]; then
    fail=$((fail+1)); failed+=("$1 (crashed: exit $3)")
    tail -20 "$2" | sed 's/^/    /'
    return
  fi
  read -r _ p f s <<<"$line"
  pass=$((pass+p)); fail=$((fail+f)); skip=$((skip+s))
  # a program with failed cases, or one that reported none failed but exited non-zero
  if [ "$f" != 0 ] || { [ "$3" != 0 ] && [ "$f" = 0 ]; }; then
    [ "$f" = 0 ] && { fail=$((fail+1)); f=1; }
    failed+=("$1")
  fi
  grep -a -E '^(FAIL|skip)' "$2" | sed 's/^/  /'
  if [ "$f" = 0 ]; then
    grep -a -E '^    ' "$2" | head -40
  else
    # each failed case's own output (the lines since the case before it
    # ended), its last 60 lines: the message is at the end
    awk '/^(ok  |skip) /{n=0; next} /^FAIL /{print "  -- " $0; s=n>60?n-60:0; for(i=s;i<n;i++) print b[i]; n=0; next} {b[n++]=$0}' "$2"
  fi
}

for t in "$B"/test/*; do
  [ -x "$t" ] || continue
  n=$(basename "$t")
  [ -n "$F" ] && [[ $n != *$F* ]] && continue
  echo "== $n"
  timeout 1200 "$t" >"$log" 2>&1; rc=$?
  add "$n" "$log" $rc
done

for r in "$B"/fuzz/*-replay; do
  [ -x "$r" ] || continue
  n=$(basename "$r" -replay)
  [ -n "$F" ] && [[ $n != *$F* ]] && continue
  src=$(find . -path ./"$B" -prune -o -path './.*' -prune -o -path './build*' -prune -o -name "$n.c" -print | head -1)
  dir=$(dirname "$src")/corpus/${n%_fuzz}
  echo "== $n replay ($dir)"
  timeout 600 "$r" "$dir" >"$log" 2>&1; rc=$?
  add "$n-replay" "$log" $rc
done

# Bounded libFuzzer runs (CI and ./build.sh test); a crash is a failure and its
# input is kept under build/fuzz-crashes for turning into a regression file.
# LEECHRT_FUZZ_JOBS targets at a time (default: the CPUs), each on one core for
# its FUZZ_SECONDS: the same effort per target in half the wall time on CI's two
# cores. Results are reported in target order.
if [ "$FUZZ_SECONDS" != 0 ]; then
  FJ=${LEECHRT_FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
  FL=$(mktemp -d); mkdir -p "$B/fuzz-crashes"
  names=()
  for z in "$B"/fuzz/*_fuzz; do
    [ -x "$z" ] || continue
    n=$(basename "$z")
    [ -n "$F" ] && [[ $n != *$F* ]] && continue
    src=$(find . -path ./"$B" -prune -o -path './.*' -prune -o -path './build*' -prune -o -name "$n.c" -print | head -1)
    dir=$(dirname "$src")/corpus/${n%_fuzz}
    while [ "$(jobs -rp | wc -l)" -ge "$FJ" ]; do wait -n || true; done
    names+=("$n")
    (
      work=$(mktemp -d)
      timeout $((FUZZ_SECONDS + 120)) "$z" -max_total_time="$FUZZ_SECONDS" -rss_limit_mb=4096 \
        -artifact_prefix="$B/fuzz-crashes/$n-" "$work" "$dir" >"$FL/$n.log" 2>&1
      echo $? >"$FL/$n.rc"
      rm -rf "$work"
    ) &
  done
  wait
  for n in "${names[@]+"${names[@]}"}"; do
    echo "== $n libFuzzer ${FUZZ_SECONDS}s"
    rc=$(cat "$FL/$n.rc" 2>/dev/null || echo 1)
    if [ "$rc" = 0 ]; then pass=$((pass+1)); echo "ok   $n: $(grep -a -o 'Done [0-9]* runs' "$FL/$n.log" | tail -1)"
    else fail=$((fail+1)); failed+=("$n (libFuzzer exit $rc)"); grep -a -A12 'ERROR' "$FL/$n.log" | head -30; fi
  done
  rm -rf "$FL"
fi
rm -f "$log"
for f in "${failed[@]+"${failed[@]}"}"; do echo "FAILED: $f"; done
echo "$pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
