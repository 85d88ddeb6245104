#!/usr/bin/env python3
"""Where the time goes, from a JFR recording: the hottest methods by self and inclusive share of
execution samples, optionally only for threads whose name contains a filter, and the hottest lines.

usage: bench/jfr_top.py recording.jfr [thread-name-filter] [top-n]
e.g.   bench/jfr_top.py /tmp/jfr/gosched-p2.jfr gosched-m 25
Needs `jfr` from the JDK (JAVA_HOME/bin or PATH)."""
import collections
import os
import re
import subprocess
import sys


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    rec = sys.argv[1]
    flt = sys.argv[2] if len(sys.argv) > 2 else ""
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 25
    jfr = os.path.join(os.environ["JAVA_HOME"], "bin", "jfr") if "JAVA_HOME" in os.environ else "jfr"
    out = subprocess.run([jfr, "print", "--events", "jdk.ExecutionSample", "--stack-depth", "64", rec],
                         check=True, capture_output=True, text=True).stdout
    self_m, incl_m, self_l = collections.Counter(), collections.Counter(), collections.Counter()
    n = 0
    for ev in out.split("jdk.ExecutionSample")[1:]:
        th = re.search(r'sampledThread = "([^"]*)"', ev)
        if th is None or flt not in th.group(1):
            continue
        frames = re.findall(r"^\s+([\w.$<>/]+)\(.*?line: (\d+)", ev, re.M)
        if not frames:
            continue
        n += 1
        self_m[frames[0][0]] += 1
        self_l["%s:%s" % frames[0]] += 1
        for m in {f for f, _ in frames}:
            incl_m[m] += 1
    print("%d samples in threads matching %r" % (n, flt))
    for title, c in (("self", self_m), ("inclusive", incl_m), ("self, by line", self_l)):
        print("--- " + title)
        for k, v in c.most_common(top):
            print("%5.1f%%  %s" % (100.0 * v / max(n, 1), k))


if __name__ == "__main__":
    main()
