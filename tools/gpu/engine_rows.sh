#!/usr/bin/env bash
# engine_rows.sh ENGINE_CSV SWEEP_CSV: the sweep rows of the LEECHRT_TUNE variant that ran the
# engine fastest, as a tune CSV for `tune_gemv --from-csv` (stdout; header first).
#
# Why: tune_gemv times each shape as a chain of copies of one kernel, and on the small shapes
# that chain can rank geometries differently from the engine's step, where each GEMV follows a
# short rotation or norm kernel (8B, session 25: the chain's fastest side-warp counts ran the
# step 4% slower). So tools/gpu/h200.sh tune-engine hands the candidates to bench_engine as
# LEECHRT_TUNE variants and only the step's tok/s decides what reaches the table.
#
# ENGINE_CSV: bench_engine --csv rows; its "step" rows carry tok_s (column 14) and the variant
# (column 15, "LEECHRT_TUNE=..."). SWEEP_CSV: tune_gemv --csv rows, knobs in columns 14-23.
# When "LEECHRT_TUNE=-" (the table as it is) wins, only the header is written and the exit
# status is 3: nothing to merge. A winning entry with no sweep row is an error (exit 1).
set -u
eng=${1:?usage: engine_rows.sh ENGINE_CSV SWEEP_CSV}
sweep=${2:?usage: engine_rows.sh ENGINE_CSV SWEEP_CSV}
for f in "$eng" "$sweep"; do
  [ -r "$f" ] || { echo "engine_rows.sh: cannot read $f" >&2; exit 1; }
done
win=$(awk -F, '$1 != "date" && $6 == "step" && $15 ~ /^"?LEECHRT_TUNE=/ {
    v = $15; gsub(/"/, "", v); sub(/^LEECHRT_TUNE=/, "", v)
    if (n && $4 != arm) { bad = 1; exit 1 }
    if (!n++ || $14 + 0 > best) { best = $14 + 0; w = v; arm = $4 }
    t = t sprintf("  %.2f tok/s  %s\n", $14, v) }
  END { if (!n || bad) exit 1; printf "%s", t > "/dev/stderr"; print w }' "$eng") ||
  { echo "engine_rows.sh: $eng: no step rows with a LEECHRT_TUNE variant, or rows of several layouts" >&2; exit 1; }
echo "engine_rows.sh: fastest: $win" >&2
if [ "$win" = "-" ]; then
  head -1 "$sweep"
  echo "engine_rows.sh: the table's rows won; nothing to merge" >&2
  exit 3
fi
# the rows are printed at the end, after every entry was found: no partial output
awk -F, -v win="$win" '
  BEGIN { n = split(win, e, ";"); for (i = 1; i <= n; i++) if (e[i] != "") { want[e[i]] = 1; left++ } }
  NR == 1 { out = $0 "\n" }
  NR > 1 && $1 != "date" {
    a = $4; sub(/@.*/, "", a)
    k = a ":" $7 "x" $8 "=" $14 "/" $15 "/" $16 "/" $19 "/" $17 "/" $18 "/" $20 "/" $21 "/" $22 "/" $23
    if (k in want) { out = out $0 "\n"; if (!(k in seen)) { seen[k] = 1; left-- } }
  }
  END {
    if (left) { for (k in want) if (!(k in seen)) print "engine_rows.sh: no sweep row for " k > "/dev/stderr"; exit 1 }
    printf "%s", out
  }
' "$sweep"
