#!/usr/bin/env bash
# The GPU machine's one script: build, run the GPU tests, run the benchmarks,
# leave logs and CSVs under $OUT (default ./out).
#   tools/gpu/h200.sh build
#   tools/gpu/h200.sh test [FILTER]         GPU tests (every test program; CPU ones too)
#   tools/gpu/h200.sh gputest               only the test programs with GPU cases, GPUTEST_JOBS
#                                           (default 4) at a time (the whole suite took over 300 s
#                                           there, mostly CPU-only codec tests)
#   tools/gpu/h200.sh run PROGRAM ARGS...   any built program, output logged
#   tools/gpu/h200.sh require NAME          exit 0 if this machine's GPU name contains NAME, else
#                                           3 (no GPU or another card), before anything is built:
#                                           a call meant for one card costs seconds on another
#                                           (`tools/gpu/h200.sh require H200 || exit 0` first)
#   tools/gpu/h200.sh l2w [MODELS]          down's L2 prefetch share rule (LEECHRT_GEMV_L2W=4096,
#                                           _SHARE=40; the H100 SXM's default) against none,
#                                           alternating in one bench_engine process on each
#                                           model's rotated synthetic step (default
#                                           14B), rows into $OUT/engine_variants.csv
#   tools/gpu/h200.sh head [MODELS]         the output head's warps (LEECHRT_HEAD_WARPS=8, the
#                                           default, against 0: one per 512-column chunk),
#                                           alternating in one bench_engine process on each
#                                           model's rotated synthetic step (default 14B), rows
#                                           into $OUT/engine_variants.csv
#   tools/gpu/h200.sh engine [MODELS] [LAYOUTS] [RESIDUALS]
#                                           the decode benchmark (default 4B,8B,14B,32B at
#                                           default,planes14s) into $OUT/h200_engine.csv;
#                                           RESIDUALS rotated (default, as gen_synthetic's), plain
#                                           or rotated,plain (gen_synthetic --residual; a rotated
#                                           model's rows name it qwen3-MODEL-synthetic-rotated)
#   tools/gpu/h200.sh timeline [MODEL] [RESIDUAL]
#                                           the timeline probe on the model's synthetic step (default
#                                           14B, rotated; docs/engine.md, "The timeline probe"): a row per
#                                           launch into $OUT/h200_timeline.csv, the engine's rows
#                                           (graph_timeline too) into $OUT/timeline_engine.csv
#   tools/gpu/h200.sh tune-engine MODEL [p14s|p14s3] [RESIDUAL]
#                                           the tuning table's geometry of each fused shape with 0-4
#                                           side warps, on the model's synthetic weights as a PDL
#                                           chain, then the engine with the fastest per shape beside
#                                           the table; the step's tok/s picks the rows
#                                           ($OUT/tune_engine_MODEL_rows.csv, for tune_gemv
#                                           --from-csv; nothing merged); p14s3: the 3-bit form
#   tools/gpu/h200.sh controls [MODEL]      the 3-bit GEMV beside its three controls (loads-only,
#                                           decode-only from L2, decode from shared memory) on the
#                                           model's matrices and fused layer (default 14B), ball-drawn
#                                           blocks, one process, into $OUT/h200_gemv_MODEL_ball.csv
#                                           (docs/layouts.md, "The weights at shared-memory latency")
#   tools/gpu/h200.sh profile ARM [MATRICES] [MODEL]
#                                           Nsight Compute on the first launch (the verify launch)
#                                           of the arm's kernel per matrix (default gateup,down of
#                                           14B): SpeedOfLight, warp states, scheduler, occupancy,
#                                           memory workload as CSV in $OUT/ncu_ARM_MATRIX.csv
#   tools/gpu/h200.sh tune ARM [MODELS] [FLAGS]  sweep an arm's candidate geometries on the Qwen3
#                                           shapes of MODELS (default 4B,8B,14B,32B), merge the
#                                           winners into kernels/tuning_table.c (rebuild after;
#                                           a copy in $OUT), every candidate into $OUT/tune_ARM.csv.
#                                           Several calls in one run (other models, or the same
#                                           shapes with other knobs set in the script) combine:
#                                           the table takes the fastest row per shape of
#                                           $OUT/tune_ARM.csv (tune_gemv --from-csv)
# Headers the machine lacks (libffi, xxhash, jansson, zlib -dev packages) come
# unpacked in .deps/ (see docs/gpu-machine.md).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
B=${BUILD:-build-gpu}
D=$PWD/.deps
if [ -d "$D" ]; then
  # dpkg -x keeps absolute .so symlinks (libz.so -> /lib/...), which dangle on a
  # machine with another zlib; point them at the copy unpacked beside them.
  for l in "$D"/usr/lib/x86_64-linux-gnu/*.so; do
    t=$(readlink "$l" || true)
    if [ ! -e "$l" ] && [ -e "$D$t" ]; then ln -sf "$D$t" "$l"; fi
  done
  export DEPINC="-I$D/usr/include -I$D/usr/include/x86_64-linux-gnu"
  export LDFLAGS="-L$D/usr/lib/x86_64-linux-gnu -Wl,-rpath,$D/usr/lib/x86_64-linux-gnu"
fi
export LEECHRT_CACHE_DIR=${LEECHRT_CACHE_DIR:-$PWD/$B/cubin-cache}
cmd=${1:-build}; shift || true
# exit 2 before anything runs unless $2 is a Qwen3 size the synthetic models have ($1: who asks)
known_model() {
  case $2 in 4B|8B|14B|32B) ;; *) echo "$1: models are among 4B,8B,14B,32B (not $2)" >&2; exit 2 ;; esac
}
# exit 2 unless $2 is a residual form gen_synthetic takes
known_residual() {
  case $2 in plain|rotated) ;; *) echo "$1: residual $2 (plain or rotated)" >&2; exit 2 ;; esac
}
# engine's and timeline's synthetic model $1 in residual form $2 (written once per machine):
# sets M, and sfx (_rotated or empty) for the log names
engine_model() {
  sfx=; [ "$2" = rotated ] && sfx=_rotated
  M=/tmp/engine_$1$sfx.lrt
  [ -f "$M" ] || "$B/bin/gen_synthetic" -c "$1" --residual "$2" -o "$M" >/dev/null || exit 1
}
# bench_engine -n 64 on each model of the list $2 (all checked first: exit 2 on one the
# synthetic models lack) in residual form $3, rows appended to CSV $4, output logged to
# $OUT/$5_MODEL[_rotated].log; the rest are bench_engine's flags ($1: who asks)
bench_models() {
  local who=$1 models=$2 res=$3 csv=$4 log=$5 m
  shift 5
  for m in ${models//,/ }; do
    known_model "$who" "$m"
  done
  for m in ${models//,/ }; do
    engine_model "$m" "$res"
    "$B/bin/bench_engine" -m "$M" -n 64 --csv "$csv" "$@" 2>&1 | tee -a "$OUT/${log}_$m$sfx.log" | grep -E 'tok/s'
  done
}
case $cmd in
  build)
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader || true
    if ! make -j"$(nproc)" BUILD="$B" DEPINC="${DEPINC:-}" LDFLAGS="${LDFLAGS:-}" EXTRA_CFLAGS="-Wno-error=maybe-uninitialized" all >"$OUT/build.log" 2>&1; then
      grep -E "error|Error" "$OUT/build.log" | head -30; exit 1
    fi
    echo "build ok" ;;
  test)
    LEECHRT_FUZZ_SECONDS=0 test/run.sh "$B" "${1:-}" 2>&1 | tee -a "$OUT/tests.log" | grep -v '^ok ' ;;
  gputest)
    # the programs run GPUTEST_JOBS at a time (default 4; correctness tests only, none times
    # anything): the sequential run took ~320 s of a session's 1,800 device seconds, most of it
    # host references and NVRTC on one core each. Logs are appended to tests.log in this order.
    tests="api_test call_test gpu_rt_test jit_test gemv_leech_dev_test gemv_leech_i8_test gemv_leech_p14_test
           gemv_leech_p14s_test gemv_leech_p14s_swiglu_test gemv_leech_p14s_resid_test gemv_leech_p14s_rot_test gemv_leech_rec_test ops_gpu_test rotation_gpu_test rotation_test engine_gpu_test
           cache_test appliance_gpu_test leechrt_test gemv_arm_stream_test load_test gemv_arm_check_test cu_driver_test"
    L=$(mktemp -d)
    # shellcheck disable=SC2086
    printf '%s\n' $tests | xargs -P "${GPUTEST_JOBS:-4}" -I{} sh -c \
      'LEECHRT_FUZZ_SECONDS=0 test/run.sh "$1" "$2" > "$3/$2.log" 2>&1' sh "$B" {} "$L"
    P=0 F=0 S=0
    for t in $tests; do
      cat "$L/$t.log" >> "$OUT/tests.log"
      r=$(tail -1 "$L/$t.log")
      echo "$t: $r"
      read -r p _ f _ s _ <<<"$r"
      P=$((P + ${p:-0})) F=$((F + ${f:-1})) S=$((S + ${s:-0}))
      # a case skipped for want of a GPU, on the GPU machine, is a failure: a broken device
      # open would otherwise turn every GPU case into a quiet skip
      if grep -aqE "skip: .*(no NVIDIA driver|no usable NVIDIA GPU|no CUDA device|CUDA not initialized|no GPU)" "$L/$t.log"; then
        echo "$t: GPU cases skipped for want of a GPU here:"
        grep -aE "skip: .*(no NVIDIA driver|no usable NVIDIA GPU|no CUDA device|CUDA not initialized|no GPU)" "$L/$t.log" | head -3
        F=$((F + 1))
      fi
    done
    rm -rf "$L"
    echo "$P passed, $F failed, $S skipped" ;;
  engine)
    # README's decode table: each model's synthetic artifact (written once per machine, in
    # /tmp), bench_engine -n 64 at the layouts, every row appended to $OUT/h200_engine.csv
    # (for bench/results/h200_engine.csv). 8B ~60 s, 14B ~80 s, 32B ~200 s with two layouts.
    models=${1:-4B,8B,14B,32B} layouts=${2:-default,planes14s} residuals=${3:-rotated}
    for r in ${residuals//,/ }; do
      known_residual engine "$r"
    done
    for r in ${residuals//,/ }; do
      bench_models engine "$models" "$r" "$OUT/h200_engine.csv" engine --layout "$layouts"
    done ;;
  timeline)
    m=${1:-14B} r=${2:-rotated}
    known_model timeline "$m"
    known_residual timeline "$r"
    engine_model "$m" "$r"
    "$B/bin/bench_engine" -m "$M" -n 32 --layout default --timeline "$OUT/h200_timeline.csv" \
      --csv "$OUT/timeline_engine.csv" 2>&1 | tee -a "$OUT/timeline_$m.log" | grep -E 'tok/s|timeline|per phase|^    ' ;;
  require)
    # the GPU's name before any build: device calls may bring another card than the one asked for
    want=${1:?require NAME}
    name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
    case $name in
      *"$want"*) echo "require: $name" ;;
      "") echo "require: no GPU here (nvidia-smi found none), not $want: nothing run" >&2; exit 3 ;;
      *) echo "require: this GPU is $name, not $want: nothing run" >&2; exit 3 ;;
    esac ;;
  l2w)
    # whether down's L2 prefetch share rule pays on this card (on by default on the H100 SXM
    # only, lr_gemv_p14s_l2w_device_defaults): off, on, off, on in one process (~230 s for 14B)
    bench_models l2w "${1:-14B}" rotated "$OUT/engine_variants.csv" l2w --layout default \
      --env LEECHRT_GEMV_L2W=0,4096,0,4096 --env LEECHRT_GEMV_L2W_SHARE=40 ;;
  head)
    # the tensor-core head's warps (LEECHRT_HEAD_WARPS: 8, the default, against one per
    # 512-column chunk) in one process, alternating (docs/engine.md, "The head's warps": the
    # same on the H100 SXM, where the head is at the byte bound; the H200's head is not)
    bench_models head "${1:-14B}" rotated "$OUT/engine_variants.csv" head --layout default \
      --env LEECHRT_HEAD_WARPS=-,0,-,0 ;;
  run)
    p=$1; shift
    "$B/bin/$p" "$@" 2>&1 | tee -a "$OUT/$p.log" ;;
  tune)
    arm=$1; models=${2:-4B,8B,14B,32B}; shift; shift || true
    case $arm in
      # the knobs that won or came close on the 14B shapes (bench/results/h200_tune_*.csv)
      # leech_p14s: one accumulator chain needs 79 registers (3: 96); 14B down won at 256
      # threads with registers for 3 CTAs per SM (minb 3, one chain, xw; sweep at 6105a47),
      # gate|up and q|k|v at 128 threads, one chain, xw; o with 3 chains and epf. 36
      # candidates per shape; a second sweep in the same run combines (see the header).
      # Side warps (extra3 + 65536 x 1-4, eighteenth session) won every Qwen3 q|k|v, o,
      # gate|up and down shape, swept per shape: the shape's own extra3 plus the side bits,
      # 640 / 672 threads where warp groups of whole warps fit (docs/layouts.md, "The row
      # end's loads in side warps").
      leech_p14s|leech_p14s_swiglu) k="--threads 128,256,512 --rpw 1 --unroll 2 --tile 1,3 --extra0 1 --extra1 -1 --extra3 1,3 --minb 0,3,7" ;;
      leech_p14)  k="--threads 128,256 --rpw 1 --unroll 1 --tile 0,3 --extra0 1 --extra1 -1" ;;
      leech_i8)   k="--threads 128,256 --rpw 1 --unroll 1 --extra0 1 --extra1 1 --minb 0,3,6" ;;
      *) echo "tune: no candidate set for arm $arm" >&2; exit 2 ;;
    esac
    # candidates given after MODELS (tune_gemv flags) replace the arm's set
    [ $# -gt 0 ] && k="$*"
    # shellcheck disable=SC2086
    "$B/bin/tune_gemv" --arm "$arm" --models "$models" $k --reps 20 --csv "$OUT/tune_$arm.csv" \
      2>&1 | tee -a "$OUT/tune_$arm.log" | grep -v '^  '
    # the table's rows: the fastest candidate per shape over every sweep of
    # this arm in $OUT/tune_ARM.csv at this commit (several tune calls in one
    # run combine; kernels/tuning_table.c keeps the rows none of them swept, even
    # where an earlier merge in this run wrote them and nothing was rebuilt)
    # a sweep over ball-drawn blocks (--ball), on a model's weights (--model FILE) or timed as a
    # PDL chain (--pdl) picks among its own rows (ARM@ball, ARM@model, ARM@pdl, ARM@ball@pdl, ...)
    ball=; case " $k " in *" --ball "*) ball=--ball ;; esac
    case " $k " in *" --pdl "*) ball="$ball --pdl" ;; esac
    case " $k " in *" --model "*) ball="$ball --model -" ;; esac # rows ARM@model (the path is not read)
    "$B/bin/tune_gemv" --arm "$arm" $ball --from-csv "$OUT/tune_$arm.csv" ${LEECHRT_COMMIT:+--commits "$LEECHRT_COMMIT"} \
      --table kernels/tuning_table.c >/dev/null || exit 1
    cp kernels/tuning_table.c "$OUT/tuning_table.c" ;;
  tune-engine)
    # the twentieth session's engine-faithful sweep for one model: its synthetic artifact, every
    # fused shape at the tuning table's geometry with 0-4 side warps on the model's own weights
    # as a PDL chain (40+ copies), the fastest per shape handed to the engine beside the table's
    # in one process. The step's tok/s decides (tools/gpu/engine_rows.sh): the winning variant's
    # sweep rows land in $OUT/tune_engine_MODEL_rows.csv, ready for tune_gemv --from-csv.
    # FORM p14s3: the 3-bit form's arms (their rows, else Planes14S's geometry; gate|up's shape
    # on the plain arm too, whose row makes the form the shape's default layout), and the engine
    # at its default layout with three variants: the table, the geometry in use now as 3-bit
    # rows (when a shape has none yet), the chain's fastest.
    model=${1:?tune-engine MODEL [p14s|p14s3]}
    form=${2:-p14s} res=${3:-rotated}
    case $form in
      p14s) mats=qkv,o,down layout=planes14s ;;
      p14s3) mats=qkv,o,down,gateup layout=default ;;
      *) echo "tune-engine: FORM is p14s or p14s3" >&2; exit 2 ;;
    esac
    known_residual tune-engine "$res"
    M=/tmp/tune_engine_${model}_$res.lrt
    [ -f "$M" ] || "$B/bin/gen_synthetic" -c "$model" --residual "$res" -o "$M" || exit 1
    C=$OUT/tune_engine_$model.csv T=$OUT/tune_engine_$model.log E=$OUT/engine_tune_$model.csv
    rm -f "$C" "$E" # one sweep and one engine run: engine_rows.sh reads them whole
    "$B/bin/tune_gemv" --arm "leech_$form" --models "$model" --matrices "$mats" --vary-side --model "$M" --pdl --csv "$C" > "$T"
    "$B/bin/tune_gemv" --arm "leech_${form}_swiglu" --models "$model" --matrices gateup --vary-side --model "$M" --pdl --csv "$C" >> "$T"
    grep -v '^  ' "$T"
    # the geometry in use, when some shape still falls back to another arm's row
    NOW=$(awk '$1 == "now" { s = s (s ? ";" : "") $2; if ($3 == "fallback") f = 1 } END { if (f) print s }' "$T")
    # the fastest row per arm and shape as a LEECHRT_TUNE value (knob order; CSV columns 14-23)
    P=$(awk -F, 'NR>1 && $1 != "date" { k=$4 FS $7 FS $8; if (!(k in b) || $10 < b[k]) { b[k]=$10; v[k]=$4 ":" $7 "x" $8 "=" $14 "/" $15 "/" $16 "/" $19 "/" $17 "/" $18 "/" $20 "/" $21 "/" $22 "/" $23 } }
      END { s=""; for (k in v) { x=v[k]; sub(/@[^:]*/, "", x); s = s (s ? ";" : "") x }; print s }' "$C")
    echo "now: ${NOW:-none needed, every shape has a row of its arm}"
    echo "picked: $P"
    "$B/bin/bench_engine" -m "$M" -n 64 --layout "$layout" --env "LEECHRT_TUNE=-${NOW:+,$NOW},$P" --csv "$E" > "$OUT/engine_tune_$model.log" 2>&1
    grep -E '^--|tok/s' "$OUT/engine_tune_$model.log"
    R=$OUT/tune_engine_${model}_rows.csv
    tools/gpu/engine_rows.sh "$E" "$C" > "$R.tmp"
    case $? in
      0) mv "$R.tmp" "$R"
         echo "merge: tune_gemv --arm leech_$form[_swiglu] --model x --pdl --from-csv $R --table kernels/tuning_table.c" ;;
      3) rm -f "$R.tmp" ;;
      *) rm -f "$R.tmp"; echo "tune-engine: no rows to merge" >&2 ;;
    esac
    rm -f "$M" ;;
  controls)
    # which of the 3-bit GEMV's parts sets its time: the GEMV, its loads alone (also without staging
    # x, and without x or the class table: the prologue's share), its decode with the
    # weights from L2, and with them from shared memory, verified and timed side by side
    model=${1:-14B}
    known_model controls "$model"
    "$B/bin/bench_gemv" --models "$model" --arms leech_p14s3,leech_p14s3_loads,leech_p14s3_loads_nox,leech_p14s3_loads_nopro,leech_p14s3_decode,leech_p14s3_smem \
      --matrices qkv,o,gateup,down,layer_fused --ball --csv "$OUT/h200_gemv_${model,,}_ball.csv" 2>&1 |
      tee -a "$OUT/controls_$model.log" | grep -E 'layer_fused|read bound' ;;
  profile)
    arm=$1; mats=${2:-gateup,down}; model=${3:-14B}
    for m in ${mats//,/ }; do
      ncu --clock-control none -k regex:gemv -c 1 --csv --page details --section SpeedOfLight \
        --section WarpStateStats --section SchedulerStats --section Occupancy --section MemoryWorkloadAnalysis \
        "$B/bin/bench_gemv" --models "$model" --arms "$arm" --matrices "$m" --reps 3 \
        >"$OUT/ncu_${arm}_$m.csv" 2>"$OUT/ncu_${arm}_$m.log" || { echo "ncu failed on $arm $m" >&2; tail -5 "$OUT/ncu_${arm}_$m.log" >&2; }
      grep -E '"(Duration|DRAM Throughput|Achieved Occupancy|Issue Slots Busy|Eligible Warps Per Scheduler)"' "$OUT/ncu_${arm}_$m.csv" | awk -F'","' '{ gsub(/"/, "", $NF); print $(NF-2) " " $NF " " $(NF-1) }' | head -8
    done ;;
  *) echo "usage: $0 build|test [FILTER]|gputest|require NAME|l2w [MODELS]|run PROGRAM ARGS...|controls [MODEL]|profile ARM [MATRICES] [MODEL]|tune ARM [MODELS]|tune-engine MODEL [p14s|p14s3]" >&2; exit 2 ;;
esac
