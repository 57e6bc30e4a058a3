#!/usr/bin/env bash
# The spine's failure paths: each failure stops the run with a message that
# names the step and the log, and run-guest reports what the guest did.
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
scratch=$(mktemp -d "$top/build/failure-paths.XXXXXX")
# shellcheck disable=SC2317 # called by ktap_helpers.sh at exit
ktap_cleanup() { rm -rf "$scratch"; }
export DMA32_LOGS=$scratch/logs
run_guest=$top/scripts/run-guest
mapfile -t kernels < <(sed -e '/^#/d' "$top/scripts/kernel-versions")
# shellcheck source=scripts/ktap_helpers.sh
. "$top/scripts/ktap_helpers.sh"

# expect DESCRIPTION WANT_RC STDERR_REGEX COMMAND...: the command exits with
# WANT_RC ('nonzero' for any failure) and its stderr matches the regex
# (an empty regex checks nothing).
expect() {
	local desc=$1 want=$2 regex=$3 rc=0
	shift 3
	"$@" >"$scratch/out" 2>"$scratch/err" </dev/null || rc=$?
	if { [[ $want == nonzero ]] && ((rc != 0)) || [[ $want == "$rc" ]]; } &&
		{ [[ -z $regex ]] || grep -qE -- "$regex" "$scratch/err"; }; then
		ktap_test_pass "$desc"
	else
		ktap_test_fail "$desc" "exit $rc, stderr: $(head -c 300 "$scratch/err")"
	fi
}
# stdout_is DESCRIPTION WANT COMMAND...: the command succeeds printing WANT.
stdout_is() {
	local desc=$1 want=$2 rc=0 got
	shift 2
	got=$("$@" 2>"$scratch/err" </dev/null) || rc=$?
	if ((rc == 0)) && [[ $got == "$want" ]]; then
		ktap_test_pass "$desc"
	else
		ktap_test_fail "$desc" "exit $rc, stdout '$got', stderr: $(head -c 300 "$scratch/err")"
	fi
}

# one_line_error DESCRIPTION STDERR_REGEX COMMAND...: the command fails
# with exactly one line on stderr, matching the regex.
one_line_error() {
	local desc=$1 regex=$2 rc=0 lines
	shift 2
	"$@" >"$scratch/out" 2>"$scratch/err" </dev/null || rc=$?
	lines=$(wc -l <"$scratch/err")
	if ((rc != 0 && lines == 1)) && grep -qE -- "$regex" "$scratch/err"; then
		ktap_test_pass "$desc"
	else
		ktap_test_fail "$desc" "exit $rc, $lines stderr lines: $(head -c 300 "$scratch/err")"
	fi
}

# The cases that boot a guest or build against the guest kernel need make
# test's builds; make check has none, and reports them as SKIP.
build=${DMA32_BUILD:-$top/build}
built=1
for f in "$build/qemu/build/qemu-system-x86_64" "$build/linux/arch/x86/boot/bzImage" \
	"$build/linux/Module.symvers" "$build/guest/initramfs.cpio"; do
	[[ -e $f ]] || built=0
done
# guest_cases DESCRIPTION...: true when the guest and its kernel are built;
# else false, each DESCRIPTION reported as a SKIP.
guest_cases() {
	local d
	((built)) && return 0
	for d in "$@"; do
		ktap_test_skip "$d" "no guest kernel or QEMU built (make check): make test runs it"
	done
	return 1
}

# A kernel patch that does not apply: the build stops and names it.
mkdir -p "$scratch/patches"
cat >"$scratch/patches/0001-does-not-apply.patch" <<'PATCH'
From: Nobody <nobody@example.org>
Subject: [PATCH] a patch against a file that is not there

diff --git a/mm/no-such-file.c b/mm/no-such-file.c
--- a/mm/no-such-file.c
+++ b/mm/no-such-file.c
@@ -1,3 +1,3 @@
 a
-b
+c
 d
PATCH
expect "a kernel patch that does not apply fails the build, naming patch and log" nonzero \
	'kernel patch 0001-does-not-apply.patch does not apply.*log: .*linux-patch-0001-does-not-apply.patch.log' \
	env DMA32_BUILD="$scratch/build" DMA32_PATCH_DIR="$scratch/patches" "$top/scripts/build-kernel"

# A broken driver build: the step and its log are named.
if guest_cases "a broken driver build fails naming the step and the log"; then
	cp -r "$top/driver" "$scratch/driver"
	rm -f "$scratch"/driver/*.o "$scratch"/driver/*.ko
	echo '#error deliberately broken by failure-paths.sh' >>"$scratch/driver/dma32demo-core.c"
	expect "a broken driver build fails naming the step and the log" nonzero \
		"step 'build dma32demo.ko against the plain ${kernels[0]} guest kernel' failed.*driver-plain-build.log" \
		"$top/scripts/build-driver" "$scratch/driver"
fi

# run-guest: results, exit statuses, hangs, panics, bad options.
if guest_cases "run-guest returns the command's output" "run-guest --run false exits non-zero" \
	"run-guest returns the command's exit status" "a hanging guest times out, naming the log" \
	"a guest that does not reach init in --boot-timeout is stopped, naming the log" \
	"the boot watchdog stops it long before --timeout" "a kernel panic fails the run, naming the log"; then
	# The last line without a newline (printf x): init puts the end marker
	# on a line of its own all the same.
	stdout_is "run-guest returns the command's output" $'22\nx' \
		"$run_guest" --log failure-paths-zoneinfo --run 'cat /proc/zoneinfo | grep -c zone; printf x'
	expect "run-guest --run false exits non-zero" 1 '' "$run_guest" --run false
	expect "run-guest returns the command's exit status" 7 '' "$run_guest" --run 'exit 7'
	expect "a hanging guest times out, naming the log" 124 \
		'guest timed out after 5s \(console log: .*\.console\.log\)' \
		"$run_guest" --timeout 5 --run 'sleep 600'
	# QEMU started stopped (-S) never runs the guest, so no machine is fast
	# enough to reach init: without the boot watchdog this run would last the
	# whole --timeout and say so in other words.
	boot_started=$SECONDS
	expect "a guest that does not reach init in --boot-timeout is stopped, naming the log" 124 \
		'the guest did not reach init within 2s \(console log: .*\.console\.log\)' \
		"$run_guest" --boot-timeout 2 --timeout 300 --qemu-args -S --run true
	boot_took=$((SECONDS - boot_started))
	# The watchdog looks once a second, and QEMU gets TERM then up to 5 s: the
	# bound is generous for a loaded host and still far below --timeout.
	if ((boot_took < 60)); then
		ktap_test_pass "the boot watchdog stops it long before --timeout (${boot_took}s of 300s)"
	else
		ktap_test_fail "the boot watchdog stops it long before --timeout" "it took ${boot_took}s"
	fi
	expect "a kernel panic fails the run, naming the log" nonzero \
		'kernel reported a problem \(console log: .*\.console\.log\)' \
		"$run_guest" --timeout 600 --append 'rdinit=/no-such-init init=/no-such-init' --run true
fi
expect "run-guest rejects an unknown option in one line" 1 \
	"^run-guest: error: unknown option '--bogus'" "$run_guest" --bogus
expect "run-guest rejects a bad --mem" 1 "^run-guest: error: --mem 'lots'" \
	"$run_guest" --mem lots --run true
expect "run-guest rejects a missing kernel" 1 "^run-guest: error: kernel /no/such/bzImage not found" \
	"$run_guest" --kernel /no/such/bzImage --run true
expect "run-guest needs something to do" 1 "^run-guest: error: nothing to do" "$run_guest"
expect "run-guest rejects --devices beyond 8" 1 "^run-guest: error: --devices '9' must be a number of devices from 0 to 8" \
	"$run_guest" --devices 9 --run true
expect "run-guest rejects --timeout-scale 0" 1 "^run-guest: error: --timeout-scale '0' must be a whole number from 1 to 9" \
	"$run_guest" --timeout-scale 0 --run true
expect "run-guest rejects --smp 0" 1 "^run-guest: error: --smp '0' must be a number of vCPUs from 1 to 4" \
	"$run_guest" --smp 0 --run true
expect "run-guest rejects a GART aperture the kernel cannot make" 1 \
	"^run-guest: error: --gart-aperture '48' must be 32, 64, 128, 256, 512 or 1024 \\(MiB\\)" \
	"$run_guest" --gart-aperture 48 --run true
expect "build-kernel rejects an unknown option" 1 "^build-kernel: error: unknown option" \
	"$top/scripts/build-kernel" --bogus
expect "build-kernel rejects an unknown kernel version" 1 \
	"^build-kernel: error: unknown kernel version '5.10' \\(known: ${kernels[*]}\\)" \
	"$top/scripts/build-kernel" --version 5.10
expect "build-kernel has a debug kernel for the default version only" 1 \
	"^build-kernel: error: the debug kernel is ${kernels[0]} only, not ${kernels[1]}" \
	"$top/scripts/build-kernel" --debug --version "${kernels[1]}"
expect "run-guest rejects an unknown --kernel-version" 1 \
	"^run-guest: error: unknown kernel version '2.6.14'" "$run_guest" --kernel-version 2.6.14 --run true

# The Makefile and the other commands: one clear line for bad input.
one_line_error "make rejects an unknown target in one line" \
	"No rule to make target 'bogus'" env -u MAKEFLAGS -u MAKELEVEL make -s -C "$top" bogus
mkdir -p "$scratch/tree"
(cd "$top" && git ls-files -z | cpio -0 -pdm --quiet "$scratch/tree")
rm "$scratch/tree/driver/dma32ctl.c"
one_line_error "make names a missing checked-in file in one line" \
	"No rule to make target 'driver/dma32ctl.c', needed by '.*dma32ctl'" \
	env -u MAKEFLAGS -u MAKELEVEL make -s -C "$scratch/tree" -n demo
one_line_error "make rejects an unknown KERNEL= in one line" \
	"KERNEL=2.6.14 is not one of: ${kernels[*]}" env -u MAKEFLAGS -u MAKELEVEL make -s -C "$top" -n all KERNEL=2.6.14
one_line_error "run-tests rejects an unknown --kernel-version in one line" \
	"^run-tests: error: unknown kernel version '4.4'" "$top/scripts/run-tests" --kernel-version 4.4
one_line_error "run-tests rejects a bad --only regex in one line" \
	"^run-tests: error: --only '\[' is not a valid regular expression" "$top/scripts/run-tests" --only '['
one_line_error "run-tests says when --only matches no suite" \
	"^run-tests: error: no test suite matches --only 'no-such-suite'" \
	"$top/scripts/run-tests" --only no-such-suite
one_line_error "fuzz rejects a bad --seconds in one line" \
	"^fuzz: error: --seconds needs a positive number of seconds, got 'soon'" \
	"$top/scripts/fuzz" --seconds soon
one_line_error "fuzz rejects an unknown option in one line" \
	"^fuzz: error: unknown option '--bogus'" "$top/scripts/fuzz" --bogus

# term_stops_qemu DESCRIPTION PATTERN TENTHS CHECK COMMAND...: start
# COMMAND, wait up to TENTHS tenths of a second for a QEMU whose command
# line matches PATTERN, send COMMAND a TERM; pass when that QEMU is gone
# within a minute and the function CHECK (which sees COMMAND's exit status
# in rc and its stderr in $scratch/term.err) says yes.
term_stops_qemu() {
	local desc=$1 pattern=$2 tenths=$3 check=$4 pid started left rc=0
	shift 4
	"$@" >"$scratch/term.out" 2>"$scratch/term.err" &
	pid=$!
	for _ in $(seq "$tenths"); do pgrep -f -- "$pattern" >/dev/null && break; sleep 0.1; done
	started=$(pgrep -f -- "$pattern" >/dev/null && echo yes || echo no)
	kill -TERM "$pid"
	wait "$pid" || rc=$?
	for _ in $(seq 600); do pgrep -f -- "$pattern" >/dev/null || break; sleep 0.1; done
	left=$(pgrep -f -- "$pattern" >/dev/null && echo yes || echo no)
	if [[ $started == yes && $left == no ]] && "$check"; then
		ktap_test_pass "$desc"
	else
		ktap_test_fail "$desc" \
			"QEMU started: $started, exit $rc, QEMU left: $left, stderr: $(head -c 300 "$scratch/term.err")"
		pkill -f -- "$pattern" || true
	fi
}
# shellcheck disable=SC2317 # called through term_stops_qemu
exited_nonzero() { ((rc != 0)); }
# shellcheck disable=SC2317 # called through term_stops_qemu
said_stopped() {
	((rc == 143)) && grep -q '^run-tests: stopped by SIGTERM' "$scratch/term.err" &&
		grep -qE '^[0-9]+ passed, [1-9][0-9]* failed' "$scratch/term.out"
}

# A run-guest stopped by a signal (Ctrl-C, a killed test run) takes its
# QEMU with it. TERM to run-tests in the middle of a boot stops every job
# it started, down to their QEMUs, and says so. (Its guests' consoles are
# under this suite's DMA32_LOGS, which tells them from any other QEMU on
# the host.)
if guest_cases "run-guest killed by SIGTERM stops its QEMU" \
	"run-tests stopped by SIGTERM mid-boot leaves no QEMU and says so"; then
	term_stops_qemu "run-guest killed by SIGTERM stops its QEMU" \
		"failure-paths-sigterm.console.log" 600 exited_nonzero \
		"$run_guest" --log failure-paths-sigterm --timeout 120 --run 'sleep 600'
	term_stops_qemu "run-tests stopped by SIGTERM mid-boot leaves no QEMU and says so" \
		"$DMA32_LOGS/test-" 3000 said_stopped \
		"$top/scripts/run-tests" --only '^guest-image/guest/spine$'
fi

# The bounds. run-tests --deadline stops a boot still running and prints
# its summary with that suite failed; a guest whose QEMU is stopped
# (SIGSTOP: a wedged guest, which the guest's own timeout cannot end) is
# ended by run-batch once its suite has run past its plan timeout plus the
# grace, and the suite fails saying so.
if guest_cases "run-tests --deadline stops a running boot and still prints its summary" \
	"run-batch ends a wedged guest at the suite's timeout plus the grace"; then
	rc=0 started=$SECONDS
	"$top/scripts/run-tests" --only '^guest-image/guest/spine$' --deadline 5 \
		>"$scratch/deadline.out" 2>"$scratch/deadline.err" || rc=$?
	took=$((SECONDS - started))
	((rc == 1 && took < 90)) && grep -qE '^0 passed, [1-9][0-9]* failed' "$scratch/deadline.out" &&
		grep -q 'the --deadline of 5s came' "$scratch/deadline.err"
	ktap_test_status "run-tests --deadline stops a running boot and still prints its summary" $? \
		"exit $rc after ${took}s; stdout: $(tail -n 3 "$scratch/deadline.out" | tr '\n' '|'); stderr: $(head -c 300 "$scratch/deadline.err")"

	echo "wedged driver/tests/guest/long-requests.sh 15" >"$scratch/wedged.plan"
	DMA32_SUITE_GRACE=5 "$top/scripts/run-batch" --plan "$scratch/wedged.plan" --out "$scratch/wedged" \
		--log failure-paths-wedged >"$scratch/wedged.out" 2>&1 &
	batch=$!
	for _ in $(seq 1200); do
		grep -aq '^DMA32-DEMO-SUITE-BEGIN' "$DMA32_LOGS/failure-paths-wedged.result.log" 2>/dev/null && break
		sleep 0.1
	done
	stopped_at=$SECONDS
	# QEMU alone, not the timeout that runs it (whose command line holds
	# QEMU's): run-guest ends a stopped QEMU through timeout's SIGKILL.
	pkill -STOP -f -- '^[^ ]*qemu-system-x86_64 .*failure-paths-wedged.console.log' || true
	rc=0
	wait "$batch" || rc=$?
	took=$((SECONDS - stopped_at))
	pkill -KILL -f -- 'failure-paths-wedged.console.log' || true
	# 15 s of timeout, 5 of grace, 2 s between the watchdog's looks and 5 s
	# from QEMU's TERM to its KILL: 40 s leaves room for a loaded host.
	((rc == 1 && took <= 40)) &&
		grep -q 'ran past its timeout of 15s plus the host.s grace of 5s' "$scratch/wedged/wedged.status"
	ktap_test_status "run-batch ends a wedged guest at the suite's timeout plus the grace" $? \
		"exit $rc ${took}s after SIGSTOP; status: $(tr '\n' '|' <"$scratch/wedged/wedged.status" 2>/dev/null)"
fi

ktap_finished
