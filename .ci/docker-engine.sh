#!/usr/bin/env bash
# A private Docker engine for CI and for a developer's machine without one: Debian's dockerd with its
# own data root, exec root, pid file and socket, so it neither uses nor disturbs a system engine, and
# a `stop` that undoes what dockerd changed on the host.
#
#   .ci/docker-engine.sh start          # starts dockerd (if not running) and prints the export line
#   eval "$(.ci/docker-engine.sh env)"  # DOCKER_HOST for this shell
#   .ci/docker-engine.sh stop [--purge] # removes its containers, stops it, undoes its host changes;
#                                       # --purge also deletes its images (the data root)
#   .ci/docker-engine.sh nice N         # sets the CPU nice value of dockerd and containerd, which the
#                                       # containers they start from then on inherit
#
# What dockerd changes on the host (measured on Debian 12): net.ipv4.ip_forward=1, the iptables
# FORWARD policy set to DROP, its DOCKER* chains with jumps from FORWARD, PREROUTING, OUTPUT and
# MASQUERADE rules in POSTROUTING, bridges docker0 and br-<id> (compose networks), and
# /etc/docker/key.json, /run/docker and docker cgroups once containers ran. `start` records the state before the first start; `stop` puts it back
# (removing only rules that name a DOCKER chain or one of its bridges, so rules anybody else added
# stay).
#
# Env: GOSCHED_DOCKER_DATA (data root: images, containers; default /var/lib/gosched-docker)
#      GOSCHED_DOCKER_RUN  (exec root, socket, pid file, recorded host state; default /run/gosched-docker)
set -euo pipefail

data="${GOSCHED_DOCKER_DATA:-/var/lib/gosched-docker}"
run="${GOSCHED_DOCKER_RUN:-/run/gosched-docker}"
sock="$run/docker.sock"
pidfile="$run/dockerd.pid"
before="$run/host-before"
log="$data/dockerd.log"
# Debian's 20.10 client (with BuildKit built in) before any other docker on PATH.
export PATH="/usr/bin:/usr/sbin:$PATH"
export DOCKER_HOST="unix://$sock"

running() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

record_host() {
  mkdir -p "$before"
  [ -f "$before/recorded" ] && return 0
  sysctl -n net.ipv4.ip_forward > "$before/ip_forward"
  iptables-save 2>/dev/null | sed -n 's/^\*//p' > "$before/tables" || true
  iptables -S FORWARD 2>/dev/null | awk '$1 == "-P" { print $3 }' > "$before/forward_policy" || true
  ip -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' > "$before/links"
  if [ -e /etc/docker/key.json ]; then echo yes; else echo no; fi > "$before/key_json"
  if [ -e /run/docker ]; then echo yes; else echo no; fi > "$before/run_docker"
  find /sys/fs/cgroup -maxdepth 2 -name docker -type d > "$before/cgroups" 2>/dev/null || true
  touch "$before/recorded"
}

start() {
  for cmd in dockerd iptables; do
    command -v "$cmd" >/dev/null || { echo "$cmd missing: apt-get install --no-install-recommends docker.io iptables" >&2; exit 2; }
  done
  if running; then
    echo "export DOCKER_HOST=$DOCKER_HOST"
    return 0
  fi
  mkdir -p "$data" "$run"
  record_host
  # setsid: its own session, so that a Ctrl-C or a CI job's end reaches it only through `stop`.
  setsid dockerd --data-root "$data" --exec-root "$run/exec" --pidfile "$pidfile" -H "$DOCKER_HOST" \
    > "$log" 2>&1 < /dev/null &
  local i
  for i in $(seq 1 120); do
    if docker info > /dev/null 2>&1; then
      echo "export DOCKER_HOST=$DOCKER_HOST"
      return 0
    fi
    sleep 0.5
  done
  echo "dockerd did not answer within 60 s; its log ($log):" >&2
  tail -n 40 "$log" >&2
  exit 1
}

undo_host() {
  [ -f "$before/recorded" ] || return 0
  sysctl -q -w "net.ipv4.ip_forward=$(cat "$before/ip_forward")" || true
  local table rule chain policy
  for table in filter nat; do
    # Rules in other chains that jump to a DOCKER chain or name one of docker's bridges, then the
    # DOCKER chains themselves.
    iptables-save -t "$table" 2>/dev/null | grep -E '^-A ' | grep -E -- '-j DOCKER|docker0|br-[0-9a-f]{12}' \
      | grep -v -E '^-A DOCKER' | while read -r rule; do
        # shellcheck disable=SC2086 # the saved rule is split into its words on purpose
        iptables -t "$table" -D ${rule#-A } 2>/dev/null || true
      done
    for chain in $(iptables-save -t "$table" 2>/dev/null | awk '/^:DOCKER/ { print substr($1, 2) }'); do
      iptables -t "$table" -F "$chain" 2>/dev/null || true
    done
    for chain in $(iptables-save -t "$table" 2>/dev/null | awk '/^:DOCKER/ { print substr($1, 2) }'); do
      iptables -t "$table" -X "$chain" 2>/dev/null || true
    done
  done
  policy="$(cat "$before/forward_policy" 2>/dev/null || true)"
  [ -n "$policy" ] && iptables -P FORWARD "$policy" 2>/dev/null || true
  # Tables dockerd created (iptables-nft creates one on first use) go again once they hold only
  # empty built-in chains with ACCEPT policies, where nft is there to delete them.
  if command -v nft >/dev/null; then
    for table in filter nat; do
      grep -qx "$table" "$before/tables" && continue
      iptables-save -t "$table" 2>/dev/null | grep -q -E '^-A |^:[A-Z-]+ (DROP|-)' && continue
      nft delete table ip "$table" 2>/dev/null || true
    done
  fi
  local link
  for link in $(ip -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }'); do
    case "$link" in
      docker0|br-*|veth*) grep -qx "$link" "$before/links" || ip link delete "$link" 2>/dev/null || true ;;
    esac
  done
  [ "$(cat "$before/key_json")" = no ] && rm -f /etc/docker/key.json
  [ "$(cat "$before/run_docker")" = no ] && rm -rf /run/docker
  local cg
  for cg in $(find /sys/fs/cgroup -maxdepth 2 -name docker -type d 2>/dev/null); do
    grep -qx "$cg" "$before/cgroups" || rmdir "$cg" 2>/dev/null || true
  done
  rm -rf "$before"
}

stop() {
  if running; then
    local ids
    ids="$(docker ps -aq 2>/dev/null || true)"
    # shellcheck disable=SC2086
    [ -n "$ids" ] && docker rm -f -v $ids > /dev/null 2>&1 || true
    docker network prune -f > /dev/null 2>&1 || true
    local pid i
    pid="$(cat "$pidfile")"
    kill -TERM "$pid"
    for i in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  fi
  # Mounts a killed daemon can leave behind (overlay layers, container shm, the exec root).
  local m
  for m in $(awk -v d="$data" -v r="$run" 'index($2, d) == 1 || index($2, r "/") == 1 { print $2 }' /proc/mounts | sort -r); do
    umount -l "$m" 2>/dev/null || true
  done
  undo_host
  rm -rf "$run/exec" "$sock" "$pidfile"
  rmdir "$run" 2>/dev/null || true
  if [ "${1:-}" = --purge ]; then
    rm -rf "$data"
  fi
}

# What the engine runs inherits its nice value: containerd starts every container's shim.
renice_engine() {
  running || return 0
  local pid
  pid="$(cat "$pidfile")"
  # shellcheck disable=SC2046 # one pid per word
  renice -n "$1" -p "$pid" $(pgrep -P "$pid") > /dev/null
}

case "${1:-}" in
  start) start ;;
  nice) renice_engine "${2:?usage: $0 nice N}" ;;
  stop) shift; stop "$@" ;;
  env) echo "export DOCKER_HOST=$DOCKER_HOST" ;;
  *) echo "usage: $0 start | stop [--purge] | env | nice N" >&2; exit 2 ;;
esac
