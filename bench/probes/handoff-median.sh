# Sourced by the probe scripts (not part of the build): handoff_median JAR OPTIONS ARGS... runs
# bench/probes/HandOffRounds.java ARGS from JAR with the JVM options every runtime run needs plus
# OPTIONS (a list of options in one word, "" for none), and prints the median of its last 4 rounds.
# median4 reads 4 numbers, one a line, and prints the mean of the middle two.
PROBES=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
JAVA=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java
median4() { sort -n | awk '{v[NR]=$1} END {print (v[2]+v[3])/2}'; }
handoff_median() {
  local jar=$1 opts=$2; shift 2
  # shellcheck disable=SC2086 # opts is a list of options
  "$JAVA" $opts -XX:+UnlockDiagnosticVMOptions -XX:DisableIntrinsic=_currentThread -XX:+UseCompactObjectHeaders \
    --add-exports java.base/jdk.internal.vm=ALL-UNNAMED -Xms3g -Xmx3g -XX:+AlwaysPreTouch \
    -cp "$jar" "$PROBES/HandOffRounds.java" "$@" | tail -4 | awk '{print $3}' | median4
}
