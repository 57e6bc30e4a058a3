#!/bin/sh
# run-guest: --qemu-args '-device intel-iommu,intremap=off' --append 'intel_iommu=on iommu=pt'
#
# dma32demo behind an IOMMU in passthrough (iommu=pt): the device is in an
# IOMMU group, but its domain is the identity, so its DMA goes through
# dma-direct and swiotlb exactly as with no IOMMU. Ordinary pages above
# 4 GiB bounce, and the driver must count those bounces: for every
# strategy x op, its bounced mappings equal the growth of swiotlb's own
# io_tlb_bounced (kernel-patches/), streaming and user bounce at all, and
# coherent and streaming-dma32 never do.
# shellcheck source=driver/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"

require_device
bdf=$(jget pci "$(dma32ctl info --json)")
sysdir=/sys/bus/pci/devices/$bdf/stats
group=$(readlink -f "/sys/bus/pci/devices/$bdf/iommu_group")
type=$(cat "$group/type" 2>/dev/null)
[ -e "$group" ] && [ "$type" = identity ]
ktap_test_status "the device is in an IOMMU group with the identity domain" $? "group '$group' type '$type'"
dmesg | grep -q 'dma32demo.*IOMMU identity domain'
ktap_test_status "the driver says its DMA is direct behind the IOMMU" $? "$(dmesg | grep dma32demo | tail -n 2)"

tlb=/sys/kernel/debug/swiotlb/io_tlb_bounced
if [ ! -r $tlb ]; then
	ktap_test_pass "driver's bounce count == io_tlb_bounced # SKIP no $tlb"
	ktap_finished
fi
dma32ctl reset
sum=0 total0=$(cat $tlb)
for strat in coherent streaming streaming-dma32 user; do
	bounced=0
	for op in fill checksum copy; do
		t0=$(cat $tlb)
		j=$(dma32ctl run --strategy $strat --op $op --size 1M --count 4 --verify --json 2>&1)
		rc=$?
		t1=$(cat $tlb)
		b=$(jget bounced "$j")
		[ $rc = 0 ] && [ "$(jget buffers_verified "$j")" = 4 ] && [ "$b" = $((t1 - t0)) ]
		ktap_test_status "$strat $op verified, driver bounced $b == io_tlb_bounced +$((t1 - t0))" $? "rc=$rc $j"
		bounced=$((bounced + b))
	done
	sum=$((sum + bounced))
	case $strat in
	coherent | streaming-dma32)
		[ $bounced = 0 ]
		ktap_test_status "$strat: nothing bounced" $? "bounced=$bounced" ;;
	*)
		[ $bounced -gt 0 ]
		ktap_test_status "$strat: pages above 4 GiB bounced ($bounced mappings)" $? "bounced=0" ;;
	esac
done
total1=$(cat $tlb)
got=$(cat "$sysdir/bounced_mappings")
[ "$got" = "$sum" ] && [ $((total1 - total0)) = "$sum" ]
ktap_test_status "sysfs bounced_mappings $got == io_tlb_bounced +$((total1 - total0)) == sum $sum" $? \
	"sysfs $got, io_tlb_bounced $total0 -> $total1, sum $sum"

ktap_finished
