#!/bin/sh
# kernel-patches: dma32=2G ends ZONE_DMA32 at 2 GiB; 2G..4G is ZONE_NORMAL.
# On the 6 GiB q35 guest RAM below 4 GiB ends at 2 GiB, so the change shows
# in the zone spans (DMA32 end, Normal start), not in present pages.
# dma_coherent_model=2.6.14 on the same boot: with ZONE_DMA32 populated the
# model warns that 2.6.14 had no such zone.
# run-guest: --mem 6G --append 'dma32=2G dma_coherent_model=2.6.14'
# shellcheck source=kernel-patches/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"

ktap_test_result "DMA32 starts at 16M (pfn 4096)" eq "$(zf DMA32 start_pfn)" 4096
ktap_test_result "DMA32 ends at 2G (pfn 524288)" eq "$(zend DMA32)" 524288
ktap_test_result "Normal starts at 2G (pfn 524288)" eq "$(zf Normal start_pfn)" 524288
ktap_test_result "DMA32 has present pages" test "$(zf DMA32 present)" -gt 0
ktap_test_result "boot log states the layout" \
	logged "ZONE_DMA32: [mem 0x0000000001000000-0x000000007fffffff] (dma32=2G), 2031 MiB of RAM; [mem 0x0000000080000000-0x00000000ffffffff] is ZONE_NORMAL, 0 MiB of RAM"
ktap_test_result "the model warns: ZONE_DMA32 is populated" \
	logged_once "dma-direct: dma_coherent_model=2.6.14 with ZONE_DMA32 populated"
ktap_finished
