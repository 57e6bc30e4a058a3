#!/usr/bin/env bash
# The debug kernel's checkers catch what they are there to catch, and a
# catch fails the run: the kernel's own test modules misbehave on purpose
# (samples/kmemleak's kmemleak-test leaks on load; mm/kasan's
# kasan_test_module makes out-of-bounds and use-after-free accesses), and
# run-guest must fail, naming the report. Without this, a green debug-kernel
# run could mean a checker that never fires (init once ran kmemleak's scan
# once, which reports nothing new: see guest-image/init).
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
# shellcheck source=scripts/lib.sh
source "$top/scripts/lib.sh"
scratch=$(mktemp -d "$DMA32_BUILD/debug-checkers.XXXXXX")
# shellcheck disable=SC2317 # called by ktap_helpers.sh at exit
ktap_cleanup() { rm -rf "$scratch"; }
export DMA32_LOGS=$scratch/logs
debug_guest_args

# shellcheck source=scripts/ktap_helpers.sh
. "$top/scripts/ktap_helpers.sh"
n=0
# caught DESCRIPTION REPORT_REGEX GUEST_COMMAND [RUN_GUEST_OPTION...]:
# run-guest on the debug kernel fails, saying the kernel reported a
# problem, with REPORT_REGEX in the excerpt it prints.
caught() {
	local desc=$1 regex=$2 cmd=$3 rc=0
	shift 3
	n=$((n + 1))
	"$top/scripts/run-guest" --log "checker-$n" "${debug_guest[@]}" --timeout 600 "$@" --run "$cmd" \
		>"$scratch/out" 2>"$scratch/err" </dev/null || rc=$?
	if ((rc != 0)) && grep -q 'kernel reported a problem' "$scratch/err" &&
		grep -qE -- "$regex" "$scratch/err"; then
		ktap_test_pass "$desc"
	else
		cat "$scratch/err" "$scratch/out" | head -n 20 | ktap_print_lines
		ktap_test_fail "$desc" "exit $rc"
	fi
}

caught "a leak (kmemleak-test.ko) fails the run with kmemleak's report" \
	'unreferenced object' \
	'insmod /lib/modules/kmemleak-test.ko && rmmod kmemleak-test' \
	--append 'panic_on_warn=1'
# Its copy_to_user() cases first trip the usercopy size check, a WARNING
# (which panic_on_warn=1 would turn into a panic before KASAN speaks):
# those are allowed here, so that only KASAN's reports can fail the run.
caught "out-of-bounds and use-after-free accesses (kasan_test_module.ko) fail the run with KASAN's reports" \
	'BUG: KASAN: (slab-out-of-bounds|use-after-free)' \
	'insmod /lib/modules/kasan_test_module.ko; true' \
	--allow-log 'WARNING: CPU: [0-9]+ PID: [0-9]+ at mm/maccess.c:[0-9]+ __copy_overflow|---\[ end trace'

ktap_finished
