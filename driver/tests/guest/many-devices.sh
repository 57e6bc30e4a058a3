#!/bin/sh
# run-guest: --devices 4 --append 'dma32demo.ctrl_buffers=8 dma32demo.ctrl_buffer_kb=128'
#
# Four dma32demo functions, each holding its ring and 8 coherent control
# buffers of 128 KiB for as long as it is bound (as a NIC holds its rings),
# all running at once on two vCPUs. Today's kernel takes that coherent
# memory from ZONE_DMA32, never from the swiotlb pool, and streaming-dma32
# never bounces. Unbinding one device gives its coherent memory back and
# leaves the others working.
# shellcheck source=driver/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"
check_cpus 2
DEVS="0 1 2 3"
# ring 256 x 64 bytes = 16 KiB (a 4-page block) + 8 x 128 KiB
HELD=$((16384 + 8 * 131072))

missing=
for d in $DEVS; do [ -c /dev/dma32demo"$d" ] || missing="$missing $d"; done
[ -z "$missing" ]
ktap_test_status "4 devices bound as /dev/dma32demo0..3" $? "missing:$missing"

bad=
for d in $DEVS; do
	info=$(dma32ctl --device /dev/dma32demo"$d" info --json)
	sys=$(readlink -f /sys/class/misc/dma32demo"$d"/device)/stats
	[ "$(jget ctrl_buffers "$info")" = 8 ] && [ "$(jget ctrl_buffer_bytes "$info")" = 131072 ] &&
		[ "$(cat "$sys/coherent_bytes_held")" = $HELD ] &&
		[ "$(cat "$sys/coherent_swiotlb_bytes")" = 0 ] || bad="$bad $d: $info held=$(cat "$sys/coherent_bytes_held")"
done
[ -z "$bad" ]
ktap_test_status "each holds its ring and 8 x 128 KiB control buffers ($HELD bytes), none in the swiotlb pool" $? "$bad"

b0=$(cat /sys/kernel/debug/swiotlb/io_tlb_bounced)
for d in $DEVS; do
	dma32ctl --device /dev/dma32demo"$d" run --strategy streaming-dma32 --op copy --size 256K \
		--count 8 --verify --json >"/tmp/run$d.json" 2>&1 &
done
wait
b1=$(cat /sys/kernel/debug/swiotlb/io_tlb_bounced)
bad=
for d in $DEVS; do
	j=$(cat "/tmp/run$d.json")
	[ "$(jget buffers_verified "$j")" = 8 ] && [ "$(jget bounced "$j")" = 0 ] &&
		[ "$(jget device "$j")" = /dev/dma32demo"$d" ] &&
		[ "$(jget coherent_swiotlb_bytes "$j")" = 0 ] || bad="$bad $d: $j"
done
[ -z "$bad" ] && [ "$b1" = "$b0" ]
ktap_test_status "all 4 at once: streaming-dma32 copies verify, 0 bounced (io_tlb_bounced $b0 -> $b1)" $? "$bad"

bdf=$(basename "$(readlink -f /sys/class/misc/dma32demo1/device)")
echo "$bdf" >/sys/bus/pci/drivers/dma32demo/unbind
[ ! -e /dev/dma32demo1 ]
ktap_test_status "unbind device 1: /dev/dma32demo1 gone" $? "still there"
bad=
for d in 0 2 3; do
	j=$(dma32ctl --device /dev/dma32demo"$d" run --strategy coherent --op fill --size 64K --count 2 \
		--verify --json 2>&1)
	[ "$(jget buffers_verified "$j")" = 2 ] || bad="$bad $d: $j"
done
[ -z "$bad" ]
ktap_test_status "the other three still verify" $? "$bad"
echo "$bdf" >/sys/bus/pci/drivers/dma32demo/bind
[ -c /dev/dma32demo1 ] && [ "$(cat "/sys/bus/pci/devices/$bdf/stats/coherent_bytes_held")" = $HELD ]
ktap_test_status "rebind: /dev/dma32demo1 back, holding $HELD bytes again" $? "$(ls /dev/dma32demo*)"

rmmod dma32demo
insmod /lib/modules/dma32demo.ko ctrl_buffers=65 ctrl_buffer_kb=3
[ "$(jget ctrl_buffers "$(dma32ctl info --json)")" = 0 ] &&
	dmesg | grep -q 'ctrl_buffers=65 invalid' && dmesg | grep -q 'ctrl_buffer_kb=3 invalid'
ktap_test_status "ctrl_buffers=65 and ctrl_buffer_kb=3 refused with a warning, defaults used" $? \
	"$(dmesg | grep -e ctrl_buffer | tail -n 2)"
ktap_finished
