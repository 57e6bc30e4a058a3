#!/bin/sh
# kernel-patches: swiotlb_stats=off turns the swiotlb counters off (the A/B
# switch of `make bench`): a streaming request still bounces, as the driver
# reports, but every counter stays at 0; io_tlb_used, which is not a
# counter, still works.
# run-guest: --mem 6G --append 'swiotlb_stats=off'
# shellcheck disable=SC2317 # helpers are called through ktap_test_result
# shellcheck source=kernel-patches/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"
C="io_tlb_bounced io_tlb_bounced_bytes_map io_tlb_bounced_bytes_sync io_tlb_full io_tlb_too_big io_tlb_align_fail io_tlb_used_hiwater io_tlb_coherent_allocs io_tlb_coherent_full io_tlb_coherent_held io_tlb_coherent_bytes"
all_zero() {
	for f in $C; do
		[ "$(c "$f")" = 0 ] || { ktap_print_msg "$f = $(c "$f")"; return 1; }
	done
}

ktap_test_result "swiotlb_stats=off is on the command line" grep -qw 'swiotlb_stats=off' /proc/cmdline
if ! command -v dma32ctl >/dev/null 2>&1; then
	ktap_test_skip "streaming fill succeeds and bounces" "dma32ctl not available"
	ktap_test_skip "every counter stays at 0" "dma32ctl not available"
	ktap_test_skip "nothing left mapped" "dma32ctl not available"
	ktap_finished
fi
mkdir -p "${TMPDIR:-/tmp}"
T=${TMPDIR:-/tmp}/kp-stats-off.$$
dma32ctl run --strategy streaming --op fill --size 262144 --count 8 --verify --json >"$T" 2>&1
r=$?
ktap_print_lines <"$T"
b=$(sed -n 's/.*"bounced"[ ]*:[ ]*\([0-9]*\).*/\1/p' "$T" | head -n 1)
ktap_test_result "streaming fill succeeds and bounces" test "$r" = 0 -a "${b:-0}" -gt 0
ktap_test_result "every counter stays at 0" all_zero
ktap_test_result "nothing left mapped" eq "$(c io_tlb_used)" 0
rm -f "$T"
ktap_finished
