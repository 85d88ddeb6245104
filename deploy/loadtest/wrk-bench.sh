#!/usr/bin/env bash
# Load test of a running gosched service on loopback with wrk (Debian package `wrk`):
#   1. small job submissions per second (POST /api/v1/jobs)
#   2. channel operations per second (alternating send/recv on one buffered channel)
# Each prints wrk's own report and one line "RESULT name=... rps=... p99_ms=..." to compare with
# the targets (>= 10,000 submissions/s, >= 20,000 channel ops/s, p99 < 50 ms on 2 cores).
#
# Usage: deploy/loadtest/wrk-bench.sh [base-url]   (default http://127.0.0.1:8080)
# Env:   DURATION (15s) THREADS (2) CONNECTIONS (64) WRK_TOKEN (bearer token, if the service has one:
#        the static gosched.api.token, or a JWT with jobs:write and channels:write)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
base="${1:-http://127.0.0.1:8080}"
duration="${DURATION:-15s}"
threads="${THREADS:-2}"
connections="${CONNECTIONS:-64}"

case "$base" in
  http://127.*|http://localhost*|http://\[::1\]*) ;;
  *) echo "refusing to load-test $base: loopback only" >&2; exit 2 ;;
esac
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install -y wrk" >&2; exit 2; }
command -v curl >/dev/null || { echo "curl is missing: apt-get install -y curl" >&2; exit 2; }

auth=()
[ -n "${WRK_TOKEN:-}" ] && auth=(-H "Authorization: Bearer $WRK_TOKEN")

curl -fsS "${auth[@]}" "$base/api/v1/scheduler" >/dev/null || { echo "no gosched service at $base" >&2; exit 1; }

echo "== job submissions: $threads threads, $connections connections, $duration"
wrk -t"$threads" -c"$connections" -d"$duration" --latency -s "$here/wrk/submit-job.lua" "$base"

channel="wrk-bench-$$"
curl -fsS "${auth[@]}" -H 'Content-Type: application/json' -X POST "$base/api/v1/channels" \
  -d "{\"name\":\"$channel\",\"capacity\":100000}" >/dev/null
trap 'curl -fsS "${auth[@]}" -X DELETE "$base/api/v1/channels/$channel" >/dev/null || true' EXIT

echo "== channel send/recv round trips on $channel: $threads threads, $connections connections, $duration"
WRK_CHANNEL="$channel" wrk -t"$threads" -c"$connections" -d"$duration" --latency -s "$here/wrk/channel-roundtrip.lua" "$base"
