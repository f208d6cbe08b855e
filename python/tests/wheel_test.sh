#!/usr/bin/env bash
# `pip wheel .` builds a wheel from the source tree that installs and imports, with its compile
# worker beside the extension. Usage: wheel_test.sh SOURCE_DIR PYTHON WORK_DIR
# The precompiled set is left out (KREG_CUDA_ARCHITECTURES empty) to keep the build short;
# everything else is the build `pip install .` makes.
set -euo pipefail
src="$1"
python="$2"
work="$3"
rm -rf "$work"
mkdir -p "$work"
"$python" -m pip wheel "$src" --quiet --no-build-isolation --no-deps -w "$work/dist" \
  -Cbuild-dir="$work/build" -Ccmake.define.KREG_CUDA_ARCHITECTURES=""
wheel=$(ls "$work"/dist/kreg-*.whl)
echo "built $(basename "$wheel")"
"$python" -m pip install --quiet --no-deps --no-index --target "$work/site" "$wheel"
cd "$work"
PYTHONPATH="$work/site" KREG_CACHE_DIR="$work/cache" "$python" - <<'PY'
import os
import kreg
folder = os.path.dirname(kreg.__file__)
assert os.access(os.path.join(folder, "kreg-nvrtc-worker"), os.X_OK), os.listdir(folder)
assert os.path.exists(os.path.join(folder, "_kreg.pyi")) and os.path.exists(os.path.join(folder, "py.typed"))
r = kreg.Registry(arch="sm_90", builtins=False)
r.register_source("k", 'extern "C" __global__ void k(float* x) { x[0] = 1; }')
b = r.compile("k")
assert b.origin == "compiled" and b.arch == "sm_90", b
print("installed wheel imports and compiles:", b)
PY
rm -rf "$work"
