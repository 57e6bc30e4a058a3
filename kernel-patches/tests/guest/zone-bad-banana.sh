#!/bin/sh
# kernel-patches: dma32=banana is rejected with a boot message and the
# generic "Malformed early option"; default kept.
# run-guest: --mem 6G --append 'dma32=banana'
# shellcheck source=kernel-patches/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"

ktap_test_result "dma32=banana on the command line" grep -q "dma32=banana" /proc/cmdline
ktap_test_result "rejection logged once" logged_once "dma32=banana: neither"
ktap_test_result "the handler returns -EINVAL: the generic complaint follows, once" \
	logged_once "Malformed early option 'dma32'"
ktap_test_result "default layout kept: DMA32 ends at 4G, Normal starts at 4G" \
	eq "$(zend DMA32)/$(zf Normal start_pfn)" 1048576/1048576
ktap_test_result "boot log states the default layout" logged "(default)"
ktap_finished
