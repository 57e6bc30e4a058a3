#!/usr/bin/env bash
# setup-host on the APT layouts a Debian 12 host may have, against fixture
# APT trees (no real apt-get, no network): which deb-src entries
# apt-deb-src writes, or that it writes none, and what it says; setup-host's
# update decision and its one-line apt failure; and lib.sh's ERR trap.
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
mkdir -p "$top/build"
scratch=$(mktemp -d "$top/build/apt-sources.XXXXXX")
# shellcheck disable=SC2317 # called by ktap_helpers.sh at exit
ktap_cleanup() { rm -rf "$scratch"; }
deb_src=$top/scripts/apt-deb-src
own=etc/apt/sources.list.d/dma32-demo-src.sources
key=/usr/share/keyrings/debian-archive-keyring.gpg

# shellcheck source=scripts/ktap_helpers.sh
. "$top/scripts/ktap_helpers.sh"
# result OK DESCRIPTION [DIAGNOSTIC]: one KTAP result (OK is 1 or 0).
result() {
	if (($1)); then
		ktap_test_pass "$2"
	else
		ktap_test_fail "$2" "${3:-}"
	fi
}

# fixture NAME: a fresh APT tree; files are written by the caller.
fixture() {
	root=$scratch/$1
	mkdir -p "$root/etc/apt/sources.list.d"
}

# written ROOT: the entries apt-deb-src wrote, as 'TYPE URI SUITE COMPS KEY'.
written() {
	[[ -f $1/$own ]] || return 0
	awk -f "$top/scripts/apt-sources.awk" -v format=deb822 "$1/$own"
}

# expect_sources DESCRIPTION WANT_ENTRIES MESSAGE_REGEX: run apt-deb-src on
# $root; it succeeds, writes exactly WANT_ENTRIES (empty: writes no file)
# and prints a line matching MESSAGE_REGEX (empty: prints nothing).
expect_sources() {
	local desc=$1 want=$2 regex=$3 rc=0 out got
	out=$("$deb_src" --root "$root" 2>&1) || rc=$?
	got=$(written "$root")
	if ((rc == 0)) && [[ $got == "$want" ]] &&
		{ [[ -z $regex && -z $out ]] || { [[ -n $regex ]] && grep -qE -- "$regex" <<<"$out"; }; }; then
		result 1 "$desc"
	else
		result 0 "$desc" "exit $rc, said '$out', wrote '${got//$'\n'/; }'"
	fi
}

stock_deb822() {
	cat >"$root/etc/apt/sources.list.d/debian.sources" <<-EOF
		Types: deb
		# http://snapshot.debian.org/archive/debian/20250520T000000Z
		URIs: http://deb.debian.org/debian
		Suites: bookworm bookworm-updates
		Components: main
		Signed-By: $key

		Types: deb
		URIs: http://deb.debian.org/debian-security
		Suites: bookworm-security
		Components: main
		Signed-By: $key
	EOF
}
stock_wanted="deb-src http://deb.debian.org/debian bookworm main $key
deb-src http://deb.debian.org/debian bookworm-updates main $key
deb-src http://deb.debian.org/debian-security bookworm-security main $key"

# 1. deb822 only, as Debian 12's installer and images lay it out, with a
# third-party repository beside it.
fixture deb822-only
stock_deb822
cat >"$root/etc/apt/sources.list.d/nodesource.sources" <<-EOF
	Types: deb
	URIs: https://deb.nodesource.com/node_20.x
	Suites: nodistro
	Components: main
EOF
expect_sources "deb822 sources only: the deb-src twin of each Debian entry, none for others" \
	"$stock_wanted" "^==> wrote .*dma32-demo-src.sources: deb-src for http://deb.debian.org/debian bookworm, "
expect_sources "a second run changes nothing and says nothing" "$stock_wanted" ""

# 2. One-line sources.list only, with options and a trailing comment.
fixture oneline-only
cat >"$root/etc/apt/sources.list" <<-EOF
	# deb cdrom:[Debian GNU/Linux 12.5.0]/ bookworm main
	deb [arch=amd64 signed-by=$key] http://deb.debian.org/debian bookworm main contrib # the release
	deb http://security.debian.org/debian-security bookworm-security main
EOF
expect_sources "one-line sources.list only: options, comments and keys carried over" \
	"deb-src http://deb.debian.org/debian bookworm main,contrib $key
deb-src http://security.debian.org/debian-security bookworm-security main -" "^==> wrote "

# 3. Both formats, naming the same suite twice: one entry each.
fixture both
stock_deb822
echo "deb http://deb.debian.org/debian bookworm main" >"$root/etc/apt/sources.list"
echo "deb http://deb.debian.org/debian bookworm-backports main" >"$root/etc/apt/sources.list.d/backports.list"
expect_sources "both formats: each Debian suite once (sources.list's first, as APT reads it); not backports" \
	"deb-src http://deb.debian.org/debian bookworm main -
${stock_wanted#*$'\n'}" "^==> wrote "

# 4. deb-src already there, deb822 style.
fixture deb-src-deb822
stock_deb822
sed -i 's/^Types: deb$/Types: deb deb-src/' "$root/etc/apt/sources.list.d/debian.sources"
expect_sources "deb-src already in the deb822 stanzas: nothing written, nothing said" "" ""

# 5. deb-src already there, one-line style.
fixture deb-src-oneline
stock_deb822
cat >"$root/etc/apt/sources.list" <<-EOF
	deb-src http://deb.debian.org/debian bookworm main
	deb-src http://deb.debian.org/debian bookworm-updates main
	deb-src http://deb.debian.org/debian-security bookworm-security main
EOF
expect_sources "deb-src already in sources.list: nothing written, nothing said" "" ""

# 6. A mirror other than the default, with a trailing slash.
fixture other-mirror
cat >"$root/etc/apt/sources.list.d/debian.sources" <<-EOF
	Types: deb
	URIs: http://ftp.de.debian.org/debian/
	Suites: bookworm
	Components: main non-free-firmware
EOF
expect_sources "another mirror: the deb-src comes from the same mirror" \
	"deb-src http://ftp.de.debian.org/debian/ bookworm main,non-free-firmware -" "ftp.de.debian.org"

# 7. Several URIs and suites in one stanza, field names in any case,
# a continuation line.
fixture several
cat >"$root/etc/apt/sources.list.d/debian.sources" <<-EOF
	types: deb
	uris: http://mirror-a.example/debian
	  http://mirror-b.example/debian
	suites: bookworm bookworm-updates
	components: main
EOF
expect_sources "several URIs and suites in one stanza: one deb-src per URI and suite" \
	"deb-src http://mirror-a.example/debian bookworm main -
deb-src http://mirror-a.example/debian bookworm-updates main -
deb-src http://mirror-b.example/debian bookworm main -
deb-src http://mirror-b.example/debian bookworm-updates main -" "mirror-b"

# 8. Commented-out and disabled entries count for nothing.
fixture disabled
stock_deb822
cat >"$root/etc/apt/sources.list.d/src.sources" <<-EOF
	Types: deb-src
	URIs: http://deb.debian.org/debian
	Suites: bookworm bookworm-updates
	Components: main
	Enabled: no
EOF
cat >"$root/etc/apt/sources.list" <<-EOF
	#deb-src http://deb.debian.org/debian bookworm main
	# deb http://old.example/debian bookworm main
EOF
expect_sources "disabled and commented-out deb-src entries are not counted as present" \
	"$stock_wanted" "^==> wrote "

# 9. Once the host's own sources gain deb-src, our file goes away.
fixture stale
stock_deb822
"$deb_src" --root "$root" >/dev/null 2>&1 || true
sed -i 's/^Types: deb$/Types: deb deb-src/' "$root/etc/apt/sources.list.d/debian.sources"
expect_sources "our file is removed once the host's sources have deb-src themselves" "" \
	"^==> removed .*dma32-demo-src.sources"

# 10. Sources, but none of Debian bookworm's: the default archive.
fixture foreign-only
echo "deb http://example.org/repo stable-ish main" >"$root/etc/apt/sources.list"
expect_sources "no Debian bookworm entry at all: deb-src from the default archive" \
	"deb-src http://deb.debian.org/debian bookworm main $key" "deb.debian.org/debian bookworm"

# 11. No source at all: a one-line error, nothing written.
fixture empty
rc=0
out=$("$deb_src" --root "$root" 2>&1) || rc=$?
ok=0
[[ $rc == 1 && $(wc -l <<<"$out") == 1 && $out == *"no enabled APT source found"* && ! -e $root/$own ]] && ok=1
result "$ok" "no APT source at all: one line, exit 1, nothing written" "exit $rc, said '$out'"

# setup-host with stand-ins for apt-get, apt-cache and dpkg-query.
stubs=$scratch/stubs
mkdir -p "$stubs"
cat >"$stubs/apt-get" <<-'EOF'
	#!/bin/sh
	echo "apt-get $*" >>"$STUB_CALLS"
	[ "$1" = update ] && [ -n "${STUB_UPDATE_FAILS:-}" ] && { echo "E: Failed to fetch http://bad.mirror/"; exit 100; }
	exit 0
EOF
cat >"$stubs/apt-cache" <<-'EOF'
	#!/bin/sh
	# showsrc prints nothing when the lists were never fetched.
	[ -n "${STUB_LISTS_EMPTY:-}" ] || echo "Package: qemu"
EOF
cat >"$stubs/dpkg-query" <<-'EOF'
	#!/bin/sh
	case "$*" in *Status*) printf 'ii ' ;; *) printf '1.0' ;; esac
EOF
chmod +x "$stubs"/*

# setup_host WITH_SRC ENV...: run setup-host on the stock deb822 fixture
# (with deb-src already in it if WITH_SRC is 1) with the stand-ins; its
# output in $out, exit status in $rc, apt calls in $calls.
setup_runs=0
setup_host() {
	setup_runs=$((setup_runs + 1))
	fixture "setup-$setup_runs"
	stock_deb822
	(($1)) && sed -i 's/^Types: deb$/Types: deb deb-src/' "$root/etc/apt/sources.list.d/debian.sources"
	shift
	rc=0
	out=$(env PATH="$stubs:$PATH" STUB_CALLS="$root/calls" DMA32_APT_ROOT="$root" \
		DMA32_BUILD="$root/build" "$@" "$top/scripts/setup-host" 2>&1) || rc=$?
	calls=$(cat "$root/calls" 2>/dev/null || true)
}
if ((EUID == 0)); then
	setup_host 0
	ok=0
	[[ $rc == 0 && -f $root/$own && $calls == "apt-get update -q" ]] && ok=1
	result "$ok" "setup-host on a stock deb822 host: writes deb-src, updates, installs nothing" \
		"exit $rc, calls '$calls', said '$out'"

	setup_host 1
	ok=0
	[[ $rc == 0 && ! -e $root/$own && -z $calls ]] && ok=1
	result "$ok" "all in place (deb-src, lists, packages): setup-host calls no apt-get" \
		"exit $rc, calls '$calls', said '$out'"

	setup_host 1 STUB_LISTS_EMPTY=1
	ok=0
	[[ $rc == 0 && ! -e $root/$own && $calls == "apt-get update -q" ]] && ok=1
	result "$ok" "empty package lists (apt-get update never ran): setup-host updates" \
		"exit $rc, calls '$calls', said '$out'"

	setup_host 0 STUB_UPDATE_FAILS=1
	last=$(tail -n 1 <<<"$out")
	ok=0
	[[ $rc == 1 && $last =~ ^setup-host:\ error:\ \'apt-get\ update\ -q\'\ failed\;\ see\ .*apt-update.log\ \(E:\ Failed\ to\ fetch ]] && ok=1
	result "$ok" "apt-get update fails: one line naming the command and its log" \
		"exit $rc, said '$out'"
else
	for d in "setup-host on a stock deb822 host" "all in place" "empty package lists" "apt-get update fails"; do
		ktap_test_skip "$d" "needs root"
	done
fi

# lib.sh's ERR trap: an unhandled failure names the script, the line and
# the command; handled failures and die say nothing more.
cat >"$scratch/sourced" <<-EOF
	#!/usr/bin/env bash
	set -euo pipefail
	source "$top/scripts/lib.sh"
	case \${1:-} in
	handled) false || true; if false; then :; fi; ! false; exit 0 ;;
	die) die "a clear reason" ;;
	function) f() { local x=1; grep -q nothing /dev/null; }; f ;;
	substitution) x=\$(exit 3); echo "\$x" ;;
	esac
	test -e /no/such/file
EOF
chmod +x "$scratch/sourced"
# trap_says DESCRIPTION ARG WANT_RC WANT_STDERR: exact stderr and status.
trap_says() {
	local rc=0 err
	err=$("$scratch/sourced" "$2" 2>&1 >/dev/null) || rc=$?
	ok=0
	[[ $rc == "$3" && $err == "$4" ]] && ok=1
	result "$ok" "$1" "exit $rc, stderr '$err'"
}
trap_says "ERR trap: a failed command names script, line and command, status kept" "" 1 \
	"sourced: error: line 10: 'test -e /no/such/file' failed (exit 1)"
trap_says "ERR trap: failures the script handles itself are silent" handled 0 ""
trap_says "ERR trap: die prints its own line only" die 1 "sourced: error: a clear reason"
trap_says "ERR trap: a failure inside a function names the function's line" function 1 \
	"sourced: error: line 7: 'grep -q nothing /dev/null' failed (exit 1)"
trap_says "ERR trap: a failed command substitution is reported once, with its status" substitution 3 \
	"sourced: error: line 8: 'x=\$(exit 3)' failed (exit 3)"

ktap_finished
