#!/usr/bin/env bash
# Prints the path of an nvdisasm: $LEECHRT_NVDISASM, one on PATH, or one
# unpacked under DIR (default build/nvdisasm) from the nvidia-cuda-nvdisasm
# wheel on PyPI, fetched now if missing. The CUDA toolkit here (and in CI)
# has nvcc and NVRTC but no disassembler; tools/sass_count needs one.
# Exit 1 (nothing printed) when none can be had, e.g. offline.
set -u
DIR=${1:-build/nvdisasm}
VERSION=13.5.37
if [ -n "${LEECHRT_NVDISASM:-}" ] && [ -x "$LEECHRT_NVDISASM" ]; then echo "$LEECHRT_NVDISASM"; exit 0; fi
if p=$(command -v nvdisasm); then echo "$p"; exit 0; fi
bin="$DIR/nvidia/cu13/bin/nvdisasm"
if [ ! -x "$bin" ]; then
  tmp=$(mktemp -d) || exit 1
  trap 'rm -rf "$tmp"' EXIT
  timeout 180 python3 -m pip download -q --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
    --platform manylinux_2_17_x86_64 --python-version 3.12 -d "$tmp" "nvidia-cuda-nvdisasm==$VERSION" \
    >/dev/null 2>&1 || exit 1
  mkdir -p "$DIR" || exit 1
  # unpacked beside, then renamed: never a half-written tool at $bin
  python3 - "$tmp" "$DIR" <<'PY' || exit 1
import glob, os, sys, zipfile
tmp, d = sys.argv[1], sys.argv[2]
whl = glob.glob(os.path.join(tmp, "*.whl"))[0]
with zipfile.ZipFile(whl) as z:
    names = [n for n in z.namelist() if n.endswith("/bin/nvdisasm")]
    data = z.read(names[0])
out = os.path.join(d, "nvidia", "cu13", "bin")
os.makedirs(out, exist_ok=True)
part = os.path.join(out, "nvdisasm.part")
with open(part, "wb") as f:
    f.write(data)
os.chmod(part, 0o755)
os.replace(part, os.path.join(out, "nvdisasm"))
PY
fi
[ -x "$bin" ] && "$bin" --version >/dev/null 2>&1 && { echo "$bin"; exit 0; }
exit 1
