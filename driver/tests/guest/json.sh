#!/bin/sh
# dma32ctl --json with strings that need escaping: a device path and a
# counter path holding a double quote, a backslash and a tab come out as
# JSON strings ("\"", "\\", "\u0009"), not as text that ends the string
# early; bytes that are not UTF-8 come out as "\ufffd".
# shellcheck disable=SC2317 # ktap_cleanup is called by ktap_helpers.sh
# shellcheck source=scripts/ktap_helpers.sh
. /tests/lib/ktap_helpers.sh

tab=$(printf '\t')
odd="/tmp/dma32 \"odd\\name${tab}"
want='/tmp/dma32 \"odd\\name\u0009'
ktap_cleanup() { rm -f "$odd" "$odd.counter"; }
# has TEXT STRING: TEXT holds STRING, as it is
has() { printf '%s\n' "$1" | grep -qF -- "$2"; }
ln -s /dev/dma32demo0 "$odd"
echo 42 >"$odd.counter"

info=$(dma32ctl --device "$odd" info --json 2>&1)
ktap_test_result "info --json: the device path escaped" has "$info" "\"device\":\"$want\","

run=$(dma32ctl --device "$odd" run --strategy coherent --op fill --size 4K --count 1 \
	--counter "$odd.counter" --json 2>&1)
ktap_test_result "run --json: the device path escaped" has "$run" "\"device\":\"$want\","
ktap_test_result "run --json: a counter's path escaped as its key" \
	has "$run" "\"$want.counter\":{\"before\":42,\"after\":42}"
# one_line_without TEXT STRING: TEXT is one line and lacks STRING
one_line_without() { [ "$(printf '%s\n' "$1" | wc -l)" = 1 ] && ! has "$1" "$2"; }
ktap_test_result "run --json: one line, and the raw path nowhere in it" one_line_without "$run" "\"odd\\name"

# A path is bytes: one that is not UTF-8 (a lone 0xff, a cut-off 0xc3)
# comes out as U+FFFD, escaped, so that the line stays JSON; UTF-8 stays
bytes="/tmp/dma32-$(printf '\377')x-$(printf '\303\251')-$(printf '\303')"
ln -s /dev/dma32demo0 "$bytes"
info=$(dma32ctl --device "$bytes" info --json 2>&1)
rm -f "$bytes"
ktap_test_result "info --json: bytes that are not UTF-8 become \\ufffd, UTF-8 stays" \
	has "$info" "\"device\":\"/tmp/dma32-\\ufffdx-$(printf '\303\251')-\\ufffd\","
ktap_finished
