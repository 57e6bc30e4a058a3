#!/bin/sh
# kernel-patches: dma32=2G ends ZONE_DMA32 at 2 GiB; 2G..4G is ZONE_NORMAL.
# On the 6 GiB q35 guest RAM below 4 GiB ends at 2 GiB, so the change shows
# in the zone spans (DMA32 end, Normal start), not in present pages.
# run-guest: --mem 6G --append 'dma32=2G'
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
check "DMA32 starts at 16M (pfn 4096)" eq "$(zf DMA32 start_pfn)" 4096
check "DMA32 ends at 2G (pfn 524288)" eq "$(zend DMA32)" 524288
check "Normal starts at 2G (pfn 524288)" eq "$(zf Normal start_pfn)" 524288
check "DMA32 has present pages" test "$(zf DMA32 present)" -gt 0
check "boot log states the layout" \
	logged "ZONE_DMA32: [mem 0x0000000001000000-0x000000007fffffff] (dma32=2048M)"
exit 0
