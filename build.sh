#!/usr/bin/env bash
# leechrt build entry point.
#   ./build.sh          install missing Debian packages (as root), build everything
#   ./build.sh test     build, then run every test; ends with "N passed, N failed, N skipped"
#   ./build.sh fuzz     build the libFuzzer targets (needs clang)
#   ./build.sh clean
set -euo pipefail
cd "$(dirname "$0")"

# Debian package -> a file it provides; checked before building.
DEPS=(
  "libxxhash-dev:/usr/include/xxhash.h"
  "libffi-dev:/usr/include/x86_64-linux-gnu/ffi.h"
  "libjansson-dev:/usr/include/jansson.h"
  "clang:/usr/bin/clang"
  "libclang-rt-14-dev:/usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a"
  "zlib1g-dev:/usr/include/zlib.h"
)
CUDA=${CUDA:-/usr/local/cuda}

missing=()
for d in "${DEPS[@]}"; do
  pkg=${d%%:*}; file=${d#*:}
  # libffi's header lives under the multiarch folder on some systems only.
  if [ "$pkg" = libffi-dev ] && [ -e /usr/include/ffi.h ]; then continue; fi
  [ -e "$file" ] || [ -n "${DEPINC:-}" ] || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "build.sh: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "build.sh: missing Debian packages: ${missing[*]}" >&2
    echo "HINT: sudo apt-get install ${missing[*]}" >&2
    # clang and its fuzzer runtime only matter for fuzzing; the rest is required.
    for m in "${missing[@]}"; do
      case $m in clang|libclang-rt-14-dev) ;; *) exit 1 ;; esac
    done
  fi
fi
if [ ! -e "$CUDA/include/cuda.h" ] || [ ! -e "$CUDA/include/nvrtc.h" ]; then
  echo "build.sh: CUDA toolkit headers not found under $CUDA (set CUDA=...)" >&2
  exit 1
fi

JOBS=${JOBS:-$(nproc)}
case "${1:-build}" in
  build) make -j"$JOBS" all CUDA="$CUDA" ;;
  test)
    make -j"$JOBS" all CUDA="$CUDA"
    if command -v clang >/dev/null && [ "${LEECHRT_NO_FUZZ:-0}" != 1 ]; then
      make -j"$JOBS" fuzzers CUDA="$CUDA"
    fi
    exec test/run.sh build ;;
  fuzz) make -j"$JOBS" fuzzers CUDA="$CUDA" ;;
  clean) make clean ;;
  *) echo "usage: $0 [build|test|fuzz|clean]" >&2; exit 2 ;;
esac
