# Shared by the service benchmarks (cluster.sh, batch-intake.sh, http-target.sh); sourced, not run.
# Sets JAVA_HOME to Temurin 25, a work directory in $work and an EXIT trap that stops every pid in
# $pids (TERM, then KILL a second later) and removes $work. Everything started listens on 127.0.0.1.
#
#   . "$(dirname "$0")/lib.sh"; bench_init gosched-NAME

export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
export PATH="$JAVA_HOME/bin:$PATH"

jar=scheduler-web/target/scheduler-web-0.1.0-SNAPSHOT.jar
nats_bin=$(command -v nats-server || echo /usr/sbin/nats-server)
ticks=$(getconf CLK_TCK)
pids=()

# bench_init NAME: the work directory and the clean-up on exit
bench_init() {
  work=$(mktemp -d "/tmp/$1.XXXXXX")
  trap bench_cleanup EXIT
  trap 'exit 130' INT TERM
}

bench_cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 1
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$work"
}

require_jar() {
  [ -f "$jar" ] || { echo "no $jar: build it with ./mvnw -B -ntp -DskipTests package -pl scheduler-web -am" >&2; exit 1; }
}

require_nats() {
  [ -x "$nats_bin" ] || { echo "nats-server missing (Debian: apt-get install -y nats-server)" >&2; exit 1; }
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
load1() { cut -d' ' -f1 /proc/loadavg; }
# the value of KEY in a line of KEY=VALUE words: kv LINE KEY
kv() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
# CPU seconds (user + system) process $1 has used so far; 0 once it is gone
cpu_s() { awk -v t="$ticks" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / t }' "/proc/$1/stat" 2>/dev/null || echo 0; }
# platform (kernel) threads of process $1 now
threads_of() { awk '/^Threads:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }
# succeeded jobs the node on port $1 counted so far
succeeded() {
  curl -s "http://127.0.0.1:$1/actuator/prometheus" | awk '/^gosched_jobs_finished_total\{.*state="succeeded"/ { s += $NF } END { printf "%d", s }'
}

# succeeded jobs the nodes on ports $@ counted so far, summed
succeeded_sum() { local s=0 p; for p in "$@"; do s=$((s + $(succeeded "$p"))); done; echo "$s"; }
# TERM to every pid given, then waits for each to end
stop_pids() { local p; for p in "$@"; do kill "$p" 2>/dev/null || true; done; for p in "$@"; do wait "$p" 2>/dev/null || true; done; }

# start_nats NAME: a JetStream nats-server on a free port ($nats_port, $nats_pid), its store and log in $work
start_nats() {
  nats_port=$(free_port)
  mkdir -p "$work/nats-$1"
  "$nats_bin" -js -sd "$work/nats-$1" -a 127.0.0.1 -p "$nats_port" >"$work/nats-$1.log" 2>&1 &
  nats_pid=$!
  pids+=("$nats_pid")
  for _ in $(seq 100); do grep -q "Server is ready" "$work/nats-$1.log" && return; sleep 0.1; done
  echo "nats-server did not start:" >&2; cat "$work/nats-$1.log" >&2; exit 1
}

# start_service NAME PORT [args...]: the service jar as ./scripts/run.sh starts it (the JVM options
# given, so it does not relaunch itself), heap $heap, log $work/NAME.log; its pid in $service_pid
start_service() {
  local name=$1 port=$2; shift 2
  java -XX:+UnlockDiagnosticVMOptions -XX:DisableIntrinsic=_currentThread -Xmx"$heap" -jar "$jar" \
    --server.port="$port" --server.address=127.0.0.1 --logging.level.root=WARN --spring.main.banner-mode=off "$@" \
    >"$work/$name.log" 2>&1 &
  service_pid=$!
  pids+=("$service_pid")
}

# await_ready PORT LOG: until the service on PORT is ready (5 minutes at most)
await_ready() {
  for _ in $(seq 600); do
    curl -sf "http://127.0.0.1:$1/actuator/health/readiness" 2>/dev/null | grep -q UP && return
    sleep 0.5
  done
  echo "the service on :$1 did not get ready:" >&2; tail -40 "$2" >&2; exit 1
}
