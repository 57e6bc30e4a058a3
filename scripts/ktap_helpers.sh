# shellcheck shell=sh
# KTAP output for the project's shell suites, after the kernel's
# tools/testing/selftests/kselftest/ktap_helpers.sh, with its function
# names and their meaning: ktap_set_plan declares the number of tests,
# ktap_test_result runs a command, ktap_finished exits non-zero when a test
# failed or the plan was not met. One difference: results are held until
# ktap_finished, which then prints the header, the plan and the results
# numbered in order, so a result reported from a subshell ($(...), a
# pipeline) is still counted. POSIX sh: bash on the host and busybox sh in
# the guest both source it.
#
# A failure's reasons go on '#' lines directly BEFORE its 'not ok' line, as
# Documentation/dev-tools/ktap.rst says ("diagnostic lines regarding a test
# are directly before the test result line for that test") and as the
# kernel's parser (kunit.py parse) reads them: it gives a diagnostic to the
# result that follows it. After a '#' on the result line KTAP expects a
# directive (SKIP, TODO), so reasons never go there.
#
#   ktap_set_plan N                        the suite runs N tests: printed
#                                          as the plan, and ktap_finished
#                                          fails when another number ran
#                                          (without it, the plan is the
#                                          number of results)
#   ktap_test_pass DESCRIPTION
#   ktap_test_fail DESCRIPTION [REASON]    REASON: a diagnostic line before
#                                          the result (kselftest's takes
#                                          none)
#   ktap_test_skip DESCRIPTION REASON
#   ktap_test_result DESCRIPTION CMD...    run CMD (in this shell: what it
#                                          sets stays set); pass when it
#                                          succeeds, else fail with what
#                                          it printed as diagnostics
#   ktap_test_status DESCRIPTION STATUS [REASON]
#                                          pass when STATUS (a command's
#                                          $?) is 0, else fail with REASON;
#                                          for a check whose diagnostics
#                                          are built from several commands
#                                          (kselftest has no such helper).
#                                          Pass a saved status (rc=$?) when
#                                          DESCRIPTION or REASON holds a
#                                          $(...): bash expands $? after it
#   ktap_print_msg TEXT...                 one diagnostic line
#   ktap_print_lines < FILE                each line as a diagnostic
#   ktap_finished                          print everything; exit 1 when a
#                                          test failed or the declared plan
#                                          was not met, else 0
#
# A suite that ends before ktap_finished (set -e, an unset variable, a
# failed arithmetic expansion, SIGTERM from its timeout) still prints every
# result it held, then one failed result for the early end, and keeps its
# non-zero exit status. A suite that needs clean-up at exit defines a
# function ktap_cleanup instead of setting its own EXIT trap (which would
# replace this one). Nothing is left in $TMPDIR unless the suite is killed
# with SIGKILL (the guest's run-suites removes what such a suite left).
# shellcheck disable=SC2317 # the functions are called by the suites

KTAP_RESULTS=$(mktemp "${TMPDIR:-/tmp}/ktap.XXXXXX") || {
	echo "ktap_helpers: cannot create a results file in ${TMPDIR:-/tmp}" >&2
	exit 1
}

# One line of a result or diagnostic, newlines in it folded into spaces so
# that a multi-line reason cannot break the KTAP stream.
ktap_line_() { printf '%s\n' "$(printf '%s' "$*" | tr '\n' ' ')" >>"$KTAP_RESULTS"; }

ktap_test_pass() { ktap_line_ "ok @ $1"; }
ktap_test_fail() {
	[ -z "${2:-}" ] || ktap_line_ "# $2"
	ktap_line_ "not ok @ $1"
}
ktap_test_skip() { ktap_line_ "ok @ $1 # SKIP $2"; }
ktap_test_result() {
	ktap_desc_=$1
	shift
	ktap_out_=$(mktemp "${TMPDIR:-/tmp}/ktap-out.XXXXXX") || return 1
	if "$@" >"$ktap_out_" 2>&1; then
		ktap_test_pass "$ktap_desc_"
	else
		ktap_print_lines <"$ktap_out_"
		ktap_test_fail "$ktap_desc_"
	fi
	rm -f "$ktap_out_"
}
ktap_test_status() {
	if [ "$2" = 0 ]; then
		ktap_test_pass "$1"
	else
		ktap_test_fail "$1" "${3:-}"
	fi
}
ktap_print_msg() { ktap_line_ "# $*"; }
ktap_print_lines() { sed 's/^/# /' >>"$KTAP_RESULTS"; }

ktap_set_plan() { KTAP_PLAN=$1; }

ktap_count_() { grep -cE '^(not )?ok @ ' "$KTAP_RESULTS" || true; }
ktap_print_() {
	echo "KTAP version 1"
	echo "1..${KTAP_PLAN:-$(ktap_count_)}"
	awk '/^(not )?ok @ / { sub(/@/, ++n) } { print }' "$KTAP_RESULTS"
	rm -f "$KTAP_RESULTS"
}

ktap_finished() {
	ktap_failed_=$(grep -c '^not ok @ ' "$KTAP_RESULTS" || true)
	ktap_ran_=$(ktap_count_)
	if [ -n "${KTAP_PLAN:-}" ] && [ "$ktap_ran_" != "$KTAP_PLAN" ]; then
		ktap_print_msg "the plan declared $KTAP_PLAN tests, $ktap_ran_ ran"
		ktap_failed_=$((ktap_failed_ + 1))
	fi
	ktap_print_
	[ "$ktap_failed_" = 0 ] || exit 1
	exit 0
}

# The EXIT trap: after ktap_finished the results file is gone and only the
# clean-up runs.
ktap_exit_() {
	ktap_status_=$?
	if [ -f "$KTAP_RESULTS" ]; then
		[ "$ktap_status_" != 0 ] || ktap_status_=1
		case $ktap_status_ in
		143) ktap_why_="stopped by SIGTERM (its timeout ran out, or the run was stopped)" ;;
		*) ktap_why_="exit status $ktap_status_" ;;
		esac
		ktap_test_fail "the suite ended before ktap_finished" "$ktap_why_"
		ktap_print_
	fi
	if command -v ktap_cleanup >/dev/null 2>&1; then
		ktap_cleanup
	fi
	exit "$ktap_status_"
}
trap ktap_exit_ EXIT
# SIGTERM (run-suites' timeout, a stopped test run) ends the suite through
# the EXIT trap, which prints what it held.
trap 'exit 143' TERM
