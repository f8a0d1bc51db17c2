#!/usr/bin/env bash
# scripts/deps.sh — install the Debian packages fpcert needs, only those missing (idempotent, quick
# when everything is there). Usage: scripts/deps.sh [--tests]   (--tests adds what tests use).
set -euo pipefail
pkgs=(build-essential cmake pkg-config libmpfr-dev libgmp-dev libeigen3-dev doctest-dev libcli11-dev
      nlohmann-json3-dev libfmt-dev librandom123-dev libtomlplusplus-dev libhwy-dev python3
      python3-dev pybind11-dev python3-numpy python3-pytest   # these four: the Python entry (docs/python.md)
      ccache)   # compiler cache: test.sh and CI reuse objects across fresh clones (CCACHE_BASEDIR)
optional=()
if [[ "${1:-}" == "--tests" ]]; then
  optional+=(chromium)   # the HTML report's rendering test; skipped with a message where it cannot install
  optional+=(clang-14 libclang-rt-14-dev)  # libFuzzer for scripts/fuzz.sh; fuzzing is skipped (said so) without them
  optional+=(libopenmpi-dev openmpi-bin)   # the MPI component (--mpi) and its test, mpirun -n 2 (docs/scale.md)
fi
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
opt_missing=()
for p in "${optional[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || opt_missing+=("$p"); done
if (( ${#missing[@]} + ${#opt_missing[@]} == 0 )); then exit 0; fi
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "fpcert: installing ${missing[*]} ${opt_missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
if (( ${#missing[@]} )); then $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; fi
if (( ${#opt_missing[@]} )); then
  $SUDO apt-get install -y -qq --no-install-recommends "${opt_missing[@]}" >/dev/null ||
    echo "fpcert: could not install ${opt_missing[*]}; the tests that need them will report skipped" >&2
fi
