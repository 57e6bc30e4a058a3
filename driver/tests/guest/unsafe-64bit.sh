#!/bin/sh
# run-guest: --device-props 'dma-bits=64' --append 'dma32demo.allow_unsafe=1'
#
# dma32demo on a device that reaches all memory: unsafe-raw works (no
# IOMMU, so CPU physical == bus address) and verifies; streaming maps
# pages above 4 GiB directly, with no bounce.
# shellcheck source=driver/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"

require_device
info=$(dma32ctl info --json)
[ "$(jget dma_mask_bits "$info")" = 64 ]
ktap_test_status "64-bit device gets a 64-bit streaming mask" $? "$info"

for op in fill checksum copy; do
	j=$(dma32ctl run --strategy unsafe-raw --op $op --size 128K --count 2 --verify --json 2>&1)
	rc=$?
	[ $rc = 0 ] && [ "$(jget device_faults "$j")" = 0 ] && [ "$(jget buffers_verified "$j")" = 2 ]
	ktap_test_status "unsafe-raw $op verified ($(jget pages_above_4g "$j") pages above 4 GiB)" $? "rc=$rc $j"
done
for strat in streaming user; do
	j=$(dma32ctl run --strategy $strat --op copy --size 256K --count 2 --verify --json 2>&1)
	rc=$?
	[ $rc = 0 ] && [ "$(jget bounced "$j")" = 0 ] && [ "$(jget mappings_above_4g "$j")" -gt 0 ]
	ktap_test_status "$strat above 4 GiB: $(jget mappings_above_4g "$j") mappings, 0 bounced" $? "rc=$rc $j"
done

ktap_finished
