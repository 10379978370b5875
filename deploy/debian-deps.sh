#!/usr/bin/env bash
# Installs the Debian 12 packages tagprof needs to build, run and test.
# Both README commands call this; it does nothing when all are present.
set -euo pipefail

PKGS=(
  make gcc clang llvm pkg-config
  libbpf-dev bpftool libelf-dev zlib1g-dev libpfm4-dev
  libiberty-dev      # C++ and Rust demangling (binutils' demangler)
  protobuf-c-compiler libprotobuf-c-dev
  golang-go          # go tool pprof: the real consumer of the output
  linux-perf bpftrace valgrind   # peers for benchmarks, callgrind counts
  time               # GNU time: CPU and peak RSS of profilers in tests/bench
  libcurl4-openssl-dev   # agent: push to Pyroscope-compatible servers
  libdw-dev          # --unwind dwarf/auto: CFI unwinding with libdw
  libdebuginfod-dev  # debuginfod.h; libdebuginfod.so.1 is dlopen'd at run time
  python3            # tests: a local HTTP server for the push test
  debuginfod         # tests: a debuginfod server and debuginfod-find
  python3-yaml       # tests: parse deploy/kubernetes/daemonset.yaml
  libc6-dbg          # tests: glibc's DWARF, which the agent's memory-bound test reads
  chromium           # tests: render report timeline's HTML, headless
  llvm-14-dev        # tests: the llvmjit workload (ORC JIT + perf jitdump listener)
  libclang-rt-14-dev # tests: libFuzzer and the sanitizers' runtimes (make fuzz)
  procps util-linux
)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "debian-deps: need root to install: ${missing[*]}" >&2
  exit 1
fi
echo "debian-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
