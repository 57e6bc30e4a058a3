#!/bin/sh
# run-guest: --device-props overflow=truncate
# run-guest: --append 'memmap=64K$0x110000000 memmap=64K$0x10000000 dma32demo.alias_window=0x110000000 dma32demo.allow_unsafe=1'
#
# What 2005 hardware with 32 address lines did with a higher address, shown
# without harm: it did not fault, it wrote at the address modulo 4 GiB. The
# two 64 KiB windows at 4.25 GiB and at its low alias 256 MiB are reserved
# at boot (memmap=), so no kernel data lives there. The driver fills both
# with canaries and hands the truncating device the high address: the data
# lands in the low window, the high window is untouched, and no other byte
# of either changes. A failed map of the windows (injected) fails the
# request cleanly and leaves them free. Everywhere else a truncating
# device is protected: unsafe-raw and the force-mask parameters are
# refused, even with allow_unsafe=1.
# shellcheck source=driver/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"
ko=/lib/modules/dma32demo.ko

info=$(dma32ctl info --json)
[ "$(jget overflow "$info")" = truncate ] && [ "$(jget alias_window "$info")" = 4563402752 ]
ktap_test_status "the device truncates; alias window at 0x110000000" $? "$info"
grep -q '^ *10000000-1000ffff : Reserved' /proc/iomem &&
	grep -q '^ *110000000-11000ffff : Reserved' /proc/iomem
ktap_test_status "both windows are reserved, not System RAM" $? "$(grep -i -e '^ *1*10000000' /proc/iomem)"

for size in 4K 16K 32K; do
	j=$(dma32ctl run --strategy truncation-alias --op fill --size $size --verify --json 2>&1)
	[ "$(jget ok "$j")" = true ] && [ "$(jget buffers_verified "$j")" = 1 ] &&
		[ "$(jget alias_canary_errors "$j")" = 0 ] && [ "$(jget device_faults "$j")" = 0 ] &&
		[ "$(jget mappings_above_4g "$j")" = 1 ]
	ktap_test_status "$size for 0x110000000+: landed at the low alias, high window and canaries untouched" $? "$j"
done
dmesg | grep -q 'truncation-alias: .* landed at its low alias; 0 other bytes changed'
ktap_test_status "the driver's log says where the data landed" $? "$(dmesg | grep truncation-alias | tail -n 2)"

# The window's address is hidden from callers without CAP_SYS_ADMIN
# (INFO): its module parameter is not readable by everyone either
mode=$(stat -c %a /sys/module/dma32demo/parameters/alias_window)
[ "$mode" = 400 ]
ktap_test_status "the alias_window parameter is readable by root only (0400)" $? "mode $mode"

# The second memremap() of the windows fails (injected): the request gets
# ENOMEM, counted as one failed allocation, and leaves neither window
# mapped or claimed; only with unsafe_fault_injection=1
sysdir=$(readlink -f /sys/class/misc/dma32demo0/device)/stats
params=/sys/module/dma32demo/parameters
echo 1 >$params/inject_alias_remap_failure
j=$(dma32ctl run --strategy truncation-alias --op fill --size 4K --verify --json 2>&1)
[ "$(jget ok "$j")" = true ]
ktap_test_status "the remap failure is not injected without unsafe_fault_injection=1" $? "$j"
echo 1 >$params/unsafe_fault_injection
dmesg -c >/dev/null
err0=$(cat "$sysdir/errors") af0=$(cat "$sysdir/alloc_failures")
j=$(dma32ctl run --strategy truncation-alias --op fill --size 4K --verify --json 2>&1)
rc=$?
echo 0 >$params/inject_alias_remap_failure
echo 0 >$params/unsafe_fault_injection
[ "$(jget errno "$j")" = ENOMEM ] && [ "$(jget alloc_failures "$j")" = 1 ] &&
	[ "$(jget buffers_verified "$j")" = 0 ]
ktap_test_status "the second memremap() fails: ENOMEM, one allocation failure" $? "rc=$rc $j"
[ $(($(cat "$sysdir/errors") - err0)) = 1 ] && [ $(($(cat "$sysdir/alloc_failures") - af0)) = 1 ]
ktap_test_status "sysfs counts one failed request and one allocation failure" $? \
	"errors +$(($(cat "$sysdir/errors") - err0)), alloc_failures +$(($(cat "$sysdir/alloc_failures") - af0))"
dmesg | grep -q 'truncation-alias: memremap() of the low window failed' &&
	! dmesg | grep -q 'other bytes changed in the windows'
ktap_test_status "one log line names the failed window; no canary check of a half-mapped pair" $? \
	"$(dmesg | grep truncation-alias | tail -n 2 | tr '\n' ' ')"
claimed=$(grep ': dma32demo[0-9]' /proc/iomem)
[ -z "$claimed" ]
ktap_test_status "neither window is left claimed in /proc/iomem" $? "$claimed"
j=$(dma32ctl run --strategy truncation-alias --op fill --size 16K --verify --json 2>&1)
[ "$(jget buffers_verified "$j")" = 1 ] && [ "$(jget alias_canary_errors "$j")" = 0 ]
ktap_test_status "then the same windows map again and the request verifies" $? "$j"

j=$(dma32ctl run --strategy truncation-alias --op checksum --size 4K --json 2>&1)
[ "$(jget errno "$j")" = EINVAL ]
ktap_test_status "truncation-alias is fill only (EINVAL)" $? "$j"

j=$(dma32ctl run --strategy unsafe-raw --op fill --size 64K --json 2>&1)
[ "$(jget errno "$j")" = EPERM ] && dmesg | grep -q 'unsafe-raw refused: this device truncates'
ktap_test_status "unsafe-raw refused on a truncating device even with allow_unsafe=1 (EPERM, one log line)" $? \
	"$j; $(dmesg | tail -n 2 | tr '\n' ' ')"

for p in force_mask_bits=64 force_coherent_bits=64; do
	rmmod dma32demo
	dmesg -c >/dev/null
	insmod $ko allow_unsafe=1 $p 2>/dev/null
	[ ! -e /dev/dma32demo0 ] && dmesg | grep -q 'wider than the device.s reach refused: it truncates'
	ktap_test_status "$p refused on a truncating device: not bound, one log line" $? \
		"$(ls /dev/dma32demo* 2>&1); $(dmesg | grep dma32demo | tail -n 2 | tr '\n' ' ')"
done

# A window that is ordinary RAM is refused: the device would write it
rmmod dma32demo 2>/dev/null
insmod $ko allow_unsafe=1 alias_window=0x120000000
j=$(dma32ctl run --strategy truncation-alias --op fill --size 4K --json 2>&1)
[ "$(jget errno "$j")" = EPERM ] && dmesg | grep -q 'is memory the kernel uses; boot with memmap='
ktap_test_status "a window in RAM the kernel uses is refused (EPERM, says how to reserve it)" $? "$j"

check_reloaded_verifies
ktap_finished
