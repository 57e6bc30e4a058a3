#!/bin/sh
# kernel-patches: dma32=8G is rejected with a boot message; default kept.
# run-guest: --mem 6G --append 'dma32=8G'
# shellcheck disable=SC2317 # helpers are called through check()
n=0
ok() { n=$((n + 1)); echo "ok $n $1"; }
nok() { n=$((n + 1)); echo "not ok $n $1 # $2"; }
skip() { n=$((n + 1)); echo "ok $n $1 # SKIP $2"; }
# check DESC CMD...: ok if CMD succeeds
check() { d=$1; shift; if "$@"; then ok "$d"; else nok "$d" "failed: $*"; fi; }
# zf ZONE FIELD: a field of Node 0's ZONE in /proc/zoneinfo (present, spanned, start_pfn)
zf() {
	awk -v z="$1" -v f="$2" '$1 == "Node" && $3 == "zone" { c = $4; next }
		c == z && ($1 == f || $1 == f ":") { print $2; exit }' /proc/zoneinfo
}
zend() { echo $(($(zf "$1" start_pfn) + $(zf "$1" spanned))); }
eq() { [ "$1" = "$2" ] || { echo "# got '$1', want '$2'"; return 1; }; }
logged() { dmesg | grep -qF -- "$1" || { echo "# not in dmesg: $1"; return 1; }; }

echo "KTAP version 1"
echo "1..5"
check "dma32=8G on the command line" grep -q "dma32=8G" /proc/cmdline
check "rejection logged" logged "dma32=8G: above 4G"
check "early option reported malformed" logged "Malformed early option 'dma32'"
check "default layout kept: DMA32 ends at 4G, Normal starts at 4G" \
	eq "$(zend DMA32)/$(zf Normal start_pfn)" 1048576/1048576
check "boot log states the default layout" logged "(default)"
exit 0
