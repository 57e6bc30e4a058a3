#!/bin/sh
# run-guest: --smp 1 --append 'dma32demo.noload'
#
# dma32demo: 34 load/use/unload cycles (alternating MSI and INTx; 6 on the
# debug kernel) leak nothing; the module cannot be unloaded while
# /dev/dma32demo0 is open; an unbind with the file open is safe and a
# rebind works.
# One vCPU: on two, SUnreclaim moves by tens of kB either way between the
# measures (+60 kB in one run, -112 kB in the next, free pages flat): the
# other CPU's active slabs, which a cache's shrink does not give back. On
# one CPU, with the caches shrunk, it stays within a few slab pages. The
# debug kernel's kmemleak judges leaks on every run in any case: there, 6
# cycles (each path of load, use and unload, MSI and INTx, three times)
# and no free-memory windows, which KASAN's and kmemleak's own memory make
# no measure; 34 cycles took 207 s of a cold CI run on it.
# shellcheck source=driver/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"
ko=/lib/modules/dma32demo.ko
# Free memory in kB including the pages parked on the per-cpu lists (not
# in MemFree; they move it by hundreds of kB), and SUnreclaim after every
# slab cache gave back its empty and per-cpu partial slabs (SLUB keeps
# them on SMP kernels, even with one CPU online: SUnreclaim drifted by
# +48 kB over 14 cycles without this, with free memory flat)
meminfo_once() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	for shrink in /sys/kernel/slab/*/shrink; do
		echo 1 >"$shrink" 2>/dev/null
	done
	f=$(awk '/^ +nr_free_pages/ { f += $2 } /^ +count:/ { f += $2 } END { print f * 4 }' /proc/zoneinfo)
	echo "$f $(awk '/^SUnreclaim:/ { print $2 }' /proc/meminfo)"
}
# Objects freed after an RCU grace period (kernfs nodes, module sections)
# are still counted until it ends, which takes longer on a loaded host: the
# measure is the first reading whose SUnreclaim a second one a second later
# repeats (at most 30 tries; then the last one, and the noise margin below).
meminfo() {
	mi_prev=$(meminfo_once)
	mi_tries=0
	while [ $mi_tries -lt 30 ]; do
		sleep 1
		mi_now=$(meminfo_once)
		[ "${mi_now#* }" = "${mi_prev#* }" ] && break
		mi_prev=$mi_now
		mi_tries=$((mi_tries + 1))
	done
	echo "$mi_prev"
}
# one cycle: load, use every kind of buffer, unload
cycle() {
	insmod $ko "$@" || return 1
	[ -c /dev/dma32demo0 ] || return 2
	dma32ctl run --strategy coherent --op fill --size 1M --count 2 --verify >/dev/null || return 3
	dma32ctl run --strategy streaming --op copy --size 256K --count 2 --verify >/dev/null || return 4
	dma32ctl run --strategy user --op checksum --size 64K --verify >/dev/null || return 5
	rmmod dma32demo || return 6
	[ ! -e /dev/dma32demo0 ] || return 7
	return 0
}

cycles=34
debug_kernel && cycles=6
bad=
m=
i=1
while [ $i -le $cycles ] && [ -z "$bad" ]; do
	if [ $((i % 2)) = 1 ]; then
		cycle use_msi=0 || bad="cycle $i (INTx) step $?"
	else
		cycle || bad="cycle $i (MSI) step $?"
	fi
	# What first uses allocate for good (slab pages, per-cpu lists) settles
	# within about 5 cycles; then two windows of 14 cycles each
	[ $cycles = 34 ] && case $i in 6 | 20 | 34) m="$m $(meminfo)" ;; esac
	i=$((i + 1))
done
[ -z "$bad" ]
ktap_test_status "$cycles load/use/unload cycles, MSI and INTx" $? "$bad; dmesg: $(dmesg | tail -n 5 | tr '\n' ' ')"
# shellcheck disable=SC2086 # six numbers, split on purpose
set -- $m
if debug_kernel; then
	ktap_test_skip "no leak over cycles 7..34" "debug kernel: free memory is no measure there; kmemleak judges leaks at the end of the run"
elif [ $# -lt 6 ]; then
	ktap_test_fail "no leak over cycles 7..34" "the cycles did not get that far"
else
	ktap_print_msg "free/SUnreclaim kB after cycle 6: $1/$2, after 20: $3/$4, after 34: $5/$6"
	# A leak grows both windows; noise does not. One window alone has
	# moved SUnreclaim by +40 kB with nothing leaking (RCU-freed kernfs
	# and module objects still in flight under a loaded host). So growth
	# counts only when both windows show it: beyond 3 slab pages (16 kB)
	# in SUnreclaim, or beyond 128 kB in free memory. That still catches
	# 1.2 kB a cycle in slab (the device structure is 1 KiB) and 9 kB a
	# cycle in pages (a ring is 16 KiB, a buffer 1 MiB).
	slab1=$(($4 - $2)) slab2=$(($6 - $4)) free1=$(($1 - $3)) free2=$(($3 - $5))
	! { [ $slab1 -ge 16 ] && [ $slab2 -ge 16 ]; } && ! { [ $free1 -ge 128 ] && [ $free2 -ge 128 ]; }
	ktap_test_status "no leak over cycles 7..34 (free -$free1 then -$free2 kB, SUnreclaim +$slab1 then +$slab2 kB)" $? "$m"
fi

insmod $ko use_msi=0
[ "$(jget irq "$(dma32ctl info --json)")" = intx ]
ktap_test_status "use_msi=0 runs on INTx" $? "$(dma32ctl info --json)"
rmmod dma32demo
insmod $ko
[ "$(jget irq "$(dma32ctl info --json)")" = msi ]
ktap_test_status "MSI by default" $? "$(dma32ctl info --json)"

# Open file vs rmmod and unbind
bdf=$(basename "$(readlink -f /sys/class/misc/dma32demo0/device)")
exec 3<>/dev/dma32demo0
! rmmod dma32demo 2>/dev/null
ktap_test_status "rmmod refused while /dev/dma32demo0 is open" $? "rmmod succeeded"
echo "$bdf" >/sys/bus/pci/drivers/dma32demo/unbind
[ ! -e /dev/dma32demo0 ]
ktap_test_status "unbind with the file open removes /dev/dma32demo0" $? "still there"
exec 3>&-
echo "$bdf" >/sys/bus/pci/drivers/dma32demo/bind
j=$(dma32ctl run --strategy streaming --op fill --size 64K --verify --json 2>&1)
ktap_test_status "rebind after closing: requests work" $? "$j"
rmmod dma32demo
ktap_test_status "final rmmod" $? "rmmod failed"

ktap_finished
