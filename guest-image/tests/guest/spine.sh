#!/bin/sh
# shellcheck disable=SC2317 # the checks are called through ktap_test_result
# The spine, in the guest: zones, swiotlb, the device enumerated and bound,
# the module unloads cleanly. Default boot: q35, 6 GiB, our device.
# run-guest: --mem 6G

# shellcheck source=scripts/ktap_helpers.sh
. /tests/lib/ktap_helpers.sh

zone_present() { # zone_present ZONE: the zone has present pages
	awk -v z="$1" '$1 == "Node" && $4 == z { inz = 1; next }
		$1 == "Node" { inz = 0 }
		inz && $1 == "present" { found = 1; if ($2 > 0) ok = 1; print z, "present", $2 }
		END { exit !(found && ok) }' /proc/zoneinfo
}

swiotlb_active() {
	slabs=$(cat /sys/kernel/debug/swiotlb/io_tlb_nslabs)
	echo "io_tlb_nslabs=$slabs"
	[ "$slabs" -gt 0 ]
}

our_device() { # prints the sysfs path of the first dma32-demo function
	for d in /sys/bus/pci/devices/*; do
		if [ "$(cat "$d/vendor")" = 0x1af4 ] && [ "$(cat "$d/device")" = 0x10f3 ]; then
			echo "$d"
			return 0
		fi
	done
	echo "no 1af4:10f3 device in /sys/bus/pci/devices"
	return 1
}

bound_to_driver() {
	d=$(our_device) || return 1
	drv=$(basename "$(readlink "$d/driver")" 2>/dev/null)
	echo "bound to '$drv'"
	[ "$drv" = dma32demo ]
}

lspci_shows() { lspci -n | grep -q '1af4:10f3'; }

unload_clean() {
	rmmod dma32demo || return 1
	if grep -q '^dma32demo ' /proc/modules; then
		echo "still loaded"
		return 1
	fi
	d=$(our_device) || return 1
	[ ! -e "$d/driver" ] || { echo "still bound"; return 1; }
	# Loading again must work, too.
	insmod /lib/modules/dma32demo.ko && bound_to_driver
}

ktap_set_plan 8
ktap_test_result "zone DMA populated" zone_present DMA
ktap_test_result "zone DMA32 populated" zone_present DMA32
ktap_test_result "zone Normal populated" zone_present Normal
ktap_test_result "swiotlb active" swiotlb_active
ktap_test_result "dma32-demo device enumerated (1af4:10f3)" our_device
ktap_test_result "lspci shows the device" lspci_shows
ktap_test_result "module dma32demo bound to the device" bound_to_driver
ktap_test_result "module unloads and reloads cleanly" unload_clean
ktap_finished
