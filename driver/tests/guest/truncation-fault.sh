#!/bin/sh
# run-guest: --append 'memmap=64K$0x110000000 memmap=64K$0x10000000 dma32demo.alias_window=0x110000000 dma32demo.allow_unsafe=1'
#
# The same windows as truncation-alias.sh, on the default device, which
# faults on an address beyond its reach instead of truncating it: the
# request fails with a device fault naming the address, and neither window
# changes by a byte. This is the behaviour the DMA API relies on never
# needing: it keeps such addresses away from the device in the first place.
# shellcheck source=driver/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"

info=$(dma32ctl info --json)
[ "$(jget overflow "$info")" = fault ]
ktap_test_status "the device faults beyond its reach" $? "$info"
j=$(dma32ctl run --strategy truncation-alias --op fill --size 16K --verify --json 2>&1)
[ "$(jget ok "$j")" = false ] && [ "$(jget device_faults "$j")" = 1 ] &&
	[ "$(jget alias_canary_errors "$j")" = 0 ] && [ "$(jget buffers_verified "$j")" = 0 ]
ktap_test_status "16K for 0x110000000+: a device fault, no byte of either window changed" $? "$j"
fault=$(jget fault_addr "$j")
[ "$fault" -ge 4563402752 ] && [ "$fault" -lt 4563468288 ]
ktap_test_status "the fault names the high address ($fault)" $? "$j"
dmesg | grep -q 'truncation-alias: .* were refused by the device; 0 other bytes changed'
ktap_test_status "the driver's log says the device refused them" $? "$(dmesg | grep truncation-alias | tail -n 2)"
j=$(dma32ctl run --strategy coherent --op fill --size 64K --verify --json 2>&1)
[ "$(jget buffers_verified "$j")" = 1 ]
ktap_test_status "afterwards ordinary requests verify" $? "$j"
ktap_finished
