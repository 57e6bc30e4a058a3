#!/usr/bin/env bash
# run-batch: several suites in one boot, each judged on its own.
# First a real boot of the plain 6.1 guest: a suite killed at its timeout
# and a failed insmod cost the next suite nothing. Then --judge on made-up
# logs: kernel reports and kmemleak's finds go to the suite they came from,
# a report outside every suite fails them all, and a guest that stopped
# fails the suite it was in and the ones after it.
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
scratch=$(mktemp -d "$top/build/run-batch.XXXXXX")
# shellcheck disable=SC2317 # called by ktap_helpers.sh at exit
ktap_cleanup() { [[ -n ${KEEP:-} ]] || rm -rf "$scratch"; }
export DMA32_LOGS=$scratch/logs
run_batch=$top/scripts/run-batch
# shellcheck source=scripts/ktap_helpers.sh
. "$top/scripts/ktap_helpers.sh"

# status_is DESCRIPTION TAG RC [PROBLEM_REGEX]: TAG's status has RC and,
# when given, a problem line matching the regex (with RC 0: no problem).
status_is() {
	local desc=$1 tag=$2 want_rc=$3 regex=${4:-} file=$scratch/out/$2.status got_rc
	if [[ ! -f $file ]]; then
		ktap_test_fail "$desc" "no $tag.status"
		return
	fi
	read -r got_rc _ <"$file"
	if [[ $got_rc == "$want_rc" ]] &&
		if [[ -n $regex ]]; then tail -n +2 "$file" | grep -qE -- "$regex"
		else (($(wc -l <"$file") == 1)); fi; then
		ktap_test_pass "$desc"
	else
		ktap_test_fail "$desc" "$(tr '\n' '|' <"$file")"
	fi
}

# A real boot: errors.sh takes about 5 s, so 1 s kills it; then a driver
# parameter value insmod rejects; then the spine, which must not notice.
cat >"$scratch/real.plan" <<'PLAN'
killed driver/tests/guest/errors.sh 1 timeout_ms=1000
bad-param guest-image/tests/guest/spine.sh 60 timeout_ms=banana
spine guest-image/tests/guest/spine.sh 120
PLAN
rc=0
"$run_batch" --plan "$scratch/real.plan" --out "$scratch/out" --log batch \
	>"$scratch/real.out" 2>&1 || rc=$?
# shellcheck disable=SC2317 # called through ktap_test_result
failed_two() {
	echo "exit $rc: $(tail -n 2 "$scratch/real.out" | tr '\n' ' ')"
	((rc != 0)) && grep -q '2 of 3 suites failed in one boot' "$scratch/real.out"
}
ktap_test_result "a boot with failed suites exits non-zero, saying how many" failed_two
# SIGTERM first (the suite's KTAP helpers then print what they held), so
# its status is 143; SIGKILL only if it is still there 10 s later.
status_is "a suite past its timeout is stopped and fails" killed 143 '^timed out after 1s \(SIGTERM, then SIGKILL 10s later\)$'
# shellcheck disable=SC2317 # called through ktap_test_result
kept_results() {
	head -c 300 "$scratch/out/killed.log"
	grep -qx '# stopped by SIGTERM (its timeout ran out, or the run was stopped)' "$scratch/out/killed.log" &&
		grep -q '^not ok [0-9]* the suite ended before ktap_finished$' "$scratch/out/killed.log"
}
ktap_test_result "a suite stopped at its timeout still prints its KTAP and why it ended" kept_results
status_is "a driver parameter value insmod rejects fails the suite, which does not run" bad-param 1 \
	'^insmod dma32demo.ko timeout_ms=banana failed: the suite did not run$'
status_is "the next suite in the same boot passes" spine 0
# shellcheck disable=SC2317 # called through ktap_test_result
only_ktap() {
	head -c 300 "$scratch/out/spine.log"
	grep -q '^ok 8 ' "$scratch/out/spine.log" && ! grep -q 'run-batch:' "$scratch/out/spine.log"
}
ktap_test_result "the passing suite's log is its KTAP, nothing else" only_ktap

# judge NAME: run-batch --judge on $scratch/NAME.{console,result}.log made
# up below, with the plan of four suites.
cat >"$scratch/judge.plan" <<'PLAN'
leaky driver/tests/guest/errors.sh 300
buggy driver/tests/guest/ioctls.sh 300
stopped driver/tests/guest/stress.sh 300
never driver/tests/guest/fuzz.sh 300
PLAN
judge() {
	local status=$scratch/$1.status.json
	jq -n --arg log "$scratch/$1.console.log" \
		'{outcome: "guest-stopped", exit: 1, message: "the guest stopped before the command finished", console_log: $log, seconds: 9}' \
		>"$status"
	rm -rf "$scratch/out"
	"$run_batch" --plan "$scratch/$2" --out "$scratch/out" --judge "$status" >/dev/null 2>&1 || true
}
ktap_block() {
	printf 'KTAP version 1\n1..1\nok 1 %s\n' "$1"
}
{
	echo 'DMA32-DEMO-RESULT-BEGIN'
	echo 'DMA32-DEMO-SUITE-BEGIN /tests/driver/errors.sh'
	ktap_block fine
	echo 'DMA32-DEMO-SUITE-END /tests/driver/errors.sh rc=0 seconds=4'
	echo 'DMA32-DEMO-SUITE-BEGIN /tests/driver/ioctls.sh'
	ktap_block fine
	echo 'DMA32-DEMO-SUITE-END /tests/driver/ioctls.sh rc=0 seconds=3'
	echo 'DMA32-DEMO-SUITE-BEGIN /tests/driver/stress.sh'
	echo 'KTAP version 1'
} | sed 's/$/\r/' >"$scratch/stop.result.log"
cat >"$scratch/stop.console.log" <<'CONSOLE'
[    1.000000] Linux version 6.1
[    9.000000] dma32-demo: suite /tests/driver/errors.sh begins at jiffies 4294894000
[   12.000000] dma32-demo: suite /tests/driver/ioctls.sh begins at jiffies 4294895000
[   13.000000] BUG: unable to handle page fault for address: 0000000000000008
[   15.000000] dma32-demo: suite /tests/driver/stress.sh begins at jiffies 4294896000
[   16.000000] Kernel panic - not syncing: Fatal exception
CONSOLE
judge stop judge.plan
status_is "a kernel report goes to the suite it was printed in" buggy 1 \
	'during this suite: .*BUG: unable to handle page fault'
status_is "the suite before it is clean" leaky 0
status_is "a suite the guest stopped in fails" stopped 1 '^the guest stopped during this suite'
status_is "a suite the guest never reached fails" never 1 '^not run: the guest stopped before this suite'

# kmemleak's reports come after the last suite; the allocation's jiffies
# name the suite. A report while booting fails every suite.
cat >"$scratch/two.plan" <<'PLAN'
leaky driver/tests/guest/errors.sh 300
clean driver/tests/guest/ioctls.sh 300
PLAN
{
	echo 'DMA32-DEMO-RESULT-BEGIN'
	for suite in errors ioctls; do
		echo "DMA32-DEMO-SUITE-BEGIN /tests/driver/$suite.sh"
		ktap_block fine
		echo "DMA32-DEMO-SUITE-END /tests/driver/$suite.sh rc=0 seconds=4"
	done
	echo 'DMA32-DEMO-RESULT-END rc=0'
} | sed 's/$/\r/' | tee "$scratch/leak.result.log" >"$scratch/boot.result.log"
cat >"$scratch/leak.console.log" <<'CONSOLE'
[    9.000000] dma32-demo: suite /tests/driver/errors.sh begins at jiffies 4294894000
[   12.000000] dma32-demo: suite /tests/driver/ioctls.sh begins at jiffies 4294895000
[   15.000000] dma32-demo: suites end at jiffies 4294896000
unreferenced object 0xffff888100a4c000 (size 64):
  comm "dma32ctl", pid 91, jiffies 4294894500 (age 31.000s)
  hex dump (first 32 bytes):
CONSOLE
judge leak two.plan
status_is "a leak goes to the suite that allocated it" leaky 1 'during this suite: unreferenced object'
status_is "the other suite of the boot is clean" clean 0
head -n 3 "$scratch/leak.console.log" >"$scratch/boot.console.log"
sed -i '1i [    2.000000] WARNING: CPU: 0 PID: 1 at mm/page_alloc.c:1 boot_thing' "$scratch/boot.console.log"
judge boot two.plan
status_is "a report while booting fails every suite (1)" leaky 1 'outside every suite of this boot: .*WARNING'
status_is "a report while booting fails every suite (2)" clean 1 'outside every suite of this boot: .*WARNING'

ktap_finished
