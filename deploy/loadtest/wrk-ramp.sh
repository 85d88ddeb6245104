#!/usr/bin/env bash
# The containerized load test: wrk (Debian's package) against every node of a stack, in a container
# on the stack's network (`docker-compose -f docker-compose.cluster.yml --profile load up`).
#
#   0. warm-up: LOAD_WARMUP_SECONDS at the first connection count (a cold JVM's first seconds say
#      nothing about its saturation), counted in the totals but not in the ramp;
#   1. ramp: one phase per connection count in LOAD_RAMP (each LOAD_STAGE_SECONDS long), small job
#      submissions spread over the nodes; the ramp stops at saturation, the first phase that adds less
#      than 10% to the best throughput so far, whose p99 passes LOAD_MAX_P99_MS (requests queue up),
#      or that is refused (429/503) or fails (5xx, socket errors);
#   2. steady: LOAD_STEADY_SECONDS at the connection count of the phase with the best throughput.
#
# wrk keeps a fixed number of connections busy (a closed loop: each sends its next request when the
# last is answered), so the ramp raises connections, not an arrival rate; throughput stops growing
# where the nodes are saturated.
#
# Writes LOAD_RESULT (JSON: every phase with requests, requests/s, p50/p99/max in ms, responses by
# status, 429s without Retry-After, socket errors; the saturation point; totals) and prints it.
# Exits 1 when nothing was answered, any response was a 5xx, or a 429 came without Retry-After.
#
# Env: LOAD_TARGETS (comma-separated base URLs; default the three nodes of docker-compose.cluster.yml)
#      LOAD_WARMUP_SECONDS (30), LOAD_RAMP ("3 6 12 24 48"), LOAD_STAGE_SECONDS (15), LOAD_STEADY_SECONDS (120), LOAD_MAX_P99_MS (1000),
#      LOAD_RESULT (/results/load-result.json), GOSCHED_TOKEN (bearer token, if the service has one)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
targets="${LOAD_TARGETS:-http://node-1:8080,http://node-2:8080,http://node-3:8080}"
ramp="${LOAD_RAMP:-3 6 12 24 48}"
stage_seconds="${LOAD_STAGE_SECONDS:-15}"
steady_seconds="${LOAD_STEADY_SECONDS:-120}"
warmup_seconds="${LOAD_WARMUP_SECONDS:-30}"
max_p99_ms="${LOAD_MAX_P99_MS:-1000}"
result="${LOAD_RESULT:-/results/load-result.json}"
export WRK_TOKEN="${GOSCHED_TOKEN:-${WRK_TOKEN:-}}"
export WRK_TARGETS="$targets"

IFS=, read -r -a urls <<< "$targets"
threads=${#urls[@]}
auth=()
[ -n "$WRK_TOKEN" ] && auth=(-H "Authorization: Bearer $WRK_TOKEN")

# Every node must answer before the clock starts (compose waits for health; a lone run may not).
for url in "${urls[@]}"; do
  for i in $(seq 1 60); do
    curl -fsS -o /dev/null "${auth[@]}" "$url/api/v1/scheduler" && break
    [ "$i" = 60 ] && { echo "no gosched service answers at $url" >&2; exit 1; }
    sleep 2
  done
done

phase() { # name connections seconds -> the PHASE json on stdout, wrk's report on stderr
  local out
  out="$(WRK_PHASE="$1" WRK_CONNECTIONS="$2" wrk -t"$threads" -c"$2" -d"$3"s --timeout 10s --latency \
    -s "$here/wrk/ramp.lua" "${urls[0]}")"
  printf '%s\n' "$out" | grep -v '^PHASE ' >&2
  printf '%s\n' "$out" | sed -n 's/^PHASE //p'
}
field() { sed -E "s/.*\"$1\":([0-9.]+).*/\1/" <<< "$2"; }
# The sum of the numbers after every key matching the pattern, e.g. '"5[0-9][0-9]"' or '"requests"'.
sum() { { grep -oE "$1:[0-9]+" <<< "$2" || true; } | awk -F: '{ s += $NF } END { print s + 0 }'; }
above() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > b) }'; } # a > b, for decimals

phases=()
first="$(set -- $ramp; echo "${1:-$threads}")"
[ "$first" -lt "$threads" ] && first=$threads
if [ "$warmup_seconds" -gt 0 ]; then
  echo "== warm-up: $first connections over $threads node(s) for ${warmup_seconds}s" >&2
  phases+=("$(phase warmup "$first" "$warmup_seconds")")
fi
reason="the ramp ended before saturation (LOAD_RAMP)"
best_rps=0
best_connections=""
for c in $ramp; do
  [ "$c" -lt "$threads" ] && c=$threads
  echo "== ramp: $c connections over $threads node(s) for ${stage_seconds}s" >&2
  p="$(phase ramp "$c" "$stage_seconds")"
  phases+=("$p")
  rps="$(field rps "$p")"
  refused=$(( $(sum '"(429|5[0-9][0-9])"' "$p") + $(field socket_errors "$p") ))
  # Saturated: less than 10% above the best so far (the first phase always counts as growth).
  grew=false
  if [ -z "$best_connections" ] || above "$rps" "$(awk -v b="$best_rps" 'BEGIN { print b * 1.1 }')"; then grew=true; fi
  if [ -z "$best_connections" ] || above "$rps" "$best_rps"; then best_rps="$rps"; best_connections="$c"; fi
  p99="$(field p99_ms "$p")"
  if ! $grew || [ "$refused" -gt 0 ] || above "$p99" "$max_p99_ms"; then
    if ! $grew; then reason="throughput grew less than 10% at $c connections"
    elif [ "$refused" -gt 0 ]; then reason="$refused requests refused or failed at $c connections"
    else reason="p99 $p99 ms above $max_p99_ms ms at $c connections"; fi
    echo "== saturated: $reason ($rps req/s; best $best_rps req/s at $best_connections connections)" >&2
    break
  fi
done

echo "== steady: $best_connections connections for ${steady_seconds}s" >&2
steady="$(phase "steady" "$best_connections" "$steady_seconds")"
phases+=("$steady")

all="$(printf '%s\n' "${phases[@]}")"
requests="$(sum '"requests"' "$all")"
s5xx="$(sum '"5[0-9][0-9]"' "$all")"
s429="$(sum '"429"' "$all")"
missing="$(sum '"retry_after_missing"' "$all")"
socket="$(sum '"socket_errors"' "$all")"

mkdir -p "$(dirname "$result")"
{
  printf '{"tool":"wrk","targets":"%s","warmup_seconds":%s,"stage_seconds":%s,"steady_seconds":%s,\n' \
    "$targets" "$warmup_seconds" "$stage_seconds" "$steady_seconds"
  printf ' "phases":[\n  %s\n ],\n' "$(printf '%s\n' "${phases[@]}" | paste -sd, | sed 's/},{/},\n  {/g')"
  printf ' "saturation":{"connections":%s,"rps":%s,"reason":"%s"},\n' "$best_connections" "$best_rps" "$reason"
  printf ' "steady":%s,\n' "$steady"
  printf ' "totals":{"requests":%s,"status_5xx":%s,"status_429":%s,"retry_after_missing":%s,"socket_errors":%s}}\n' \
    "$requests" "$s5xx" "$s429" "$missing" "$socket"
} > "$result.tmp"
mv "$result.tmp" "$result"
cat "$result"

printf 'RESULT steady: %s req/s, p50 %s ms, p99 %s ms over %s connections; all phases: %s requests, %s 5xx, %s 429 (%s without Retry-After), %s socket errors\n' \
  "$(field rps "$steady")" "$(field p50_ms "$steady")" "$(field p99_ms "$steady")" "$best_connections" \
  "$requests" "$s5xx" "$s429" "$missing" "$socket"
fail=""
[ "$requests" -gt 0 ] || fail="$fail no request answered;"
[ "$s5xx" -eq 0 ] || fail="$fail $s5xx responses were 5xx;"
[ "$missing" -eq 0 ] || fail="$fail $missing 429 responses without Retry-After;"
if [ -n "$fail" ]; then
  echo "FAIL:$fail" >&2
  exit 1
fi
