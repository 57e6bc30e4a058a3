#!/bin/sh
# run-guest: --gart --gart-aperture 32 --mem 6G
#
# The 2005 AMD machine: a K8 northbridge whose GART the kernel's own GART
# IOMMU driver (amd_gart_64.c) programs, with a 32 MiB aperture taken from
# RAM below 4 GiB. Checks that the kernel uses it instead of swiotlb, that
# streaming DMA from pages above 4 GiB goes through aperture addresses
# with nothing bounced and the data verified, and that the aperture is
# scarce: one request maps all its buffers before the device runs, so a
# request of all but 16 aperture pages' worth of buffers fills it and
# succeeds, one of 16 pages more than the aperture holds is refused
# (ENOMEM, counted by the driver as one refused mapping, the kernel's "Out
# of IOMMU space" line, no other kernel report), and after it the first request succeeds
# again: the refused request's mappings were given back. The limit is the
# kernel's aperture, not the driver's: every page of these requests is
# above 4 GiB (checked), so each one needs an aperture page.
# shellcheck source=driver/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"

require_device
sysdir=$(readlink -f /sys/class/misc/dma32demo0/device)/stats
NB=/sys/bus/pci/devices/0000:00:18
FOUR_G=4294967296

# nb_reg OFFSET: a 32-bit register of the northbridge's misc function (18.3)
nb_reg() {
	v=$(od -An -tx4 -j "$1" -N 4 "$NB.3/config" | tr -d ' ')
	echo $((0x${v:-0}))
}

ids=$(cat "$NB.0/vendor" "$NB.0/device" "$NB.3/vendor" "$NB.3/device" 2>&1 | tr '\n' ' ')
[ "$ids" = "0x1022 0x1100 0x1022 0x1103 " ]
ktap_test_status "the K8 northbridge is at 00:18.0 (1022:1100) and 00:18.3 (1022:1103)" $? "$ids"

grep -q 'PCI-DMA: using GART IOMMU' /tmp/boot.dmesg
ktap_test_status "the kernel uses the GART IOMMU" $? "$(grep -E 'PCI-DMA|aperture|swiotlb|software IO TLB' /tmp/boot.dmesg)"

# The aperture the kernel took from RAM, the size the command line asked
# for (iommu=memaper=N: 32 MiB << N), and what the northbridge holds.
line=$(grep -o 'Mapping aperture over RAM \[mem 0x[0-9a-f]*-0x[0-9a-f]*\] ([0-9]*KB)' /tmp/boot.dmesg)
aper_base=$(echo "$line" | sed -n 's/.*\[mem \(0x[0-9a-f]*\)-.*/\1/p')
aper_kb=$(echo "$line" | sed -n 's/.*(\([0-9]*\)KB)$/\1/p')
order=$(tr ' ' '\n' </proc/cmdline | sed -n 's/^iommu=memaper=\([0-9]\)$/\1/p')
[ -n "$aper_base" ] && [ -n "$order" ] && [ "$aper_kb" = $((32768 << order)) ]
ktap_test_status "the aperture is $((32 << ${order:-0})) MiB of RAM at ${aper_base:-?}, as iommu=memaper=${order:-?} asks" $? \
	"log: '$line'; cmdline: $(cat /proc/cmdline)"
aper_base=$((${aper_base:-0})) aper_size=$((${aper_kb:-0} * 1024))
ctl=$(nb_reg 0x90) base=$(($(nb_reg 0x94) & 0x7fff)) table=$(nb_reg 0x98)
[ $((ctl & 1)) = 1 ] && [ $((ctl & 0x20)) = 0 ] && [ $(((ctl >> 1) & 7)) = "${order:-x}" ] &&
	[ $((base << 25)) = $aper_base ] && [ "$table" != 0 ]
ktap_test_status "the northbridge translates that aperture (GartEn, order ${order:-?}, base, table set)" $? \
	"$(printf 'ctl %#x base %#x table %#x' "$ctl" "$base" "$table")"
iommu_mb=$(sed -n 's/.*PCI-DMA: Reserving \([0-9]*\)MB of IOMMU area.*/\1/p' /tmp/boot.dmesg)
# The part of the aperture the kernel maps DMA into: its top iommu_mb MiB
# (all of it without an AGP driver).
iommu_pages=$((${iommu_mb:-0} * 256))
bus_base=$((aper_base + aper_size - iommu_pages * 4096)) aper_end=$((aper_base + aper_size))
[ "$iommu_pages" -gt 16 ] && [ $((iommu_pages * 4096)) -le $aper_size ]
ktap_test_status "the IOMMU area is $iommu_pages pages of the aperture" $? "Reserving '${iommu_mb}' MB, aperture $aper_size bytes"
ktap_print_msg "aperture $(printf '%#x-%#x' $aper_base $((aper_end - 1))), IOMMU area from $(printf '%#x' $bus_base)"

# No swiotlb: the GART driver turns it off (x86_swiotlb_enable = false),
# the pool is freed and its debugfs directory never made. debugfs itself
# is there: the GART's own directory is.
nslabs=absent
[ -e /sys/kernel/debug/swiotlb/io_tlb_nslabs ] && nslabs=$(cat /sys/kernel/debug/swiotlb/io_tlb_nslabs)
[ -d /sys/kernel/debug/gart ] && { [ "$nslabs" = absent ] || [ "$nslabs" = 0 ]; } &&
	! grep -q 'software bounce buffering' /tmp/boot.dmesg
ktap_test_status "swiotlb is not in use (no pool, no bounce buffering)" $? \
	"io_tlb_nslabs=$nslabs; $(grep -E 'swiotlb|software IO TLB|bounce' /tmp/boot.dmesg)"

# Every strategy through the GART: verified, nothing bounced.
bad=
for strat in coherent streaming streaming-dma32 user; do
	for op in fill checksum copy; do
		j=$(dma32ctl run --strategy $strat --op $op --size 128K --count 2 --verify --json 2>&1) &&
			[ "$(jget bounced "$j")" = 0 ] && [ "$(jget buffers_verified "$j")" = 2 ] ||
			bad="$bad $strat/$op: $j"
	done
done
[ -z "$bad" ]
ktap_test_status "every strategy x op verifies with 0 bounced" $? "$bad"

# check_runs JSON: every run above 4 GiB got DMA addresses inside the IOMMU
# area, every run below 4 GiB its physical address (the GART maps only what
# the mask cannot reach); sets through to the pages that went through the
# aperture, bad to what was wrong.
check_runs() {
	through=0 bad=
	for r in $(printf '%s\n' "$1" | grep -o '{"buffer":[^}]*}' | tr -d ' '); do
		phys=$(jget phys "$r") dma=$(jget dma "$r") pages=$(jget pages "$r")
		if [ $((phys)) -ge $FOUR_G ]; then
			if [ $((dma)) -ge $bus_base ] && [ $((dma + pages * 4096)) -le $aper_end ]; then
				through=$((through + pages))
			else
				bad="$bad $r"
			fi
		elif [ "$dma" != "$phys" ]; then
			bad="$bad $r"
		fi
	done
}

# Streaming from pages above 4 GiB: data through aperture addresses.
for op in fill checksum copy; do
	j=$(dma32ctl run --strategy streaming --op $op --size 64K --count 16 --verify --runs 4096 --json 2>&1)
	rc=$?
	check_runs "$j"
	above=$(jget pages_above_4g "$j")
	[ $rc = 0 ] && [ "$(jget buffers_verified "$j")" = 16 ] && [ "$(jget bounced "$j")" = 0 ] &&
		[ "$(jget runs_dropped "$j")" = 0 ] && [ "${above:-0}" -gt 0 ] &&
		[ "$through" = "$above" ] && [ -z "$bad" ]
	ktap_test_status "streaming $op: $above pages above 4 GiB through aperture addresses, verified, 0 bounced" $? \
		"rc=$rc through=$through; wrong runs:$bad; $j"
done

# request COUNT: a verified streaming fill of COUNT 64 KiB buffers (16
# pages each), all mapped before the device runs, into $j and $rc
request() {
	j=$(dma32ctl run --strategy streaming --op fill --size 64K --count "$1" --verify --runs 0 --json 2>&1)
	rc=$?
}
# all_above COUNT: each of COUNT x 16 pages is above 4 GiB, so each one
# needs an aperture page
all_above() { [ "$(jget pages "$j")" = $(($1 * 16)) ] && [ "$(jget pages_above_4g "$j")" = $(($1 * 16)) ]; }
fits=$((iommu_pages / 16 - 1)) over=$((iommu_pages / 16 + 1))
maps0=$(cat "$sysdir/map_failures")
full0=$(dmesg | grep -c 'PCI-DMA: Out of IOMMU space')

# Mapped 16 pages at a time, the aperture holds at least all but 16 pages
# whatever the allocator's rotating start: what is left past the last
# piece at its top is less than one piece.
request $fits
[ $rc = 0 ] && [ "$(jget buffers_verified "$j")" = $fits ] && all_above $fits
ktap_test_status "$((fits * 16)) of $iommu_pages aperture pages mapped at once: verified" $? "rc=$rc $j"

request $over
full1=$(dmesg | grep -c 'PCI-DMA: Out of IOMMU space')
[ $rc = 1 ] && [ "$(jget errno "$j")" = ENOMEM ] && [ "$(jget map_failures "$j")" = 1 ] && all_above $over
ktap_test_status "$((over * 16)) pages for $iommu_pages aperture pages: ENOMEM, one refused mapping" $? "rc=$rc $j"
[ "$full1" -gt "$full0" ]
ktap_test_status "the kernel reported it ran out of IOMMU space" $? "$full0 -> $full1: $(dmesg | grep 'IOMMU space' | tail -n 2)"

bad=
for i in 1 2 3; do
	request $fits
	[ $rc = 0 ] && [ "$(jget buffers_verified "$j")" = $fits ] && all_above $fits || bad="$bad [$i] rc=$rc $j"
done
[ -z "$bad" ]
ktap_test_status "after the refusal the aperture is whole again: $((fits * 16)) pages verified 3 times" $? "$bad"

maps1=$(cat "$sysdir/map_failures")
[ $((maps1 - maps0)) = 1 ] && [ "$(cat "$sysdir/bounced_mappings")" = 0 ]
ktap_test_status "sysfs: one refused mapping, 0 bounced mappings" $? \
	"map_failures $maps0 -> $maps1, bounced_mappings $(cat "$sysdir/bounced_mappings")"
check_only_ring_held

ktap_finished
