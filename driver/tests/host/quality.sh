#!/usr/bin/env bash
# The driver's code quality, as kernel maintainers check it: checkpatch
# --strict on every source, sparse (C=2) and W=1 against the guest kernel,
# with no diagnostic at all.
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
kernel=${DMA32_BUILD:-$top/build}/linux
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

sources=("$top"/driver/dma32demo.c "$top"/driver/dma32ctl.c "$top"/driver/dma32demo-user.h \
	"$top"/driver/tests/*.[ch] "$top"/driver/uapi/*.h)
echo "KTAP version 1"
echo "1..$((${#sources[@]} + 1))"
n=0
for f in "${sources[@]}"; do
	n=$((n + 1))
	if out=$("$kernel/scripts/checkpatch.pl" --strict --no-tree --terse -f "$f" 2>&1) &&
		! grep -qE '(ERROR|WARNING|CHECK):' <<<"$out"; then
		echo "ok $n checkpatch --strict ${f#"$top"/}"
	else
		echo "not ok $n checkpatch --strict ${f#"$top"/}"
		while IFS= read -r line; do echo "# $line"; done <<<"$out"
	fi
done

# Build a copy so that the in-tree objects (and make's view of them) stay put.
cp -r "$top/driver" "$scratch/driver"
rm -f "$scratch"/driver/*.o "$scratch"/driver/*.ko
n=$((n + 1))
if out=$(make -s -C "$kernel" ARCH=x86_64 CC="ccache gcc" M="$scratch/driver" \
	DMA32_DEMO_TOP="$top" W=1 C=2 modules 2>&1) &&
	[[ -z $(grep -vE '^\s*(CC|LD|MODPOST|CHECK)\b' <<<"$out" || true) ]]; then
	echo "ok $n sparse (C=2) and W=1 build without a diagnostic"
else
	echo "not ok $n sparse (C=2) and W=1 build without a diagnostic"
	while IFS= read -r line; do echo "# $line"; done <<<"$out"
fi
