#!/usr/bin/env bash
# A killed request's ring, seen from the device: the device is reset
# before the driver clears the ring. The kill path (d32_run_jobs()) calls
# d32_hw_init(), which must reset the engine, flush that, and only then
# zero the ring; zeroed first, the engine, which QEMU's main thread runs
# while the vCPU clears the ring, can fetch slots the CPU already cleared
# (op 0, length 0: invalid) and write a status back into the emptied ring.
#
# dma32ctl is killed (SIGKILL) in the middle of its ring until 20 kills
# ended a request (8 on the debug kernel): 4000 coherent 16 KiB buffers
# (1000 on the debug kernel) checksummed, one descriptor each, all queued
# at once (ring_entries=4096), killed as soon as it waits for the
# device. QEMU traces the device's descriptor fetches, doorbells and
# register writes (trace-events: dma32_demo_*)
# and, at each reset written while descriptors are still queued, the
# descriptor at the device's head as memory holds it then
# (dma32_demo_reset_pending). That last one catches the old order at
# every such reset, whatever the timing: the slot reads op 0, length 0.
# A fetch from a cleared slot shows it only when QEMU's main thread takes
# the lock in the fraction of a millisecond that clearing 256 KiB takes:
# on the shared 2-core host that happened for 1 kill in 3, 0 in 12, 1 in
# 28 and several in 30 (the diagnostic "kills whose ring had fetches from
# cleared slots" counts them).
#
# Checked: 20 kills ended a request; at least half of them reset the device
# while descriptors of their ring were still queued (else the trace shows
# nothing about the order); no fetch from a cleared slot; at each reset
# with descriptors queued the one at the head was still in the ring;
# nothing fetched between a kill's reset and the next doorbell; the next
# request verifies; the counters count each kill that ended a request as
# one request, one error and one reset: as many as the trace has resets
# after a doorbell (a kill may land after the device finished the ring,
# before the driver woke: still a reset).
#
# Usage: ring-reset.sh [--kernel-version V | --debug]
#   (default: run-guest's kernel, $DMA32_KERNEL; --debug: the debug kernel
#   as run-tests boots it, with panic_on_warn=1)
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
scratch=$(mktemp -d)
# shellcheck disable=SC2317 # called by ktap_helpers.sh at exit
ktap_cleanup() { rm -rf "$scratch"; }
# shellcheck source=scripts/ktap_helpers.sh
. "$top/scripts/ktap_helpers.sh"

# Kills wanted that end a request waiting for the device, the most
# requests started to get them, and the descriptors of a request. The
# head check catches the old order at every kill, so a few do; the debug
# kernel (KASAN) takes about 30 s to set up a request of 4000 buffers on
# a loaded host, and gets fewer and smaller ones.
KILLS=20 ATTEMPTS=100 COUNT=4000
kernel_args=()
case ${1:-} in
'') ;;
--kernel-version) kernel_args=(--kernel-version "$2") ;;
--debug)
	# lib.sh in a subshell: only its debug_guest comes out
	# shellcheck disable=SC2154 # debug_guest: set by the eval
	eval "$(source "$top/scripts/lib.sh" && debug_guest_args && declare -p debug_guest)"
	# shellcheck disable=SC2031 # the eval's, not the subshell's
	kernel_args=("${debug_guest[@]}" --append panic_on_warn=1)
	KILLS=8 ATTEMPTS=30 COUNT=1000 ;;
*) echo "usage: $0 [--kernel-version V | --debug]" >&2; exit 2 ;;
esac

ktap_set_plan 7

# The guest's command (busybox sh). Each request is COUNT coherent
# buffers of 16 KiB, one descriptor each, all in the ring at once; it is killed as
# soon as it sleeps in the ioctl (/proc/PID/syscall names syscall 16),
# which it mostly does while it waits for the device, after the doorbell
# (/proc/PID/wchan would say where, but 6.12's unwinder names a stale
# frame). The device needs a few hundred milliseconds for the ring on an
# idle host, so the watch uses only shell builtins (read, [): a loop that
# forked grep and sleep looked every 30 ms or so and saw 16 of 60
# requests wait. A kill that ended a request waiting for the device
# counts as an error (stats/errors), one during the allocation does not:
# requests go on until KILLS did, at most ATTEMPTS
# shellcheck disable=SC2016 # expanded in the guest
GUEST='st=$(readlink -f /sys/class/misc/dma32demo0/device)/stats
echo "ring_entries $(cat /sys/module/dma32demo/parameters/ring_entries)"
k=0
e=0
while [ $k -lt '$ATTEMPTS' ] && [ $e -lt '$KILLS' ]; do
	k=$((k + 1))
	dma32ctl run --strategy coherent --op checksum --size 16K --count '$COUNT' --runs 0 >/dev/null 2>&1 &
	p=$!
	n=0
	until { read -r nr _ </proc/$p/syscall && [ "$nr" = 16 ]; } 2>/dev/null ||
		! { read -r _ _ state _ </proc/$p/stat && [ "$state" != Z ]; } 2>/dev/null ||
		[ $n -ge 1000000 ]; do
		n=$((n + 1))
	done
	kill -9 $p
	wait $p 2>/dev/null
	echo "kill $k: exit $? after $n looks"
	read -r e <$st/errors
done
echo "attempts $k"
j=$(dma32ctl run --strategy coherent --op checksum --size 16K --count 64 --verify --json --runs 0 2>&1)
echo "after: rc $? $j"
for s in requests errors resets; do echo "stats $s $(cat $st/$s)"; done'

trace=$scratch/ring-reset.trace
t0=$(date +%s)
rc=0
"$top/scripts/run-guest" --log driver-ring-reset --timeout 600 "${kernel_args[@]}" \
	--append 'dma32demo.ring_entries=4096' \
	--qemu-args "-trace enable=dma32_demo_desc* -trace enable=dma32_demo_doorbell -trace enable=dma32_demo_mmio_write -trace enable=dma32_demo_reset_pending -D $trace" \
	--run "$GUEST" >"$scratch/out" 2>"$scratch/err" &
guest=$!
wait "$guest" || rc=$?
# grep -c prints 0 (and fails) on no fetch, nothing on no trace file.
fetches=$(grep -c 'dma32_demo_desc ' "$trace" 2>/dev/null || true)
ktap_print_msg "one boot, $(($(date +%s) - t0)) s; ${fetches:-no trace file, no} descriptor fetches traced"
ktap_print_lines <"$scratch/out"
# A request that ended before its kill (a host too slow to see it wait)
# tells nothing; most must be killed
killed=$(grep -c '^kill [0-9]*: exit 137 ' "$scratch/out" || true)
attempts=$(sed -n 's/^attempts //p' "$scratch/out")
count_of() { sed -n "s/^stats $1 //p" "$scratch/out"; }
ended=$(count_of errors)
if ((rc == 0 && ${ended:-0} >= KILLS)); then
	ktap_test_pass "$ended requests ended by their kill (SIGKILL) while they waited for the device ($attempts started, $killed killed)"
else
	ktap_print_lines <"$scratch/err"
	ktap_test_fail "$KILLS requests ended by their kill (SIGKILL) while they waited for the device" \
		"${ended:-no} of ${attempts:-no} requests (run-guest exit $rc)"
fi

# Walk the trace: the ring size (RING_SIZE, 0x48), each doorbell (the new
# tail and the device's head), the descriptors that completed OK (status
# 1) since it, and each reset (CTRL 0x80000000): a reset after a doorbell
# whose descriptors had not all completed OK is a kill's, with LEFT still
# queued. Fetches with op 0 or length 0 come from a cleared slot; fetches
# after a reset before the next doorbell should not happen at all.
# Prints "reset LINE LEFT ZEROED" per such reset with at least two
# descriptors left (ZEROED: the fetches from cleared slots since the
# doorbell), "zeroed LINE TEXT" (at most five) and, last, "fetches N
# zeroed Z after_reset A kill_resets K", K counting every reset after a
# doorbell: a kill that lands after the device finished the ring but
# before the driver saw it still ends the request (-EINTR) with a reset,
# with nothing left to show the order.
walk() {
	awk '
	function val(key,   i) { for (i = 1; i < NF; i++) if ($i == key) return $(i + 1); return "" }
	function hex(s,   i, n) {
		n = 0
		s = tolower(substr(s, 3))
		for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return n
	}
	/dma32_demo_mmio_write addr 0x48 / { ring = hex(val("val")) }
	/dma32_demo_mmio_write addr 0x20 val 0x80000000$/ {
		if (dbl) {
			left = queued - ok
			kill_resets++; reset_dbl = doorbells
			if (left >= 2) print "reset", NR, left, seg
		}
		dbl = 0; reset = 1
	}
	/dma32_demo_doorbell / {
		t = val("tail") + 0; h = val("head") + 0
		queued = ring ? ((t - h) % ring + ring) % ring : t - h
		ok = 0; dbl = 1; reset = 0; seg = 0; doorbells++
	}
	/dma32_demo_desc idx / {
		fetches++
		if (val("op") == 0 || val("len") == 0) {
			zeroed++; seg++
			if (zeroed <= 5) print "zeroed", NR, $0
		}
		if (reset) after++
	}
	/dma32_demo_desc_done / && val("status") == 1 { ok++ }
	# the last doorbell is the request after the kills: a reset after it
	# comes from the shutdown (remove), which no request counts
	END { if (reset_dbl && reset_dbl == doorbells) kill_resets--
		print "fetches", fetches + 0, "zeroed", zeroed + 0, "after_reset", after + 0, "kill_resets", kill_resets + 0 }
	' "$trace"
}
if [[ -s $trace ]]; then
	walk >"$scratch/walk"
else
	echo "fetches 0 zeroed 0 after_reset 0 kill_resets 0" >"$scratch/walk"
fi
read -r _ fetches _ zeroed _ after _ kill_resets < <(tail -n 1 "$scratch/walk")
hits=$(grep -c '^reset ' "$scratch/walk" || true)
left=$(awk '/^reset / { printf "%s%d", s, $3; s = ", " }' "$scratch/walk")
ktap_print_msg "kills whose ring had fetches from cleared slots: $(awk '/^reset / && $4 > 0 { n++ } END { print n + 0 }' "$scratch/walk") of $hits"
# A kill that lands after the device finished the ring, before the
# driver woke, still ends the request but shows nothing about the order:
# half the kills wanted must have left descriptors queued
if ((hits >= KILLS / 2 && hits <= killed)); then
	ktap_test_pass "$hits kills reset the device with descriptors of their ring still queued (left: $left)"
else
	ktap_test_fail "$hits kills reset the device with descriptors of their ring still queued (left: ${left:-none})" \
		"$hits resets with descriptors queued for $killed kills, at least $((KILLS / 2)) wanted: the trace cannot show the order"
fi
if ((fetches > 0 && zeroed == 0)); then
	ktap_test_pass "no descriptor fetched from a cleared slot (0 of $fetches fetches with op 0 or length 0)"
else
	sed -n 's/^zeroed //p' "$scratch/walk" | ktap_print_lines
	ktap_test_fail "no descriptor fetched from a cleared slot (0 of $fetches fetches with op 0 or length 0)" \
		"$zeroed fetches from cleared slots: the ring was cleared before the engine was reset"
fi
# Whatever the timing: at each reset with descriptors still queued, the
# device reads the one at its head (dma32_demo_reset_pending). Cleared
# first, the ring shows op 0 and length 0 there at every such reset.
pending=$(grep -c 'dma32_demo_reset_pending ' "$trace" 2>/dev/null || true)
cleared=$(grep 'dma32_demo_reset_pending ' "$trace" 2>/dev/null | grep -c ': op 0 \| len 0 at head' || true)
if ((${pending:-0} >= KILLS / 2 && ${cleared:-0} == 0)); then
	ktap_test_pass "at each of $pending resets with descriptors queued, the descriptor at the device's head was still in the ring"
else
	grep 'dma32_demo_reset_pending ' "$trace" 2>/dev/null | grep ': op 0 \| len 0 at head' | head -n 5 | ktap_print_lines
	ktap_test_fail "at each reset with descriptors queued, the descriptor at the device's head was still in the ring" \
		"${cleared:-no} of ${pending:-no} such resets found it cleared (at least $((KILLS / 2)) resets wanted): the ring was cleared before the engine was reset"
fi
if ((fetches > 0 && after == 0)); then
	ktap_test_pass "nothing fetched between a reset and the next doorbell"
else
	ktap_test_fail "nothing fetched between a reset and the next doorbell" "$after fetches"
fi
after_line=$(grep '^after: ' "$scratch/out" || true)
if [[ $after_line =~ ^after:\ rc\ 0\ .*\"buffers_verified\":64[,}] ]]; then
	ktap_test_pass "after the kills the next request verifies (64 buffers)"
else
	ktap_test_fail "after the kills the next request verifies (64 buffers)" "${after_line:-no result}"
fi
if [[ $(count_of requests) == $((${attempts:-0} + 1)) && $(count_of errors) == "$kill_resets" && $(count_of resets) == "$kill_resets" ]] &&
	((kill_resets >= hits)); then
	ktap_test_pass "each kill that ended a request counted as one request, one error and one reset ($kill_resets resets traced after a doorbell)"
else
	ktap_test_fail "each kill that ended a request counted as one request, one error and one reset" \
		"requests $(count_of requests), errors $(count_of errors), resets $(count_of resets) for ${attempts:-no} requests and 1 more; the trace has $kill_resets resets after a doorbell, $hits of them with descriptors queued"
fi
ktap_finished
