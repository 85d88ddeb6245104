#!/usr/bin/env bash
# Builds and runs the peer comparison: gosched, JDK 25 virtual threads, Kotlin coroutines and Go,
# the same workloads in one invocation, rounds interleaved; prints a Markdown table and saves it
# under bench/results/. Options (./bench/compare.sh --help): --workloads, --peers, --rounds,
# --warmup, --quick, --procs, --heap, --parked-heap, --jfr DIR, --no-build, and the quiet-machine
# guard: a full run is refused when the 1-minute load average is above --max-load (1.0) after
# waiting up to --wait-quiet S (120), unless --allow-noisy marks the table NOISY; --quick runs are
# only marked. See bench/README.md.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

if [ -z "${JAVA_HOME:-}" ] && [ -d /usr/lib/jvm/temurin-25-jdk-amd64 ]; then
  export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
fi
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"

build=1
args=()
for a in "$@"; do
  case "$a" in
    --no-build) build=0 ;;
    -h|--help) build=0; args+=("$a") ;;
    *) args+=("$a") ;;
  esac
done

# Go peer: Debian's golang-go, installed if missing.
if ! command -v go >/dev/null 2>&1; then
  echo "compare.sh: installing golang-go (Debian)" >&2
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq golang-go >/dev/null
fi

if [ "$build" = 1 ]; then
  ./mvnw -B -q -pl scheduler-bench -am -DskipTests package
  (cd bench/go && GOPROXY=off GOFLAGS=-mod=mod go build -o bench-go .)
fi

label="$(git rev-parse --abbrev-ref HEAD 2>/dev/null || echo '?')@$(git rev-parse --short HEAD 2>/dev/null || echo '?')"
if [ -n "$(git status --porcelain 2>/dev/null | grep -v '^??' || true)" ]; then label="$label+dirty"; fi

exec "$JAVA" -Xmx256m -cp scheduler-bench/target/benchmarks.jar io.gosched.bench.compare.Compare \
  --jar scheduler-bench/target/benchmarks.jar --go-bin bench/go/bench-go --label "$label" ${args[@]+"${args[@]}"}
