#!/bin/sh
# kernel-patches: dma32=8G is rejected with a boot message; default kept.
# run-guest: --mem 6G --append 'dma32=8G'
# shellcheck source=kernel-patches/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"

check "dma32=8G on the command line" grep -q "dma32=8G" /proc/cmdline
check "rejection logged once" logged_once "dma32=8G: above 4G"
check "no generic complaint repeats it" not_logged "Malformed early option"
check "default layout kept: DMA32 ends at 4G, Normal starts at 4G" \
	eq "$(zend DMA32)/$(zf Normal start_pfn)" 1048576/1048576
check "boot log states the default layout" logged "(default)"
ktap_finished
