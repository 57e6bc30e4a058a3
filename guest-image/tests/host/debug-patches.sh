#!/usr/bin/env bash
# The debug kernel's own patches (guest-image/kernel-debug-patches/) are in
# upstream form: checkpatch --strict clean, like the series they follow.
# Whether they apply is checked by every debug kernel build.
set -euo pipefail
cd "$(dirname "$0")/../../.."
# shellcheck source=scripts/lib.sh
source scripts/lib.sh
kernel_dirs 6.1 debug
checkpatch=$kernel_tree/scripts/checkpatch.pl
[[ -x $checkpatch ]] || die "$checkpatch not found: run 'make debug'"
# shellcheck source=scripts/ktap_helpers.sh
. scripts/ktap_helpers.sh
for p in guest-image/kernel-debug-patches/*.patch; do
	# On standard input: checkpatch reads a file that git tracks as a
	# source file (its -f mode), not as a patch.
	# From build/: with --strict, checkpatch run where a .git is (the
	# project's root) leaves a .checkpatch-camelcase.git.* cache there.
	if out=$(cd "$DMA32_BUILD" && "$checkpatch" --strict --no-tree --terse - <"$DMA32_TOP/$p" 2>&1); then
		ktap_test_pass "checkpatch --strict ${p##*/}"
	else
		ktap_print_lines <<<"$out"
		ktap_test_fail "checkpatch --strict ${p##*/}"
	fi
done
ktap_finished
