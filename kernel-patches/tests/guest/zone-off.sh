#!/bin/sh
# kernel-patches: dma32=off leaves ZONE_DMA32 empty; Normal starts at 16M,
# 32-bit coherent memory comes from ZONE_DMA.
# run-guest: --mem 6G --append 'dma32=off'
# shellcheck source=kernel-patches/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"

ktap_test_result "dma32=off on the command line" grep -q "dma32=off" /proc/cmdline
ktap_test_result "DMA32 has 0 present pages" eq "$(zf DMA32 present)" 0
ktap_test_result "DMA32 spans 0 pages" eq "$(zf DMA32 spanned)" 0
ktap_test_result "Normal starts at 16M (start_pfn: 4096)" eq "$(zf Normal start_pfn)" 4096
ktap_test_result "DMA still populated" test "$(zf DMA present)" -gt 0
ktap_test_result "boot log states the layout" logged "ZONE_DMA32: empty (dma32=off)"
p=/sys/kernel/debug/dma_pools
if [ ! -d "$p" ]; then
	ktap_test_skip "no GFP_DMA32 atomic pool" "no CONFIG_DMA_COHERENT_POOL in this kernel"
else
	ktap_test_result "no GFP_DMA32 atomic pool" eq "$(cat "$p/pool_size_dma32")" 0
fi
f=/sys/kernel/debug/dma_direct/zone_dma_fallbacks
if ! command -v dma32ctl >/dev/null 2>&1; then
	ktap_test_skip "32-bit coherent request succeeds" "dma32ctl not available"
	ktap_test_skip "it was served from ZONE_DMA (zone_dma_fallbacks rose)" "dma32ctl not available"
else
	before=$(cat "$f")
	ktap_test_result "32-bit coherent request succeeds" \
		ctl run --strategy coherent --op fill --size 65536 --verify --json
	ktap_test_result "it was served from ZONE_DMA (zone_dma_fallbacks rose)" \
		test "$(cat "$f")" -gt "$before"
fi
ktap_finished
