#!/bin/sh
# kernel-patches: the GART's aperture accounting in /sys/kernel/debug/gart/
# on q35 with 6 GiB and a K8 northbridge, today's coherent allocator.
# The kernel's own GART driver takes a 32 MiB aperture (iommu=memaper=0) and turns swiotlb
# off; a 32-bit device's streaming pages above 4 GiB are mapped through
# the aperture (no copy). The counters rise by exactly the driver's pages
# above 4 GiB while a request holds its mappings, come back when it ends,
# count one refusal per mapping the full aperture refuses, and coherent
# buffers, which today's allocator takes from ZONE_DMA32, hold no
# aperture page.
# run-guest: --gart --gart-aperture 32 --mem 6G
# run-guest: --timeout 300
# shellcheck source=kernel-patches/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"

ktap_test_result "the kernel's GART driver is in use" logged "PCI-DMA: using GART IOMMU"
missing=
for f in $GART_FILES; do [ -e "$G/$f" ] || missing="$missing $f"; done
ktap_test_result "counter files exist under gart/" eq "$missing" ""
pages=$(g aperture_pages)
ktap_print_msg "aperture: $pages pages ($((pages / 256)) MiB)"
ktap_test_result "the remapping area has pages" test "$pages" -gt 0
ktap_test_result "writing 0 resets aperture_full and aperture_used_hiwater" \
	sh -c "echo 0 >$G/aperture_full && echo 0 >$G/aperture_used_hiwater"
ktap_test_result "after the reset: no refusal, high-water mark = pages in use" \
	eq "$(g aperture_full) $(g aperture_used_hiwater)" "0 $(g aperture_used)"
check_refused "writing 5 is refused" "$G/aperture_full" 5
check_refused "the gauges are read-only" "$G/aperture_used" 0

if ! command -v dma32ctl >/dev/null 2>&1; then
	for t in "streaming fill verified through the aperture" \
		"high-water mark rose by the driver's pages above 4 GiB" \
		"unmapped after the request" "held during a stalled request" \
		"given back after the stall" "refused when the aperture is full" \
		"one refusal per refused mapping" "given back after the refusal" \
		"a small request still works" "coherent memory holds no aperture page"; do
		ktap_test_skip "$t" "dma32ctl not available"
	done
	ktap_finished
fi

# A streaming request: its pages above 4 GiB are mapped through the
# aperture while it runs, and nothing bounces (there is no swiotlb)
u0=$(g aperture_used)
echo 0 >"$G/aperture_used_hiwater"
runj --strategy streaming --op fill --size 256K --count 8 --verify
p=$(jget pages_above_4g "$j")
ktap_test_result "streaming fill of 8 x 256 KiB verified, $p pages above 4 GiB, 0 bounced" \
	sh -c "[ '$(jget ok "$j")' = true ] && [ $p -gt 0 ] && [ '$(jget bounced "$j")' = 0 ]"
ktap_test_result "high-water mark rose by the driver's $p pages above 4 GiB" \
	eq "$(($(g aperture_used_hiwater) - u0))" "$p"
ktap_test_result "unmapped after the request: aperture_used back to $u0" eq "$(g aperture_used)" "$u0"

# Held while a stalled request waits for the device
stalled_request aperture_used --strategy streaming --op checksum --size 256K --count 16
used=$steady
wait $pid
ktap_print_lines </tmp/gart-stall.json
j=$(grep '^{' /tmp/gart-stall.json | tail -n 1)
p=$(jget pages_above_4g "$j")
ktap_test_result "held during a stalled request: aperture_used +$((used - u0)) = the driver's $p pages above 4 GiB" \
	sh -c "[ '$p' -gt 0 ] && [ $((used - u0)) = '$p' ]"
ktap_test_result "given back after the stall" eq "$(g aperture_used)" "$u0"
echo 5000 >/sys/module/dma32demo/parameters/timeout_ms

# More than the aperture holds: a mapping is refused, and counted once
f0=$(g aperture_full)
runj --strategy streaming --op fill --size 1M --count $((pages * 2 / 256))
mf=$(jget map_failures "$j")
ktap_test_result "refused when the aperture is full: ENOMEM, the driver saw $mf refused mapping(s)" \
	sh -c "[ '$(jget errno "$j")' = ENOMEM ] && [ '$mf' -ge 1 ]"
ktap_test_result "one refusal per refused mapping: aperture_full +$mf" \
	eq "$(($(g aperture_full) - f0))" "$mf"
ktap_test_result "the kernel said so" logged "PCI-DMA: Out of IOMMU space"
ktap_test_result "given back after the refusal" eq "$(g aperture_used)" "$u0"
runj --strategy streaming --op fill --size 1M --count 8 --verify
ktap_test_result "a small request still works" eq "$(jget ok "$j")" true

# Today's allocator: a 32-bit device's coherent memory is in ZONE_DMA32,
# which the device reaches: no aperture page
echo 0 >"$G/aperture_used_hiwater"
runj --strategy coherent --op fill --size 256K --count 16 --verify
ktap_test_result "coherent memory holds no aperture page (verified, none above 4 GiB, aperture_coherent 0, high-water mark unmoved)" \
	eq "$(jget ok "$j") $(jget pages_above_4g "$j") $(g aperture_coherent) $(g aperture_used_hiwater)" \
	"true 0 0 $u0"
ktap_finished
