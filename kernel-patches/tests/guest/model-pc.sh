#!/bin/sh
# kernel-patches: dma_coherent_model=2.6.14 with dma32=off on a pc machine
# with 3 GiB, all of it below 4 GiB. As in 2.6.14, whose mem_init() set up
# swiotlb only with RAM above 4 GiB (6.1's pci_swiotlb_detect() does the
# same), there is no swiotlb pool, and a 32-bit device reaches every page:
# step (a) serves every coherent buffer, none comes from ZONE_DMA. Today's
# allocator with dma32=off takes every one of them from ZONE_DMA instead and
# fails after about 15 MiB (zone-off.sh, coherent-exhaust.sh).
# run-guest: --machine pc --mem 3G --append 'dma_coherent_model=2.6.14 dma32=off page_alloc.shuffle=1'
# shellcheck source=kernel-patches/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"

ktap_test_result "boot log says the model is in force" \
	logged "dma-direct: coherent memory as in 2.6.14: an ordinary page, else ZONE_DMA, else the swiotlb pool"
ktap_test_result "no RAM above 4 GiB: Normal ends below pfn 1048576" test "$(zend Normal)" -le 1048576
ktap_test_result "no swiotlb pool" test ! -e "$D/io_tlb_nslabs"
if ! command -v dma32ctl >/dev/null 2>&1; then
	ktap_test_skip "256 x 256 KiB (64 MiB) of 32-bit coherent memory, verified" "dma32ctl not available"
	ktap_test_skip "every buffer from step (a): no ZONE_DMA page, zone_dma_fallbacks unchanged" "dma32ctl not available"
	ktap_test_skip "1024 x 256 KiB (256 MiB) too" "dma32ctl not available"
	ktap_finished
fi
f0=$(fallbacks)
runj --strategy coherent --op fill --size 256K --count 256 --verify
ktap_test_result "256 x 256 KiB (64 MiB) of 32-bit coherent memory, verified" \
	sh -c "[ '$(jget ok "$j")' = true ] && [ '$(jget buffers_verified "$j")' = 256 ]"
ktap_test_result "every buffer from step (a): no ZONE_DMA page, zone_dma_fallbacks unchanged" \
	eq "$(jget DMA "$j") $(($(fallbacks) - f0))" "0 0"
runj --strategy coherent --op fill --size 256K --count 1024
ktap_test_result "1024 x 256 KiB (256 MiB) too, none from ZONE_DMA" \
	sh -c "[ '$(jget ok "$j")' = true ] && [ '$(jget DMA "$j")' = 0 ]"
ktap_finished
