#!/bin/sh
# run-guest: --mem 6G --numa 3G,3G --device-node 1 --swap 4096
#
# dma32demo on a machine whose ZONE_DMA32 is full of memory the VM can
# reclaim: 3 GiB of the swap disk are read through the page cache on a
# CPU of node 0, whose clean pages fill node 0 (ZONE_NORMAL, then
# ZONE_DMA32: the node's own zones before another node's). A 32-bit device
# on node 1 then asks for 256 MiB of GFP_DMA32 pages: kswapd and direct
# reclaim drop page cache in node 0's ZONE_DMA32 and the request gets its
# pages there (and from ZONE_DMA, the next zone down). The ZONE_DMA32
# patch rested its case on this ("These days the VM works much better and
# the wide use of NUMA has proven it can deal with many zones
# successfully", Andi Kleen, 2005). With nothing to reclaim (anonymous
# memory and no swap, the demo's pressure boots) the same kind of request
# ends in ENOMEM: the OOM killer is never called for a request below
# ZONE_NORMAL (mm/page_alloc.c). Measured on 6.1, for the record:
# anonymous memory with swap is no such case; 32 MiB of GFP_DMA32 pages
# ended ENOMEM after 9, with 49 s of direct reclaim. The boot is the NUMA
# suite's (two nodes, the device on the node without ZONE_DMA32).
# shellcheck source=driver/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"

ktap_set_plan 6
require_device

swap_kib=$(awk '$1 == "/dev/vda" { print $3 }' /proc/swaps)
[ "${swap_kib:-0}" -ge $((4096 * 1024 - 4)) ]
ktap_test_status "swap on /dev/vda, 4 GiB" $? "$(tr '\n' ' ' </proc/swaps)"

# vm NAME: a /proc/vmstat counter
vm() { awk -v n="$1" '$1 == n { print $2 }' /proc/vmstat; }
# dma32 FIELD: FIELD of node 0's ZONE_DMA32 (the only one), pages;
# "reclaimable": its file and anonymous LRU pages
dma32() {
	awk -v f="$1" '/^Node/ { on = ($2 == "0," && $4 == "DMA32") }
		on && $1 == "pages" && $2 == "free" { v["free"] = $3 }
		on && $1 ~ /^(min|low|high)$/ { v[$1] = $2 }
		on && $1 ~ /^nr_zone_(in)?active_(file|anon)$/ { v["reclaimable"] += $2 }
		on && $1 == "start_pfn:" { print v[f] + 0; exit }' /proc/zoneinfo
}
taskset -c 0 dd if=/dev/vda of=/dev/null bs=1M count=3072 2>/tmp/dd.err
ktap_test_status "3 GiB of /dev/vda read through the page cache on node 0" $? "$(cat /tmp/dd.err)"
file=$(awk '/^Node/ { on = ($2 == "0," && $4 == "DMA32") } on && $1 == "nr_zone_inactive_file" { print $2; exit }' /proc/zoneinfo)
free=$(dma32 free)
ktap_print_msg "ZONE_DMA32 after the aging: free $free, min $(dma32 min), low $(dma32 low), high $(dma32 high); $file page cache pages"
[ "$file" -ge 65536 ] && [ "$free" -lt 65536 ]
ktap_test_status "the page cache holds more of ZONE_DMA32 than is free and than the request asks" $? \
	"page cache $file, free $free pages"

held=$(dma32 reclaimable)
steal=$(vm pgsteal_kswapd)
j=$(taskset -c 1 dma32ctl run --strategy streaming-dma32 --op fill --size 1M --count 256 --json 2>&1)
rc=$?
steal=$(($(vm pgsteal_kswapd) - steal))
reclaimed=$((held - $(dma32 reclaimable)))
zone_pages() { printf '%s\n' "$j" | grep -o "\"$1\":[0-9]*" | head -n 1 | cut -d: -f2; }
got32=$(zone_pages DMA32) got16=$(zone_pages DMA)
[ $rc = 0 ] && [ "$(jget buffers "$j")" = 256 ] && [ $((${got32:-0} + ${got16:-0})) = 65536 ]
ktap_test_status "streaming-dma32 1M x 256: every page from ZONE_DMA32 ($got32) or ZONE_DMA ($got16)" $? "rc=$rc $j"
ktap_print_msg "ZONE_DMA32 after the request: free $(dma32 free), min $(dma32 min), low $(dma32 low), high $(dma32 high)"
# Most of what the request took beyond the free pages was reclaimed there
# (the rest: slab and other pages freed meanwhile; 6.12 gave 98.8%).
[ "$reclaimed" -ge $(((${got32:-0} - free) * 9 / 10)) ]
ktap_test_status "ZONE_DMA32 gave up $reclaimed reclaimable pages for the $got32 it handed out ($free were free)" $? \
	"reclaimable pages before $held, after $((held - reclaimed))"
[ "$steal" -gt 0 ]
ktap_test_status "kswapd reclaimed during the request: $steal pages" $? \
	"pgsteal_kswapd +$steal, pgsteal_direct $(vm pgsteal_direct), pgscan_kswapd $(vm pgscan_kswapd)"

ktap_finished
