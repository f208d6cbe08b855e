#!/usr/bin/env bash
# Installs what kreg's build and tests need from Debian's packages. The CUDA toolkit
# (nvcc, NVRTC, driver headers) is expected in its standard place, /usr/local/cuda.
# clang and its runtime libraries (libFuzzer among them) build the fuzzers. hiredis and
# OpenSSL's libcrypto are the remote cache's client and signatures; the remote-cache tests
# start redis-server processes of their own (none runs as a service). The Python
# package's build and test tools (nanobind, scikit-build-core, numpy, pytest) come from PyPI.
set -euo pipefail
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
  build-essential cmake ninja-build clang libclang-rt-dev \
  libgtest-dev libgmock-dev libbenchmark-dev \
  libxxhash-dev libcli11-dev nlohmann-json3-dev libdlpack-dev \
  libhiredis-dev libssl-dev redis-server >/dev/null
# The Python extension's build and tests (python/, docs/python.md), from PyPI.
python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
  -r "$(dirname "$0")/../python/requirements-dev.txt"
if [[ ! -x /usr/local/cuda/bin/nvcc ]] && ! command -v nvcc >/dev/null; then
  echo "install-deps: the CUDA toolkit (12.4 or newer) is required in /usr/local/cuda" >&2
  exit 1
fi
