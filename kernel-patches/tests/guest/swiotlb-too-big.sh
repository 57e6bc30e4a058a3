#!/bin/sh
# kernel-patches: a streaming mapping larger than a swiotlb segment
# (IO_TLB_SEGSIZE slots, 256 KiB), which no pool can ever take, is refused
# and counted in io_tlb_too_big, not in io_tlb_full nor io_tlb_align_fail.
# The driver never maps more than a segment, so the kernel's
# dma_map_benchmark maps instead, with a 32-bit mask: its buffers come
# from ZONE_NORMAL, above 4 GiB on this machine, and bounce. 256 KiB (64
# pages) fits a segment; 512 KiB (128 pages) does not, and swiotlb warns
# about each refusal ("swiotlb buffer is full"), which this boot expects.
# Afterwards the device goes back to the dma32demo driver.
# run-guest: --mem 6G --allow-log 'swiotlb buffer is full \(sz: 524288 bytes\)'
# shellcheck source=kernel-patches/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"

if ! command -v dma_map_benchmark >/dev/null 2>&1 ||
	! command -v demo-bench >/dev/null 2>&1; then
	for t in "bound to dma_map_benchmark" "a segment's worth maps" \
		"more than a segment: io_tlb_too_big" "back to dma32demo"; do
		ktap_test_skip "$t" "dma_map_benchmark or demo-bench not available"
	done
	ktap_finished
fi
counts() { echo "$(c io_tlb_too_big) $(c io_tlb_full) $(c io_tlb_align_fail)"; }
b=$(bdf)
out=$(demo-bench bind)
ktap_print_msg "$out"
ktap_test_result "the device is bound to dma_map_benchmark" \
	sh -c "printf '%s' '$out' | grep -q '\"ok\":true'"

# 64 pages: one segment exactly, which a pool takes
r0=$(counts) bounced=$(c io_tlb_bounced)
dma_map_benchmark -t 1 -s 1 -b 32 -g 64 2>&1 | ktap_print_lines
ktap_test_result "a segment's worth (256 KiB) maps and bounces, no refusal counted" \
	sh -c "[ \"$(counts)\" = '$r0' ] && [ $(c io_tlb_bounced) -gt $bounced ]"

# 128 pages: more than a segment, refused every time
big0=$(c io_tlb_too_big) full0=$(c io_tlb_full) align0=$(c io_tlb_align_fail)
dma_map_benchmark -t 1 -s 1 -b 32 -g 128 2>&1 | ktap_print_lines
ktap_print_msg "io_tlb_too_big +$(($(c io_tlb_too_big) - big0)), io_tlb_full +$(($(c io_tlb_full) - full0)), io_tlb_align_fail +$(($(c io_tlb_align_fail) - align0))"
ktap_test_result "more than a segment (512 KiB): io_tlb_too_big rises, io_tlb_full and io_tlb_align_fail do not" \
	sh -c "[ $(c io_tlb_too_big) -gt $big0 ] && [ $(c io_tlb_full) = $full0 ] && [ $(c io_tlb_align_fail) = $align0 ]"

# back to dma32demo, for the suites that share this boot
P=/sys/bus/pci
echo "$b" >"$P/devices/$b/driver/unbind"
echo >"$P/devices/$b/driver_override"
echo "$b" >"$P/drivers_probe"
ktap_test_result "the device is back with dma32demo" \
	eq "$(basename "$(readlink -f "$P/devices/$b/driver")")" dma32demo
ktap_finished
