#!/bin/sh
# kernel-patches: dma32=17M rounds down to 16M, the end of ZONE_DMA: an
# empty zone, logged as what was asked, not as dma32=off.
# run-guest: --mem 6G --append 'dma32=17M'
# shellcheck source=kernel-patches/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"

ktap_test_result "rounding logged" logged "dma32=17M: rounded down to 16M"
ktap_test_result "DMA32 spans 0 pages" eq "$(zf DMA32 spanned)" 0
ktap_test_result "Normal starts at 16M (start_pfn: 4096)" eq "$(zf Normal start_pfn)" 4096
ktap_test_result "boot log states the layout" logged "ZONE_DMA32: empty (dma32=17M)"
ktap_finished
