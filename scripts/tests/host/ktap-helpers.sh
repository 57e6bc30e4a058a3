#!/usr/bin/env bash
# The project's KTAP helpers, read by the kernel's own parser (kunit.py
# parse): each helper's failing case must show every reason under its own
# test (Documentation/dev-tools/ktap.rst: diagnostic lines go directly
# before the result line of their test), a declared plan must catch a
# missing test, and a suite stopped by SIGTERM must still print what it
# had and leave nothing in TMPDIR. The helpers: scripts/ktap_helpers.sh in
# bash and in the guest's busybox sh, kselftest_harness.h (the driver's C
# tests) and demo/tests/ktap.py (the demo's Python suites).
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
build=${DMA32_BUILD:-$top/build}
mkdir -p "$build"
scratch=$(mktemp -d "$build/ktap-helpers.XXXXXX")
# shellcheck disable=SC2317 # called by ktap_helpers.sh at exit
ktap_cleanup() { rm -rf "$scratch"; }
kunit=${DMA32_KUNIT:-$build/linux/tools/testing/kunit}
# shellcheck source=scripts/ktap_helpers.sh
. "$top/scripts/ktap_helpers.sh"

ktap_set_plan 17

# diagnostics LOG: each test of LOG as kunit_parser reads it, one line per
# diagnostic it gave that test: 'NAME<TAB>STATUS<TAB>LINE' (LINE empty for
# a test without any), then 'errors<TAB>N'.
diagnostics() {
	python3 - "$kunit" "$1" <<'PY'
import contextlib, io, sys
sys.path.insert(0, sys.argv[1])
with contextlib.redirect_stdout(io.StringIO()):
    import kunit_parser
    run = kunit_parser.parse_run_tests(open(sys.argv[2], errors="replace").readlines())
def leaves(t):
    if not t.subtests:
        yield t
    for s in t.subtests:
        yield from leaves(s)
for t in leaves(run):
    for line in t.log or [""]:
        print("%s\t%s\t%s" % (t.name, t.status.name, line))
print("errors\t%d" % run.counts.errors)
PY
}

# reasons_in_place DESC LOG NAME=REASON...: every failed test NAME shows its
# REASON (a whole diagnostic line) and no other test does; no parse error.
reasons_in_place() {
	local desc=$1 log=$2 pair name reason bad='' table
	shift 2
	table=$(diagnostics "$log")
	for pair in "$@"; do
		name=${pair%%=*} reason=${pair#*=}
		grep -qxF "$name	FAILURE	$reason" <<<"$table" ||
			bad+="'$reason' is not under '$name'; "
		if grep -F "	$reason" <<<"$table" | grep -qvF "$name	"; then
			bad+="'$reason' is under another test; "
		fi
	done
	grep -qx 'errors	0' <<<"$table" || bad+="kunit.py parse counts errors; "
	if [[ -z $bad ]]; then
		ktap_test_pass "$desc"
	else
		ktap_print_lines <<<"$table"
		ktap_test_fail "$desc" "$bad"
	fi
}

# A failing suite in bash and in the guest's busybox sh: the reasons of
# ktap_test_fail and ktap_test_result stay with their tests, the suite
# exits 1.
cat >"$scratch/fails.sh" <<'SUITE'
set -eu
. "$1"
ktap_test_pass "a passing case"
ktap_test_fail "a failing case" "exit 0, stderr: one
two"
ktap_test_result "a command that fails" sh -c 'echo its output; exit 3'
ktap_test_result "a command that succeeds" true
ktap_test_skip "a skipped case" "nothing to do"
ktap_test_fail "the last case fails too" "reason of the last"
ktap_finished
SUITE
for shell in bash 'busybox sh'; do
	rc=0
	$shell "$scratch/fails.sh" "$top/scripts/ktap_helpers.sh" >"$scratch/fails.log" 2>&1 || rc=$?
	ktap_test_status "$shell: a failing suite exits 1" "$( ((rc == 1)); echo $?)" "exit $rc"
	reasons_in_place "$shell: kunit.py parse shows each failure's reason under its own test" \
		"$scratch/fails.log" "a failing case=# exit 0, stderr: one two" \
		"a command that fails=# its output" "the last case fails too=# reason of the last"
done

# A suite that dies half-way (set -e) keeps the results it had, adds one
# failed result for the early end with its exit status as the reason, and
# runs its clean-up.
cat >"$scratch/dies.sh" <<SUITE
set -eu
. "$top/scripts/ktap_helpers.sh"
ktap_cleanup() { echo cleaned >"$scratch/cleaned"; }
ktap_test_pass "before the failure"
false
ktap_test_pass "never reached"
ktap_finished
SUITE
for shell in bash 'busybox sh'; do
	rm -f "$scratch/cleaned"
	rc=0
	$shell "$scratch/dies.sh" >"$scratch/dies.log" 2>&1 || rc=$?
	[[ $rc == 1 && -f $scratch/cleaned ]]
	ktap_test_status "$shell: a suite that dies exits 1 and runs its clean-up" $? "exit $rc"
	reasons_in_place "$shell: a suite that dies keeps its results and says why under the early end" \
		"$scratch/dies.log" "the suite ended before ktap_finished=# exit status 1"
done

# A declared plan that the suite does not meet: ktap_finished exits 1, and
# kunit.py parse reports the test the plan announced but the log lacks.
cat >"$scratch/short.sh" <<'SUITE'
set -eu
. "$1"
ktap_set_plan 3
ktap_test_pass "one"
ktap_test_pass "two"
ktap_finished
SUITE
for shell in bash 'busybox sh'; do
	rc=0
	$shell "$scratch/short.sh" "$top/scripts/ktap_helpers.sh" >"$scratch/short.log" 2>&1 || rc=$?
	counts=$("$top/scripts/ktap-count" "$kunit" "$scratch/short.log" | sed -n 1p)
	read -r _ f _ errors <<<"$counts"
	[[ $rc == 1 ]] && ((f + errors > 0)) && grep -qx '1..3' "$scratch/short.log"
	ktap_test_status "$shell: a missing test fails the declared plan" $? \
		"exit $rc, passed/failed/skipped/errors '$counts'"
done

# SIGTERM to the suite's process group while it waits on a foreground
# command (what the guest's run-suites sends at a timeout): within seconds
# it prints what it had and the early end, exits 143 and leaves nothing in
# TMPDIR.
cat >"$scratch/term.sh" <<'SUITE'
set -eu
. "$1"
ktap_test_pass "before the signal"
ktap_test_result "a command that succeeds" true
sleep 61.5
ktap_test_pass "never reached"
ktap_finished
SUITE
for shell in bash 'busybox sh'; do
	mkdir -p "$scratch/tmp"
	# shellcheck disable=SC2086 # 'busybox sh' is two words
	TMPDIR=$scratch/tmp setsid $shell "$scratch/term.sh" "$top/scripts/ktap_helpers.sh" \
		>"$scratch/term.log" 2>&1 &
	pid=$!
	for _ in $(seq 100); do pgrep -f 'sleep 61.5' >/dev/null && break; sleep 0.1; done
	start=$(date +%s)
	kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid"
	rc=0
	wait "$pid" || rc=$?
	took=$(($(date +%s) - start))
	left=$(find "$scratch/tmp" -mindepth 1 | head -n 3)
	[[ $rc == 143 && $took -le 5 && -z $left ]] && grep -qx 'ok 1 before the signal' "$scratch/term.log"
	ktap_test_status "$shell: a suite stopped by SIGTERM prints its results and leaves nothing in TMPDIR" $? \
		"exit $rc after ${took}s, left in TMPDIR: ${left:-nothing}"
	reasons_in_place "$shell: the SIGTERM is the reason of the early end" "$scratch/term.log" \
		"the suite ended before ktap_finished=# stopped by SIGTERM (its timeout ran out, or the run was stopped)"
done

# The driver's C tests: kselftest_harness.h, with stderr on stdout as the
# guest suites run them.
harness=''
for dir in "$build/linux/tools/testing/selftests" "$build"/kernel-tools-*/tools/testing/selftests; do
	[[ -f $dir/kselftest_harness.h ]] && harness=$dir && break
done
if [[ -z $harness ]] || ! command -v gcc >/dev/null; then
	ktap_test_skip "kselftest_harness.h: each failure's reason under its own test" \
		"no kselftest_harness.h extracted (make check or make extracts it) or no gcc"
else
	cat >"$scratch/harness.c" <<'C'
#include "kselftest_harness.h"
TEST(passes) { EXPECT_EQ(1, 1); }
TEST(fails) { EXPECT_EQ(1, 2) TH_LOG("reason of fails"); }
TEST(fails_too) { ASSERT_EQ(3, 4) TH_LOG("reason of fails_too"); }
TEST_HARNESS_MAIN
C
	if (cd "$scratch" && gcc -isystem "$harness" -o harness harness.c 2>gcc.err); then
		"$scratch/harness" >"$scratch/harness.log" 2>&1 || true
		reasons_in_place "kselftest_harness.h: each failure's reason under its own test" "$scratch/harness.log" \
			"global.fails=# harness.c:3:fails:reason of fails" \
			"global.fails_too=# harness.c:4:fails_too:reason of fails_too"
	else
		ktap_print_lines <"$scratch/gcc.err"
		ktap_test_fail "kselftest_harness.h: each failure's reason under its own test" "the test program does not build"
	fi
fi

# The demo's Python suites' printer.
rc=0
PYTHONDONTWRITEBYTECODE=1 python3 - "$top" >"$scratch/py.log" 2>&1 <<'PY' || rc=$?
import sys
sys.path.insert(0, sys.argv[1])
from demo.tests import ktap
sys.exit(ktap.emit([(True, "passes", ""), (False, "fails", "reason of fails\nsecond line"),
                    (None, "skipped", "why"), (False, "fails too", "reason of fails too")]))
PY
ktap_test_status "demo/tests/ktap.py: a suite that printed 'not ok' exits 1" "$( ((rc == 1)); echo $?)" "exit $rc"
reasons_in_place "demo/tests/ktap.py: each failure's reason under its own test" "$scratch/py.log" \
	"fails=# reason of fails second line" "fails too=# reason of fails too"

ktap_finished
