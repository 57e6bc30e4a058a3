#!/bin/sh
# run-guest: --mem 6G --devices 4 --device-props overflow=truncate
# run-guest: --append 'memmap=64K$0x110000000 memmap=64K$0x10000000 memmap=64K$0x1d0000000 dma32demo.alias_window=0x110000000 dma32demo.allow_unsafe=1'
#
# The alias windows belong to the module, not to one device: four
# truncating devices asking for truncation-alias at once must take turns.
# One global lock serializes the requests, and each request claims both
# windows with request_mem_region() while it uses them, so a request that
# overlapped another would fail with EBUSY, and one that wrote while
# another verified would show a verify error or changed canaries. And a
# window must be reserved RAM: one whose low alias is in the PCI hole
# (MMIO, not memory) is refused before anything is written.
# shellcheck source=driver/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"
check_cpus 2
ko=/lib/modules/dma32demo.ko
DEVS="0 1 2 3"
N=25

missing=
for d in $DEVS; do [ -c /dev/dma32demo"$d" ] || missing="$missing $d"; done
[ -z "$missing" ]
ktap_test_status "4 truncating devices bound as /dev/dma32demo0..3" $? "missing:$missing"

# Each device its own size, so the requests' windows differ: a request
# that ran inside another would see the other's data or canaries
dmesg -c >/dev/null
for d in $DEVS; do
	(
		size=$((4 << d))K
		i=0
		while [ $i -lt $N ]; do
			j=$(dma32ctl --device /dev/dma32demo"$d" run --strategy truncation-alias \
				--op fill --size $size --verify --json 2>&1)
			[ "$(jget ok "$j")" = true ] && [ "$(jget buffers_verified "$j")" = 1 ] &&
				[ "$(jget alias_canary_errors "$j")" = 0 ] ||
				echo "dev $d #$i: $j"
			i=$((i + 1))
		done
	) >/tmp/alias."$d" 2>&1 &
done
wait
bad=$(cat /tmp/alias.0 /tmp/alias.1 /tmp/alias.2 /tmp/alias.3)
[ -z "$bad" ]
ktap_test_status "4 devices x $N truncation-alias requests at once: all verified, 0 canary errors" $? "$bad"
! dmesg | grep -q 'in use by another device'
ktap_test_status "no request found the windows claimed by another (serialized)" $? \
	"$(dmesg | grep 'in use by another' | head -n 3 | tr '\n' ' ')"
n=$(dmesg | grep -c 'truncation-alias: .* landed at its low alias; 0 other bytes changed')
[ "$n" = $((4 * N)) ]
ktap_test_status "the driver logged $((4 * N)) requests landed at the low alias" $? "$n lines"
grep -q -e '10000000-1000ffff : Reserved' /proc/iomem &&
	! grep -q ': dma32demo[0-9]' /proc/iomem
ktap_test_status "the windows are released after the requests" $? "$(grep -e '^ *1*10000000' -e 'dma32demo[0-9]' /proc/iomem)"

# 0x1d0000000 is reserved RAM, its low alias 0xd0000000 is in the PCI
# hole: no memory there, the device's write would go to the bus
ktap_print_msg "PCI bus windows: $(grep 'PCI Bus 0000:00' /proc/iomem | tr '\n' ' ')"
rmmod dma32demo
dmesg -c >/dev/null
insmod $ko allow_unsafe=1 alias_window=0x1d0000000
j=$(dma32ctl run --strategy truncation-alias --op fill --size 4K --verify --json 2>&1)
[ "$(jget errno "$j")" = EPERM ] &&
	dmesg | grep -q 'truncation-alias: 0xd0000000 is not RAM in the firmware.s memory map (MMIO or a hole)'
ktap_test_status "a window whose alias is MMIO is refused (EPERM, one log line)" $? \
	"$j; $(dmesg | grep dma32demo | tail -n 2 | tr '\n' ' ')"
! grep -q ': dma32demo[0-9]' /proc/iomem
ktap_test_status "and nothing stays claimed" $? "$(grep 'dma32demo[0-9]' /proc/iomem)"

rmmod dma32demo
dmesg -c >/dev/null
insmod $ko alias_window=0x110000000
j=$(dma32ctl run --strategy truncation-alias --op fill --size 4K --json 2>&1)
[ "$(jget errno "$j")" = EPERM ] && dmesg | grep -q 'truncation-alias refused: it needs allow_unsafe=1'
ktap_test_status "without allow_unsafe=1 truncation-alias is refused (EPERM, one log line)" $? "$j"

check_reloaded_verifies
ktap_finished
