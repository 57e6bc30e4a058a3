#!/bin/sh
# kernel-patches: the last valid dma32= wins; a later invalid one is
# ignored and does not bring back the default.
# run-guest: --mem 6G --append 'dma32=1G dma32=2G dma32=banana'
# shellcheck source=kernel-patches/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"

ktap_test_result "rejection of the last one logged" logged "dma32=banana: neither"
ktap_test_result "DMA32 ends at 2G (pfn 524288)" eq "$(zend DMA32)" 524288
ktap_test_result "Normal starts at 2G (pfn 524288)" eq "$(zf Normal start_pfn)" 524288
ktap_test_result "boot log names the value in force" \
	logged "ZONE_DMA32: [mem 0x0000000001000000-0x000000007fffffff] (dma32=2G)"
ktap_finished
