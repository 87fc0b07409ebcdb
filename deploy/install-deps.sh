#!/usr/bin/env bash
# Installs every Debian 12 package mtune needs to build, test and benchmark.
# Idempotent; run as root. LLVM/MLIR 22 come prebuilt: mtune never rebuilds LLVM.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  # MLIR/LLVM 22: headers, the shared libMLIR.so, mlir-opt / FileCheck / lit.
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools clang-22
  # libFuzzer and the sanitizer runtimes of clang-22 (tests/fuzz).
  libclang-rt-22-dev
  libzstd-dev zlib1g-dev libedit-dev libxml2-dev libcurl4-openssl-dev libffi-dev
  # RPC and storage.
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libsqlite3-dev sqlite3 libabsl-dev
  # Libraries used in place of hand-written ones.
  libcli11-dev nlohmann-json3-dev libfmt-dev libcpp-httplib-dev
  # Gradient-boosted cost model of the `model` search (C API).
  libxgboost-dev
  # deploy/make-dev-certs.sh (TLS development certificates; the security test uses it).
  openssl
  # Tests and benchmarks (the libraries mtune is compared against).
  libgtest-dev libgmock-dev libbenchmark-dev libdnnl-dev libeigen3-dev libopenblas-dev
  # A one-node Slurm cluster for the test of deploy/slurm/ (tests/slurm_test.sh).
  slurm-wlm munge
  # Memory checks of the transform interpreter on the built-in templates (tests/lit).
  valgrind
  # The dashboard's browser test (headless, driven by playwright-core from npm).
  chromium
)
# The dashboard page is bundled with Node.js and npm at build time. A Node.js
# installed from elsewhere (e.g. NodeSource, whose nodejs package bundles npm and
# conflicts with Debian's npm) is used as is.
if command -v node >/dev/null && command -v npm >/dev/null; then
  echo "install-deps.sh: using the installed Node.js $(node --version) and npm $(npm --version)"
else
  packages+=(nodejs npm)
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps.sh: run as root (it calls apt-get)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
echo "install-deps.sh: all packages present"
