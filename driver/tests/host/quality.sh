#!/usr/bin/env bash
# The driver's code quality, as kernel maintainers check it: sparse (C=2)
# and W=1 against each guest kernel (6.1 and 6.12), with no diagnostic at
# all; and the ABI document against the statistics. (checkpatch --strict:
# checkpatch.sh, which make check runs too.)
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
build=${DMA32_BUILD:-$top/build}
scratch=$(mktemp -d)
# shellcheck disable=SC2317 # called by ktap_helpers.sh at exit
ktap_cleanup() { rm -rf "$scratch"; }

# shellcheck source=scripts/ktap_helpers.sh
. "$top/scripts/ktap_helpers.sh"
# Build a copy so that the in-tree objects (and make's view of them) stay put.
for version in 6.1 6.12; do
	tree=$build/linux
	[[ $version == 6.1 ]] || tree=$build/linux-$version
	desc="sparse (C=2) and W=1 build against the $version guest kernel without a diagnostic"
	if [[ ! -f $tree/Module.symvers ]]; then
		ktap_test_fail "$desc" "${tree#"$top"/} is not built: run 'make kernels'"
		continue
	fi
	rm -rf "$scratch/driver"
	cp -r "$top/driver" "$scratch/driver"
	rm -f "$scratch"/driver/*.o "$scratch"/driver/*.ko
	if out=$(make -s -C "$tree" ARCH=x86_64 CC="ccache gcc" M="$scratch/driver" \
		DMA32_DEMO_TOP="$top" W=1 C=2 modules 2>&1) &&
		[[ -z $(grep -vE '^\s*(CC|LD|MODPOST|CHECK)\b' <<<"$out" || true) ]]; then
		ktap_test_pass "$desc"
	else
		ktap_print_lines <<<"$out"
		ktap_test_fail "$desc"
	fi
done
# The statistics are listed once, in uapi/dma32demo-stats.h; the sysfs
# files it makes must be the ones the ABI document describes.
abi=$top/driver/Documentation/ABI/testing/sysfs-driver-dma32demo
listed=$(sed -n 's/^DMA32DEMO_STAT(\([a-z0-9_]*\),.*/\1/p' "$top/driver/uapi/dma32demo-stats.h" | sort)
documented=$(sed -n 's|^What:.*/stats/\([a-z0-9_]*\)$|\1|p' "$abi" | sort)
if [[ -n $listed && $listed == "$documented" ]]; then
	ktap_test_pass "Documentation/ABI describes every statistic of uapi/dma32demo-stats.h, and only those"
else
	diff <(echo "$listed") <(echo "$documented") | ktap_print_lines || true
	ktap_test_fail "Documentation/ABI describes every statistic of uapi/dma32demo-stats.h, and only those"
fi
ktap_finished
