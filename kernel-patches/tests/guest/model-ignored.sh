#!/bin/sh
# kernel-patches: dma_coherent_model= with a value other than 2.6.14 or
# default is ignored with a boot message (and the generic "Malformed early
# option") and today's allocator stays: with
# dma32=off a 32-bit coherent buffer comes from ZONE_DMA straight away and
# the swiotlb pool's coherent counters do not move.
# run-guest: --mem 6G --append 'dma_coherent_model=2.6.15 dma32=off'
# shellcheck source=kernel-patches/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"

ktap_test_result "the value is rejected in the boot log, once" \
	logged_once 'dma_coherent_model=2.6.15: neither "2.6.14" nor "default", ignored'
ktap_test_result "the handler returns -EINVAL: the generic complaint follows, once" \
	logged_once "Malformed early option 'dma_coherent_model'"
ktap_test_result "the model is not in force: no line saying so in the boot log nor in dmesg" \
	not_logged "coherent memory as in 2.6.14"
if ! command -v dma32ctl >/dev/null 2>&1; then
	ktap_test_skip "16 x 256 KiB of 32-bit coherent memory, verified" "dma32ctl not available"
	ktap_test_skip "all of it from ZONE_DMA, zone_dma_fallbacks +16" "dma32ctl not available"
	ktap_test_skip "the pool's coherent counters stay at 0" "dma32ctl not available"
	ktap_finished
fi
f0=$(fallbacks)
runj --strategy coherent --op fill --size 256K --count 16 --verify
ktap_test_result "16 x 256 KiB of 32-bit coherent memory, verified" \
	sh -c "[ '$(jget ok "$j")' = true ] && [ '$(jget buffers_verified "$j")' = 16 ]"
ktap_test_result "all of it from ZONE_DMA, zone_dma_fallbacks +16" \
	eq "$(jget DMA "$j") $(($(fallbacks) - f0))" "1024 16"
ktap_test_result "the pool's coherent counters stay at 0 (held, bytes, allocs, full)" \
	eq "$(c io_tlb_coherent_held) $(c io_tlb_coherent_bytes) $(c io_tlb_coherent_allocs) $(c io_tlb_coherent_full)" "0 0 0 0"
ktap_finished
