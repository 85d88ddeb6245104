#!/bin/bash
# Probe (not part of the build): builds /tmp/vtcount.jar, the agent (and /tmp/vtcount-boot.jar, its counter) that counts virtual threads'
# unmounts (VirtualThread.yieldContinuation) and SynchronousQueue awaits. Then:
#   java -javaagent:/tmp/vtcount.jar ... bench/probes/VirtualThreadHandOff.java pingpong 8 1000000
# VirtualThreadHandOff prints "unmounts" and "awaits" per round trip when the agent is loaded.
set -euo pipefail
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
D=$(mktemp -d)
"$JAVA_HOME/bin/javac" -d "$D" "$(dirname "$0")"/VtCount.java "$(dirname "$0")"/Agent.java
printf 'Premain-Class: vtcount.Agent\nCan-Retransform-Classes: true\nCan-Redefine-Classes: true\n' > "$D/MANIFEST.MF"
"$JAVA_HOME/bin/jar" cf /tmp/vtcount-boot.jar -C "$D" vtcount/VtCount.class
rm "$D"/vtcount/VtCount.class
"$JAVA_HOME/bin/jar" cfm /tmp/vtcount.jar "$D/MANIFEST.MF" -C "$D" vtcount
rm -rf "$D"
echo /tmp/vtcount.jar
