#!/bin/sh
# kernel-patches: without dma32= the zone layout is today's (DMA32 16M..4G).
# Expects the default 6 GiB q35 guest (2 GiB below 4 GiB, 4 GiB above).
# run-guest: --mem 6G
# shellcheck source=kernel-patches/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"

ktap_test_result "no dma32= on the command line" sh -c '! grep -q "dma32=" /proc/cmdline'
ktap_test_result "DMA32 starts at 16M (pfn 4096)" eq "$(zf DMA32 start_pfn)" 4096
ktap_test_result "DMA32 ends at 4G (pfn 1048576)" eq "$(zend DMA32)" 1048576
ktap_test_result "DMA32 has present pages" test "$(zf DMA32 present)" -gt 0
ktap_test_result "Normal starts at 4G (pfn 1048576)" eq "$(zf Normal start_pfn)" 1048576
ktap_test_result "boot log states the default layout" \
	logged "ZONE_DMA32: [mem 0x0000000001000000-0x00000000ffffffff] (default)"
p=/sys/kernel/debug/dma_pools
if [ ! -d "$p" ]; then
	ktap_test_skip "GFP_DMA32 atomic pool created" "no CONFIG_DMA_COHERENT_POOL in this kernel"
else
	ktap_test_result "GFP_DMA32 atomic pool created" test "$(cat "$p/pool_size_dma32")" -gt 0
fi
f=/sys/kernel/debug/dma_direct/zone_dma_fallbacks
if [ ! -e "$f" ]; then
	ktap_test_fail "no coherent allocation fell back to ZONE_DMA" "$f missing"
else
	ktap_test_result "no coherent allocation fell back to ZONE_DMA" eq "$(cat "$f")" 0
fi
ktap_finished
