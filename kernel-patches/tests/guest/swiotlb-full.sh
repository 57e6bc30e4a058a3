#!/bin/sh
# kernel-patches: with a tiny swiotlb pool (swiotlb=128: 128 slabs of 2 KiB,
# the minimum, one segment) a streaming request larger than the pool fails
# and io_tlb_full counts the refused mappings; nothing stays mapped.
# run-guest: --mem 6G --append 'swiotlb=128'
# shellcheck disable=SC2317 # helpers are called through check()
n=0
ok() { n=$((n + 1)); echo "ok $n $1"; }
nok() { n=$((n + 1)); echo "not ok $n $1 # $2"; }
skip() { n=$((n + 1)); echo "ok $n $1 # SKIP $2"; }
check() { d=$1; shift; if "$@"; then ok "$d"; else nok "$d" "failed: $*"; fi; }
eq() { [ "$1" = "$2" ] || { echo "# got '$1', want '$2'"; return 1; }; }
D=/sys/kernel/debug/swiotlb
c() { cat "$D/$1"; }

# ctl ARGS...: dma32ctl with its output turned into KTAP diagnostics
ctl() {
	mkdir -p "${TMPDIR:-/tmp}"
	o=${TMPDIR:-/tmp}/kp-ctl.$$
	dma32ctl "$@" > "$o" 2>&1
	r=$?
	sed 's/^/# /' "$o"
	rm -f "$o"
	return "$r"
}

echo "KTAP version 1"
echo "1..5"
check "pool is 128 slabs" eq "$(c io_tlb_nslabs)" 128
check "io_tlb_full starts at 0" eq "$(c io_tlb_full)" 0
if ! command -v dma32ctl >/dev/null 2>&1; then
	skip "oversized streaming request fails and io_tlb_full rises" "dma32ctl not available"
	skip "nothing left mapped, high-water mark within the pool" "dma32ctl not available"
	skip "a request that fits still works" "dma32ctl not available"
	exit 0
fi
full=0
for size in 1048576 2097152 4194304 8388608; do
	ctl run --strategy streaming --op fill --size $size --json
	full=$(c io_tlb_full)
	[ "$full" -gt 0 ] && break
done
check "oversized streaming request fails and io_tlb_full rises" test "$full" -gt 0
check "nothing left mapped, high-water mark within the pool" \
	sh -c "[ $(c io_tlb_used) = 0 ] && [ $(c io_tlb_used_hiwater) -le 128 ]"
check "a request that fits still works" \
	ctl run --strategy streaming --op fill --size 4096 --verify --json
exit 0
