#!/bin/sh
# run-guest: --append 'dma32demo.force_coherent_bits=24'
#
# dma32demo: coherent allocations that run out. With a 24-bit coherent mask
# every coherent buffer must come from the 16 MiB ZONE_DMA (as under
# dma32=off with a 32-bit mask): 64 x 1 MiB cannot fit. The request must
# fail with ENOMEM, say how far it got, what it asked and what it held,
# release everything, and the next request must work.
# shellcheck source=driver/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"

require_device
sysdir=$(readlink -f /sys/class/misc/dma32demo0/device)/stats
info=$(dma32ctl info --json)
[ "$(jget coherent_mask_bits "$info")" = 24 ]
ktap_test_status "coherent mask narrowed to 24 bits" $? "$info"
ring=$(($(jget ring_entries "$info") * 64))

j=$(dma32ctl run --strategy coherent --op fill --size 1M --count 64 --verify --json 2>/tmp/err)
rc=$?
ktap_print_msg "$(cat /tmp/err)"
b=$(jget buffers "$j")
[ $rc = 1 ] && [ "$(jget errno "$j")" = ENOMEM ] && [ "$(jget coherent_asked "$j")" = 1048576 ] &&
	[ "$(jget coherent_held "$j")" = $((b * 1048576 + ring)) ] && [ "$b" -gt 0 ] && [ "$b" -lt 16 ] &&
	[ "$(jget alloc_failures "$j")" = 1 ]
ktap_test_status "coherent 1M x 64 in ZONE_DMA fails with ENOMEM after $b buffers" $? "rc=$rc $j"
dma=$(printf '%s\n' "$j" | sed -n 's/.*"zones":{"DMA":\([0-9]*\).*/\1/p')
[ "$dma" = $((b * 256)) ]
ktap_test_status "all $dma pages of those buffers are in ZONE_DMA" $? "$j"
grep -q "coherent allocation of 1048576 bytes failed" /tmp/err
ktap_test_status "dma32ctl says what it asked and what the driver held" $? "$(cat /tmp/err)"
held=$(cat "$sysdir/coherent_bytes_held")
[ "$held" = "$ring" ]
ktap_test_status "coherent_bytes_held is back to the ring ($ring bytes)" $? "held=$held"
[ "$(cat "$sysdir/alloc_failures")" = 1 ]
ktap_test_status "sysfs counts the allocation failure" $? "alloc_failures=$(cat "$sysdir/alloc_failures")"

j=$(dma32ctl run --strategy coherent --op copy --size 1M --count 2 --verify --json 2>&1)
ktap_test_status "the next coherent request works" $? "$j"
j=$(dma32ctl run --strategy coherent --op fill --size 1M --count 64 --verify --json 2>/dev/null)
[ "$(jget buffers "$j")" = "$b" ]
ktap_test_status "a second exhausting request gets exactly as far ($b buffers): nothing leaked" $? "$j"

ktap_finished
