#!/bin/sh
# kernel-patches: a size that does not fit in 64 bits is rejected, not
# wrapped: 2^64 + 2 GiB would wrap to 2G in a plain memparse().
# run-guest: --mem 6G --append 'dma32=18446744075857035264'
# shellcheck source=kernel-patches/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"

check "dma32=2^64+2G on the command line" grep -q "dma32=18446744075857035264" /proc/cmdline
check "rejection logged" logged "dma32=18446744075857035264: above 4G"
check "default layout kept: DMA32 ends at 4G, Normal starts at 4G" \
	eq "$(zend DMA32)/$(zf Normal start_pfn)" 1048576/1048576
check "boot log states the default layout" logged "(default)"
ktap_finished
