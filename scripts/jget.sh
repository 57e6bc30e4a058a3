# shellcheck shell=sh
# jget KEY JSON: the value of KEY in a one-line JSON object (dma32ctl --json)
# at its first occurrence, without quotes. dma32ctl prints a result's own
# keys before its address runs, whose objects reuse one of them ("pages"),
# so the first occurrence is the result's. POSIX sh: the guest suites
# (busybox) source it as /tests/lib/jget.sh.
jget() { printf '%s\n' "$2" | grep -o "\"$1\":\"\{0,1\}[^,\"}]*" | head -n 1 | sed "s/^\"$1\":\"\{0,1\}//"; }
