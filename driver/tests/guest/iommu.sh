#!/bin/sh
# run-guest: --qemu-args '-device intel-iommu,intremap=off' --append 'intel_iommu=on iommu.strict=0'
#
# dma32demo behind an IOMMU: DMA addresses are IOVAs the IOMMU places below
# the device's 32-bit limit, so every strategy works, nothing bounces, and
# even buffers whose pages are above 4 GiB reach the device. In lazy mode
# (iommu.strict=0: TLB invalidations batched in a flush queue), the
# default; iommu-strict.sh is the same in strict mode.
# shellcheck source=driver/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"

require_device
bdf=$(jget pci "$(dma32ctl info --json)")
[ -e "/sys/bus/pci/devices/$bdf/iommu_group" ]
ktap_test_status "the device is in an IOMMU group" $? "no /sys/bus/pci/devices/$bdf/iommu_group"
check_iommu_dma_mode "$bdf" lazy
dmesg -c >/dev/null

above=0
for strat in coherent streaming streaming-dma32 user; do
	for op in fill checksum copy; do
		j=$(dma32ctl run --strategy $strat --op $op --size 128K --count 2 --verify --json 2>&1)
		rc=$?
		[ $rc = 0 ] && [ "$(jget bounced "$j")" = 0 ] && [ "$(jget buffers_verified "$j")" = 2 ]
		ktap_test_status "$strat $op verified, 0 bounced" $? "rc=$rc $j"
		above=$((above + $(jget pages_above_4g "$j")))
	done
done
ktap_print_msg "$above buffer pages above 4 GiB reached through the IOMMU"
[ $above -gt 0 ]
ktap_test_status "pages above 4 GiB reached the 32-bit device without bouncing" $? "none above 4 GiB"
faults=$(iommu_faults)
[ -z "$faults" ]
ktap_test_status "the IOMMU logged no fault" $? "$(echo "$faults" | head -n 3 | tr '\n' ' ')"

# truncation-alias hands the device a physical address; behind a
# translating IOMMU that address would be an IOVA, not the window
rmmod dma32demo
dmesg -c >/dev/null
insmod /lib/modules/dma32demo.ko allow_unsafe=1 alias_window=0x110000000
j=$(dma32ctl run --strategy truncation-alias --op fill --size 4K --json 2>&1)
[ "$(jget errno "$j")" = EPERM ] && dmesg | grep -q 'truncation-alias refused: behind a translating IOMMU'
ktap_test_status "truncation-alias refused behind the IOMMU (EPERM, one log line)" $? \
	"$j; $(dmesg | grep dma32demo | tail -n 2 | tr '\n' ' ')"
rmmod dma32demo
insmod /lib/modules/dma32demo.ko

ktap_finished
