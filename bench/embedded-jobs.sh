#!/usr/bin/env bash
# Embedded (in-memory, one node) job throughput of the working tree against an earlier revision,
# in one JVM: each build in a class loader of its own, their rounds alternated, so that both see
# the same noise of a shared machine (EmbeddedJobsCompare). Reports completions/s, submissions/s
# and process CPU per job of each, and the ratios to the earlier revision.
#
#   ./bench/embedded-jobs.sh                   # against HEAD (the last commit)
#   ./bench/embedded-jobs.sh REV --runs 100000 --rounds 7 --warmup 2 --how flood,paced --jobs one-step,eight-step
#
# Builds both (offline Maven, test-compile of scheduler-service and scheduler-core only; the earlier
# revision in a temporary directory from `git archive`, with this tree's harness copied in). The
# harness is written against scheduler-service, so REV must have that module (from the restructure
# of issue 44 on; for earlier figures see bench/results/NOTES.md).
set -euo pipefail
cd "$(dirname "$0")/.."

export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
export PATH="$JAVA_HOME/bin:$PATH"

rev=HEAD
runs=100000
rounds=7
warmup=2
how=flood,paced
jobs=one-step
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then rev=$1; shift; fi
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --how) how="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

work=$(mktemp -d /tmp/gosched-embedded-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

harness=scheduler-service/src/test/java/io/gosched/service/job/EmbeddedJobsHarness.java
build() { # $1: the tree, $2: where its dependency classpath goes
  (cd "$1" && ./mvnw -o -B -ntp -q test-compile dependency:build-classpath -pl scheduler-service -am \
      -Dmdep.outputFile="$2" -Dmdep.includeScope=test >"$2.log" 2>&1) || { cat "$2.log" >&2; echo "build of $1 failed" >&2; exit 1; }
  echo "$1/scheduler-service/target/test-classes:$1/scheduler-service/target/classes:$1/scheduler-core/target/classes:$(tr ':' '\n' < "$2" | grep -v '/target/' | paste -sd:)"
}

mkdir "$work/before"
git archive "$rev" | tar -x -C "$work/before"
cp "$harness" "$work/before/$harness"
echo "building $rev and the working tree ..." >&2
before=$(build "$work/before" "$work/before.deps")
after=$(build "$PWD" "$work/after.deps")

java -Xmx3g -XX:+UseParallelGC --add-exports java.base/jdk.internal.vm=ALL-UNNAMED -XX:+UnlockDiagnosticVMOptions \
  -XX:DisableIntrinsic=_currentThread -Druns="$runs" -Drounds="$rounds" -Dwarmup="$warmup" -Dhow="$how" -Djobs="$jobs" \
  -cp "$PWD/scheduler-service/target/test-classes" io.gosched.service.job.EmbeddedJobsCompare "before=$before" "after=$after" 2>&1 \
  | grep -v '^WARNING'
