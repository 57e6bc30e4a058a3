#!/bin/sh
# kernel-patches: without dma32= the zone layout is today's (DMA32 16M..4G).
# Expects the default 6 GiB q35 guest (2 GiB below 4 GiB, 4 GiB above).
# run-guest: --mem 6G
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
echo "1..8"
check "no dma32= on the command line" sh -c '! grep -q "dma32=" /proc/cmdline'
check "DMA32 starts at 16M (pfn 4096)" eq "$(zf DMA32 start_pfn)" 4096
check "DMA32 ends at 4G (pfn 1048576)" eq "$(zend DMA32)" 1048576
check "DMA32 has present pages" test "$(zf DMA32 present)" -gt 0
check "Normal starts at 4G (pfn 1048576)" eq "$(zf Normal start_pfn)" 1048576
check "boot log states the default layout" \
	logged "ZONE_DMA32: [mem 0x0000000001000000-0x00000000ffffffff] (default)"
p=/sys/kernel/debug/dma_pools
if [ ! -d "$p" ]; then
	skip "GFP_DMA32 atomic pool created" "no CONFIG_DMA_COHERENT_POOL in this kernel"
else
	check "GFP_DMA32 atomic pool created" test "$(cat "$p/pool_size_dma32")" -gt 0
fi
f=/sys/kernel/debug/dma_direct/zone_dma_fallbacks
if [ ! -e "$f" ]; then
	nok "no coherent allocation fell back to ZONE_DMA" "$f missing"
else
	check "no coherent allocation fell back to ZONE_DMA" eq "$(cat "$f")" 0
fi
exit 0
