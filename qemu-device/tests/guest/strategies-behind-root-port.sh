#!/bin/sh
# The driver's strategy suite (driver/tests/guest/strategies.sh: every
# strategy x op with verified data, the bounces, unsafe-raw faulting above
# 4 GiB, the sysfs counters, two processes at once) with the device behind
# a pcie-root-port, on bus 1: its DMA and MSIs go upstream through the
# port, as on a PCIe machine's slot.
# run-guest: --append 'dma32demo.allow_unsafe=1'
# run-guest: --qemu-args '-device pcie-root-port,id=rp,chassis=1' --device-props 'bus=rp'
dev=/sys/bus/pci/devices/0000:01:00.0
id="$(cat $dev/vendor 2>/dev/null):$(cat $dev/device 2>/dev/null)"
if [ "$id" != 0x1af4:0x10f3 ]; then
	# shellcheck source=scripts/ktap_helpers.sh
	. /tests/lib/ktap_helpers.sh
	ktap_test_fail "the device sits behind the root port at 0000:01:00.0" "found '$id'; $(lspci -n)"
	ktap_finished
fi
port=$(basename "$(dirname "$(readlink -f $dev)")")
echo "# dma32-demo at 0000:01:00.0, behind the root port $port"
exec sh /tests/driver/strategies.sh
