#!/usr/bin/env bash
# checkpatch --strict on every source of the driver, its tool and its test
# programs, with no diagnostic at all, by each guest kernel's own
# checkpatch (6.12's knows rules that 6.1's does not): the one in the
# kernel tree that make extracts for the build, else the one that make
# check extracts alone from the same source tarball (build/kernel-tools-V/).
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
# shellcheck source=scripts/lib.sh
source "$top/scripts/lib.sh"

# Run from driver/ with paths relative to it, as a developer would: then
# checkpatch compares each file's own name with its text
# (EMBEDDED_FILENAME), which absolute paths would hide.
mapfile -t module < <(cd "$top" && scripts/driver-sources)
((${#module[@]})) || die "scripts/driver-sources listed nothing"
cd "$top/driver"
sources=("${module[@]#driver/}" dma32ctl.c dma32demo-user.h tests/*.[ch] uapi/*.h)
# shellcheck source=scripts/ktap_helpers.sh
. "$top/scripts/ktap_helpers.sh"
for v in "${DMA32_KERNELS[@]}"; do
	kernel_dirs "$v" plain
	checkpatch=''
	for c in "$kernel_tree/scripts/checkpatch.pl" "$DMA32_BUILD/kernel-tools-$v/scripts/checkpatch.pl"; do
		if [[ -x $c ]]; then
			checkpatch=$c
			break
		fi
	done
	# One run over every file (a run per file costs a perl start-up
	# each). --terse prints nothing for a clean file, and prefixes each
	# diagnostic with its file; a run that found any ends with a total
	# line and exit status 1, anything else is checkpatch failing.
	out='' rc=0
	[[ -z $checkpatch ]] ||
		out=$("$checkpatch" --strict --no-tree --terse -f "${sources[@]}" 2>&1) || rc=$?
	for f in "${sources[@]}"; do
		desc="checkpatch --strict ($v) driver/$f"
		# Its lines only: "uapi/dma32demo.h:" is not "dma32demo.h:"
		mine=$(awk -v f="$f:" 'index($0, f) == 1' <<<"$out")
		if [[ -z $checkpatch ]]; then
			ktap_test_fail "$desc" "no checkpatch.pl of linux-source-$v: run make check or make kernels"
		elif ! { { ((rc == 0)) && [[ -z $out ]]; } ||
			{ ((rc == 1)) && grep -q '^total: ' <<<"$out"; }; }; then
			head -n 5 <<<"$out" | ktap_print_lines
			ktap_test_fail "$desc" "checkpatch.pl failed (exit $rc)"
		elif [[ -n $mine ]]; then
			ktap_print_lines <<<"$mine"
			ktap_test_fail "$desc"
		else
			ktap_test_pass "$desc"
		fi
	done
done
ktap_finished
