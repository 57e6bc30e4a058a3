#!/bin/sh
# run-guest: --mem 6G --numa 3G,3G --device-node 1 --swap 4096
#
# dma32demo on a two-node NUMA machine (q35, 6 GiB: node 0 holds the
# 2 GiB below 4 GiB and 4 to 5 GiB, node 1 5 to 8 GiB), the device behind
# an expander bridge on node 1. Every node gets its own zones, sized from
# its own page range as the ZONE_DMA32 patch's size_zones() did for
# setup_node_zones() (arch/x86_64/mm/numa.c, "[PATCH] x86_64: Add 4GB DMA32
# zone", Andi Kleen, 2005): node 0 straddles 4 GiB and has ZONE_DMA,
# ZONE_DMA32 and ZONE_NORMAL, node 1 lies above 4 GiB and has neither
# ZONE_DMA nor ZONE_DMA32. A 32-bit device on node 1 asks its node for
# ZONE_DMA32 memory (dma_alloc_coherent(), and the driver's
# alloc_pages_node(dev_to_node())): node 1's zonelist falls back to node
# 0's ZONE_DMA32, not to a ZONE_DMA, and the kernel's per-node counters
# show the pages as allocated on another node than the asking CPU's.
# (The swap disk is reclaim-swap's, which shares this boot.)
# shellcheck source=driver/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"

ktap_set_plan 11
require_device
dev=$(readlink -f /sys/class/misc/dma32demo0/device)

online=$(cat /sys/devices/system/node/online)
[ "$online" = 0-1 ]
ktap_test_status "two NUMA nodes online" $? "online: $online"

# zone NODE NAME FIELD: FIELD (start_pfn, spanned, present) of a node's zone
zone() {
	awk -v node="$1" -v zone="$2" -v field="$3" '
		/^Node/ { on = ($2 == node "," && $4 == zone) }
		on && $1 == field ":" { print $2; exit }
		on && $1 == field && $1 != "pages" { print $2; exit }' /proc/zoneinfo
}
# The node's memory as the kernel took it from the firmware and SRAT:
# free_area_init()'s "Early memory node ranges", one line per range:
# "  node   0: [mem 0x0000000000001000-0x000000000009efff]"
ranges() {
	sed -n "s/.* node *$1: \[mem \(0x[0-9a-f]*\)-\(0x[0-9a-f]*\)\]$/\1 \2/p" /tmp/boot.dmesg
}
# seed_zones NODE: "DMA DMA32 NORMAL" spans and presents of the node's
# zones as size_zones(z, h, start_pfn, end_pfn) computes them: each zone
# ends at its limit (16 MiB, 4 GiB) or the node's end, starts where the
# one below ended; present pages are the span less the holes between the
# node's ranges in that span.
seed_zones() {
	node=$1
	# shellcheck disable=SC2046 # one word per page frame number
	set -- $(ranges "$node" | while read -r lo hi; do echo "$((lo >> 12)) $(((hi + 1) >> 12))"; done)
	[ $# -ge 2 ] || return 1
	start=$1 end=
	for pfn; do end=$pfn; done
	lim_dma=4096 lim_dma32=1048576
	z_dma=0 z_dma32=0
	[ "$start" -lt $lim_dma ] && z_dma=$((lim_dma - start))
	if [ "$start" -lt $lim_dma32 ]; then
		top=$lim_dma32
		[ "$top" -gt "$end" ] && top=$end
		z_dma32=$((top - start))
	fi
	z_normal=$((end - start))
	# Remove lower zones from higher ones
	w=0 out=
	for z in $z_dma $z_dma32 $z_normal; do
		[ "$z" -gt 0 ] && z=$((z - w))
		w=$((w + z))
		out="$out $z"
	done
	# present: the pages of the node's ranges inside each zone's span
	lo=$start pres=
	for z in $out; do
		hi=$((lo + z)) p=0
		for pair in $(ranges "$node" | while read -r a b; do echo "$((a >> 12)):$(((b + 1) >> 12))"; done); do
			a=${pair%:*} b=${pair#*:}
			[ "$a" -lt "$lo" ] && a=$lo
			[ "$b" -gt "$hi" ] && b=$hi
			[ "$b" -gt "$a" ] && p=$((p + b - a))
		done
		pres="$pres $p"
		lo=$hi
	done
	echo "spanned$out present$pres"
}
for node in 0 1; do
	want=$(seed_zones $node)
	got="spanned"
	for z in DMA DMA32 Normal; do got="$got $(zone $node $z spanned)"; done
	got="$got present"
	for z in DMA DMA32 Normal; do got="$got $(zone $node $z present)"; done
	[ -n "$want" ] && [ "$got" = "$want" ]
	ktap_test_status "node $node's zones (DMA DMA32 Normal) are what size_zones() computes from its range" $? \
		"zoneinfo: $got; size_zones(): ${want:-no node ranges in the boot log}"
done
[ "$(zone 0 DMA32 present)" -gt 0 ] && [ "$(zone 0 Normal present)" -gt 0 ] && [ "$(zone 0 DMA present)" -gt 0 ]
ktap_test_status "node 0 straddles 4 GiB: ZONE_DMA, ZONE_DMA32 and ZONE_NORMAL populated" $? \
	"present: DMA $(zone 0 DMA present), DMA32 $(zone 0 DMA32 present), Normal $(zone 0 Normal present)"
[ "$(zone 1 DMA present)" = 0 ] && [ "$(zone 1 DMA32 present)" = 0 ] && [ "$(zone 1 Normal present)" -gt 0 ]
ktap_test_status "node 1 lies above 4 GiB: no ZONE_DMA, no ZONE_DMA32" $? \
	"present: DMA $(zone 1 DMA present), DMA32 $(zone 1 DMA32 present), Normal $(zone 1 Normal present)"

node=$(cat "$dev/numa_node")
[ "$node" = 1 ]
ktap_test_status "the device is on node 1 (its expander bridge's _PXM)" $? "numa_node: $node"

# numastat NODE FIELD
numastat() { awk -v f="$2" '$1 == f { print $2 }' "/sys/devices/system/node/node$1/numastat"; }
# fallback_request DESCRIPTION STRATEGY SIZE COUNT ALLOCATIONS: the request,
# run on CPU 1 (node 1), gets every page from ZONE_DMA32, which only node 0
# has, and none from ZONE_DMA; node 0 counts at least ALLOCATIONS page
# allocations for another node's CPU (other_node).
fallback_request() {
	other=$(numastat 0 other_node)
	j=$(taskset -c 1 dma32ctl run --strategy "$2" --op fill --size "$3" --count "$4" --verify --json 2>&1)
	rc=$?
	other=$(($(numastat 0 other_node) - other))
	pages=$(jget pages "$j")
	dma32=$(printf '%s\n' "$j" | grep -o '"DMA32":[0-9]*' | head -n 1 | cut -d: -f2)
	dma=$(printf '%s\n' "$j" | grep -o '"DMA":[0-9]*' | head -n 1 | cut -d: -f2)
	[ $rc = 0 ] && [ "$(jget buffers_verified "$j")" = "$4" ] && [ -n "$pages" ] && [ "$pages" -gt 0 ] &&
		[ "${dma32:-0}" = "$pages" ] && [ "${dma:-0}" = 0 ]
	ktap_test_status "$1: all ${pages:-?} pages from node 0's ZONE_DMA32, none from ZONE_DMA" $? \
		"rc=$rc DMA32=$dma32 DMA=$dma $j"
	[ "$other" -ge "$5" ]
	ktap_test_status "$1: node 0 counts them as other_node allocations (+$other, at least $5)" $? \
		"other_node +$other; node 0: $(tr '\n' ' ' </sys/devices/system/node/node0/numastat)"
}
fallback_request "coherent 1M x 16" coherent 1M 16 16
fallback_request "streaming-dma32 1M x 8" streaming-dma32 1M 8 2048

# Nothing above node 1's reach changed: a 64-bit streaming request still
# gets ordinary pages from the device's own node (above 4 GiB, bounced).
j=$(taskset -c 1 dma32ctl run --strategy streaming --op fill --size 1M --count 4 --verify --json 2>&1)
normal=$(printf '%s\n' "$j" | grep -o '"Normal":[0-9]*' | head -n 1 | cut -d: -f2)
[ "$(jget buffers_verified "$j")" = 4 ] && [ "${normal:-0}" = 1024 ]
ktap_test_status "streaming 1M x 4 (GFP_KERNEL): ZONE_NORMAL pages, verified" $? "$j"
ktap_finished
