#!/bin/sh
# kernel-patches: swiotlb accounting in /sys/kernel/debug/swiotlb/.
# Files exist, reset only by writing 0, stay at 0 when nothing bounces, and
# rise by exactly what the dma32demo driver reports when streaming bounces.
# The device's default dma-bits=32 makes ordinary (mostly >4 GiB) pages of
# the 6 GiB guest bounce with --strategy streaming.
# run-guest: --mem 6G
# shellcheck disable=SC2317 # helpers are called through ktap_test_result
# shellcheck source=kernel-patches/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"
C="io_tlb_bounced io_tlb_bounced_bytes_map io_tlb_bounced_bytes_sync io_tlb_full io_tlb_too_big io_tlb_align_fail io_tlb_used_hiwater io_tlb_coherent_allocs io_tlb_coherent_full"
# The gauges of coherent buffers held in the pool (read-only; 0 without
# dma_coherent_model=2.6.14 or a restricted pool)
G="io_tlb_coherent_held io_tlb_coherent_bytes"
# jsum KEY FILE: sum of the numeric KEY over all JSON objects in FILE
jsum() {
	awk -v k="\"$1\"" '{
		s = $0
		while ((i = index(s, k)) > 0) {
			s = substr(s, i + length(k))
			sub(/^[ \t]*:[ \t]*/, "", s)
			if (match(s, /^[0-9]+/))
				t += substr(s, 1, RLENGTH)
		}
	} END { print t + 0 }' "$2"
}
allok() { ! grep -q '"ok"[ ]*:[ ]*false' "$1" && grep -q '"ok"[ ]*:[ ]*true' "$1"; }
bounces() { allok "$1" && [ "$2" -gt 0 ]; }
reset_all() { for f in $C; do echo 0 > "$D/$f" || return 1; done; }
all_zero() {
	for f in $C $G; do
		[ "$(c "$f")" = 0 ] || { ktap_print_msg "$f = $(c "$f")"; return 1; }
	done
}
# run OUT ARGS...: one dma32ctl request, JSON to OUT
run() { o=$1; shift; dma32ctl run "$@" --json > "$o" 2>&1; ktap_print_lines <"$o"; }
mkdir -p "${TMPDIR:-/tmp}"
T=${TMPDIR:-/tmp}/kp-swiotlb.$$

missing=
for f in $C $G io_tlb_used io_tlb_nslabs; do [ -e "$D/$f" ] || missing="$missing $f"; done
ktap_test_result "counter files exist under swiotlb/" eq "$missing" ""
ktap_test_result "writing 0 resets every counter" reset_all
ktap_test_result "all counters read 0 after reset" all_zero
check_refused "writing 5 is refused" "$D/io_tlb_bounced" 5
check_refused "writing a word is refused" "$D/io_tlb_full" banana
ktap_test_result "high-water mark within the pool" test "$(c io_tlb_used_hiwater)" -le "$(c io_tlb_nslabs)"

if ! command -v dma32ctl >/dev/null 2>&1; then
	for d in "requests that bounce nothing succeed" \
		"counters stay at 0 when nothing bounces" \
		"streaming fill succeeds and bounces" \
		"io_tlb_bounced equals the driver's bounced count" \
		"io_tlb_bounced equals the driver's sysfs bounced_mappings delta" \
		"io_tlb_bounced_bytes_map equals the driver's bounced_bytes" \
		"fill copies the same bytes back at unmap (io_tlb_bounced_bytes_sync)" \
		"checksum: counters equal the driver's, nothing copied back" \
		"nothing left mapped, high-water mark rose" \
		"no mapping refused, for any cause"; do
		ktap_test_skip "$d" "dma32ctl not available"
	done
	ktap_finished
fi

reset_all
: > "$T.none"
for s in coherent streaming-dma32; do
	for op in fill checksum; do
		run "$T.one" --strategy "$s" --op "$op" --size 262144 --count 4 --verify
		cat "$T.one" >> "$T.none"
	done
done
ktap_test_result "requests that bounce nothing succeed" allok "$T.none"
ktap_test_result "counters stay at 0 when nothing bounces" \
	eq "$(jsum bounced "$T.none") $(all_zero && echo zero)" "0 zero"

reset_all
sysfs=
for f in /sys/bus/pci/drivers/dma32demo/*/bounced_mappings \
	/sys/bus/pci/drivers/dma32demo/*/*/bounced_mappings; do
	[ -e "$f" ] && { sysfs=$f; break; }
done
s0=$(cat "$sysfs" 2>/dev/null || echo none)
run "$T.fill" --strategy streaming --op fill --size 262144 --count 8 --verify
s1=$(cat "$sysfs" 2>/dev/null || echo none)
b=$(jsum bounced "$T.fill")
bb=$(jsum bounced_bytes "$T.fill")
ktap_test_result "streaming fill succeeds and bounces" bounces "$T.fill" "$b"
ktap_test_result "io_tlb_bounced equals the driver's bounced count" eq "$(c io_tlb_bounced)" "$b"
if [ "$s0" = none ]; then
	ktap_test_skip "io_tlb_bounced equals the driver's sysfs bounced_mappings delta" "no sysfs bounced_mappings found"
else
	ktap_test_result "io_tlb_bounced equals the driver's sysfs bounced_mappings delta" \
		eq "$(c io_tlb_bounced)" $((s1 - s0))
fi
ktap_test_result "io_tlb_bounced_bytes_map equals the driver's bounced_bytes" \
	eq "$(c io_tlb_bounced_bytes_map)" "$bb"
ktap_test_result "fill copies the same bytes back at unmap (io_tlb_bounced_bytes_sync)" \
	eq "$(c io_tlb_bounced_bytes_sync)" "$bb"

reset_all
run "$T.sum" --strategy streaming --op checksum --size 262144 --count 8 --verify
ktap_test_result "checksum: counters equal the driver's, nothing copied back" \
	eq "$(c io_tlb_bounced) $(c io_tlb_bounced_bytes_map) $(c io_tlb_bounced_bytes_sync)" \
	"$(jsum bounced "$T.sum") $(jsum bounced_bytes "$T.sum") 0"
ktap_test_result "nothing left mapped, high-water mark rose" \
	sh -c "[ $(c io_tlb_used) = 0 ] && [ $(c io_tlb_used_hiwater) -gt 0 ]"
ktap_test_result "no mapping refused, for any cause" \
	eq "$(c io_tlb_full) $(c io_tlb_too_big) $(c io_tlb_align_fail)" "0 0 0"
rm -f "$T".*
ktap_finished
