#!/usr/bin/env bash
# Memory flood of a running gosched service on loopback (issue 17): named channels filled with
# 60 KB values from 32 connections and jobs with large bodies, until the service refuses; then
# every accepted value is received back and every accepted job read. See MemoryFlood.java for the
# settings (THREADS, CHANNELS, VALUE_KB, MAX_VALUES, JOB_KB, MAX_JOBS, ...). Needs JDK 25 only.
#
# Usage: deploy/loadtest/memory-flood.sh [base-url]   (default http://127.0.0.1:8080)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [ -x /usr/lib/jvm/temurin-25-jdk-amd64/bin/java ] && { [ -z "${JAVA_HOME:-}" ] || ! "$JAVA_HOME/bin/java" -version 2>&1 | grep -q '"25'; }; then
  export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
fi
exec "${JAVA_HOME:+$JAVA_HOME/bin/}java" "$here/MemoryFlood.java" "${1:-http://127.0.0.1:8080}"
