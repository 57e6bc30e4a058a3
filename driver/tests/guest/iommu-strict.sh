#!/bin/sh
# run-guest: --qemu-args '-device intel-iommu,intremap=off' --append 'intel_iommu=on iommu.strict=1'
# run-guest: --mem 2G
#
# dma32demo behind the intel-iommu in strict mode (iommu.strict=1): every
# unmap invalidates the IOMMU's TLB at once, where lazy mode (iommu.sh,
# iommu.strict=0) batches the invalidations in a flush queue. A device
# still using a mapping the driver had already unmapped would fault here,
# not in lazy mode. Every strategy and op verifies, requests that reuse
# freed IOVAs verify, and the IOMMU logs no fault; then a request that
# hands the device an address the IOMMU does not map (unsafe-raw: a CPU
# physical address) shows that such a fault is logged and seen. 2 GiB of
# RAM, all below 4 GiB: those physical addresses are ones the 32-bit device
# can put on the bus, so the IOMMU, not the device, refuses them (iommu.sh
# has the pages above 4 GiB).
# shellcheck source=driver/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"

require_device
bdf=$(jget pci "$(dma32ctl info --json)")
check_iommu_dma_mode "$bdf" strict
dmesg -c >/dev/null

check_every_strategy_verifies "every strategy x op verified (128K x 4)" 128K 4
# The same IOVAs unmapped and mapped again, request after request.
bad=
i=0
while [ $i -lt 16 ]; do
	j=$(dma32ctl run --strategy streaming --op copy --size 64K --count 8 --verify --json 2>&1)
	[ "$(jget buffers_verified "$j")" = 8 ] && [ "$(jget bounced "$j")" = 0 ] || bad="$bad #$i: $j"
	i=$((i + 1))
done
[ -z "$bad" ]
ktap_test_status "16 streaming copies one after another verified, 0 bounced" $? "$bad"
faults=$(iommu_faults)
[ -z "$faults" ]
ktap_test_status "the IOMMU logged no fault" $? "$(echo "$faults" | head -n 3 | tr '\n' ' ')"

# The fault check sees a fault: unsafe-raw gives the device CPU physical
# addresses, which the IOMMU does not map.
rmmod dma32demo
insmod /lib/modules/dma32demo.ko allow_unsafe=1
j=$(dma32ctl run --strategy unsafe-raw --op fill --size 4K --count 8 --json 2>&1)
faults=$(iommu_faults)
[ "$(jget errno "$j")" = EIO ] && [ -n "$faults" ]
ktap_test_status "an address the IOMMU does not map: EIO, and the IOMMU logs the fault" $? \
	"$j; faults: $(echo "$faults" | head -n 2 | tr '\n' ' ')"
dmesg -c >/dev/null
check_reloaded_verifies

ktap_finished
