#!/usr/bin/env bash
# Every shell script in the repository is shellcheck-clean (one test each).
set -euo pipefail
cd "$(dirname "$0")/../../.."
mapfile -t scripts < <(git ls-files | while read -r f; do
	[[ -f $f ]] && head -n1 "$f" | grep -qE '^#!.*(ba)?sh' && echo "$f"
done)
# shellcheck source=scripts/ktap_helpers.sh
. scripts/ktap_helpers.sh
for f in "${scripts[@]}"; do
	if out=$(shellcheck -x "$f" 2>&1); then
		ktap_test_pass "shellcheck $f"
	else
		ktap_print_lines <<<"$out"
		ktap_test_fail "shellcheck $f"
	fi
done
ktap_finished
