#!/usr/bin/env bash
# Every shell script in the repository is shellcheck-clean (one test each).
set -euo pipefail
cd "$(dirname "$0")/../../.."
mapfile -t scripts < <(git ls-files | while read -r f; do
	[[ -f $f ]] && head -n1 "$f" | grep -qE '^#!.*(ba)?sh' && echo "$f"
done)
echo "KTAP version 1"
echo "1..${#scripts[@]}"
n=0
for f in "${scripts[@]}"; do
	n=$((n + 1))
	if out=$(shellcheck -x "$f" 2>&1); then
		echo "ok $n shellcheck $f"
	else
		echo "not ok $n shellcheck $f"
		while IFS= read -r line; do echo "# $line"; done <<<"$out"
	fi
done
