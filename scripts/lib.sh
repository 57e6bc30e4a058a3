# shellcheck shell=bash
# Helpers shared by the scripts in this folder: source it, don't run it.

DMA32_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DMA32_BUILD=${DMA32_BUILD:-$DMA32_TOP/build}
DMA32_LOGS=${DMA32_LOGS:-$DMA32_BUILD/logs}
# Absolute, so that what runs in another directory (make -C, a kernel's
# usr/ step using a TMPDIR under the logs) finds them
[[ $DMA32_BUILD == /* ]] || DMA32_BUILD=$PWD/$DMA32_BUILD
[[ $DMA32_LOGS == /* ]] || DMA32_LOGS=$PWD/$DMA32_LOGS
export DMA32_TOP DMA32_BUILD DMA32_LOGS

# ccache: the same object from another clone (CI's, say) is a hit, so a
# rebuild from a fresh clone on a machine that built before is quick.
# Depend mode: on a miss ccache takes the compiler's own -MD/-MMD output
# instead of running the preprocessor first to hash its result, which cost
# about a tenth of a cold build (kernel/sched/core.c with Debian's
# configuration: 9.9 and 10.1 s, against 8.8 and 9.1 s). It gives up only
# the preprocessed-mode hits, 3.4% of this machine's ccache hits; the rest
# were direct-mode hits, which it keeps. Without -MD it is ccache's usual
# mode.
export CCACHE_BASEDIR=$DMA32_TOP CCACHE_NOHASHDIR=1 CCACHE_DEPEND=1

# Every failure that ends a script says where: the script, the line and the
# command, on stderr (errtrace carries the trap into functions). Failures a
# script handles itself (if, while, ||, &&, !) do not fire it, nor does die,
# which says why on its own; a failure inside a subshell or command
# substitution is reported once, by the shell that it ends.
set -o errtrace
dma32_on_error() {
	local rc=$1 line=$2 cmd=$3
	((BASH_SUBSHELL == 0)) || return "$rc"
	printf '%s: error: line %s: '\''%s'\'' failed (exit %s)\n' \
		"${BASH_SOURCE[1]##*/}" "$line" "$cmd" "$rc" >&2
	return "$rc"
}
trap 'dma32_on_error $? $LINENO "$BASH_COMMAND"' ERR

# die MESSAGE: one clear line on stderr, then exit 1.
die() {
	printf '%s: error: %s\n' "${0##*/}" "$*" >&2
	exit 1
}

# step NAME LOG COMMAND...: run a long step with its output in LOG, print
# one progress line with the elapsed time, and on failure name the step
# and the log and show its tail.
step() {
	local name=$1 log=$2 start rc=0
	shift 2
	mkdir -p "$(dirname "$log")"
	start=$(date +%s)
	printf '==> %s (log: %s)\n' "$name" "${log#"$DMA32_TOP"/}"
	"$@" >"$log" 2>&1 || rc=$?
	if ((rc != 0)); then
		tail -n 15 "$log" | sed 's/^/    | /' >&2
		die "step '$name' failed (exit $rc); full log: $log"
	fi
	printf '    %s done in %ss\n' "$name" "$(($(date +%s) - start))"
}

# How long a guest may run its command unless told otherwise (run-guest
# --timeout, a suite's '# run-guest: --timeout N').
# shellcheck disable=SC2034 # read by run-guest and run-tests
DMA32_GUEST_TIMEOUT=300

# kernel_source VERSION: the path of linux-source-VERSION, extracted
# unpatched from Debian's tarball once (under a lock) into
# build/sources/, wherever DMA32_BUILD points, so that every tree made from
# it (the plain and the debug kernel, a test's scratch build) decodes the
# 130 MB of xz once. Trees are hard-linked copies of it (cp -al): patch and
# kbuild replace a file, never write into it, so a copy cannot change it.
kernel_source() {
	local version=$1 sources=$DMA32_TOP/build/sources tarball dir
	tarball=/usr/src/linux-source-$version.tar.xz
	dir=$sources/linux-source-$version
	[[ -r $tarball ]] || die "$tarball missing: run scripts/setup-host first"
	mkdir -p "$sources"
	(
		flock 9
		[[ -f $dir/.extracted ]] && exit 0
		rm -rf "$dir" "$dir.tmp"
		mkdir -p "$dir.tmp"
		tar -xf "$tarball" -C "$dir.tmp"
		mv "$dir.tmp/linux-source-$version" "$dir"
		rmdir "$dir.tmp"
		touch "$dir/.extracted"
	) 9>"$sources/.linux-source-$version.lock" || die "cannot extract $tarball into $sources"
	echo "$dir"
}

# kernel_problems FILE: the lines of a console log that report a kernel
# problem (what kernel CI greps for), each as LINE_NUMBER:TEXT. RCU's stall
# warnings ("rcu: INFO: rcu_preempt self-detected stall on CPU") and the
# hung-task detector's ("INFO: task insmod:123 blocked for more than 60
# seconds.") carry none of the other words, nor does a BUG_ON's "kernel BUG
# at mm/slub.c:123!"; DMA-API debug announces itself at boot with its
# prefix, which is no error.
kernel_problems() {
	local crash='BUG:|WARNING:|Oops|general protection fault|Kernel panic|KASAN:|UBSAN:|DMA-API:|unreferenced object|---\[ end trace|swiotlb buffer is full|rcu: INFO: .*detected stall|INFO: task .* blocked for more than|kernel BUG at'
	local benign='DMA-API: (preallocated [0-9]+ debug entries|debugging enabled by kernel config)'
	grep -naE -- "$crash" "$1" | grep -vE -- "$benign" || true
}

# debug_guest_args: the run-guest options that boot the debug kernel, into
# the array debug_guest, or die if it is not built.
# It boots with 3 GiB (q35: 2 GiB below 4 GiB, 1 above, so every 32-bit path
# still has memory beyond its reach) unless a later --mem asks for more:
# each of init's two kmemleak scans reads the struct page of every page in
# use, so it grows with RAM: about 21 s at 3 GiB and 25 s at 6 GiB (TCG,
# two guests at once on this kind of machine; 2.3 and 3.4 times that
# without guest-image/kernel-debug-patches/, which keep kmemleak from
# reading the KASAN shadow, the memmap and the swiotlb pool).
# Its timeouts are doubled: with KASAN, lockdep and those scans a suite
# runs several times as long as on the plain kernel (2 jobs on 2 cores,
# a cold CI run: the fault suite 24 s plain, more than its 240 s debug).
debug_timeout_scale=2
# shellcheck disable=SC2034 # read by run-tests
debug_mem=3G
debug_guest_args() {
	kernel_dirs "$DMA32_DEFAULT_KERNEL" debug
	# shellcheck disable=SC2034 # read by the caller
	debug_guest=(--kernel "$kernel_tree/arch/x86/boot/bzImage"
		--initramfs "$guest_dir/initramfs.cpio" --mem "$debug_mem" --timeout-scale "$debug_timeout_scale")
	[[ -f $kernel_tree/arch/x86/boot/bzImage && -f $guest_dir/initramfs.cpio ]] ||
		die "the debug guest kernel is not built: run 'make debug'"
}

# suite_guest_args FILE: the run-guest options a guest suite asks for in its
# '# run-guest: ...' header lines, into the array suite_args.
suite_guest_args() {
	local line
	# shellcheck disable=SC2034 # read by the caller
	suite_args=()
	while read -r line; do
		eval "suite_args+=(${line#\# run-guest:})"
	done < <(grep -E '^# run-guest:' "$1" || true)
}

# The guest kernels: Debian's linux-source-<version> with the series in
# kernel-patches/<version>/, listed in scripts/kernel-versions. The first is
# the default (DMA32_KERNEL or --kernel-version selects another) and the
# only one with a debug flavour.
mapfile -t DMA32_KERNELS < <(sed -e '/^#/d' "$DMA32_TOP/scripts/kernel-versions")
((${#DMA32_KERNELS[@]})) || die "no kernel versions in $DMA32_TOP/scripts/kernel-versions"
DMA32_DEFAULT_KERNEL=${DMA32_KERNELS[0]}
DMA32_KERNEL=${DMA32_KERNEL:-$DMA32_DEFAULT_KERNEL}
export DMA32_KERNEL

# kernel_dirs VERSION FLAVOUR: the folders of that guest kernel, into
# kernel_tree, driver_dir and guest_dir (build/linux, build/driver and
# build/guest for 6.1 plain; -debug or -<version> appended otherwise, as the
# Makefile names them), or die naming what is wrong.
kernel_dirs() {
	local version=$1 flavour=$2 suffix='' v known=0
	for v in "${DMA32_KERNELS[@]}"; do [[ $v == "$version" ]] && known=1; done
	((known)) || die "unknown kernel version '$version' (known: ${DMA32_KERNELS[*]})"
	case $flavour in
	plain) [[ $version == "$DMA32_DEFAULT_KERNEL" ]] || suffix=-$version ;;
	debug)
		[[ $version == "$DMA32_DEFAULT_KERNEL" ]] ||
			die "the debug kernel is $DMA32_DEFAULT_KERNEL only, not $version"
		suffix=-debug ;;
	*) die "unknown kernel flavour '$flavour'" ;;
	esac
	# shellcheck disable=SC2034 # read by the caller
	kernel_tree=$DMA32_BUILD/linux$suffix driver_dir=$DMA32_BUILD/driver$suffix \
		guest_dir=$DMA32_BUILD/guest$suffix
}
