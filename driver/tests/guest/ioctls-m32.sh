#!/bin/sh
#
# The ioctl self-test again, built with gcc -m32: a 32-bit program's
# requests reach the driver through its compat_ioctl (compat_ptr_ioctl),
# and the UAPI's structures have one layout for i386 and x86-64 (a
# different size would change the command numbers, and every request would
# get ENOTTY). The same cases and errnos as ioctls.sh.
#
# If the guest kernel cannot run a 32-bit program at all (no
# CONFIG_IA32_EMULATION, guest-image/kernel.config), say so in one failed
# result rather than let the shell's "Exec format error" stand for KTAP.
out=$(dma32demo-ioctls-m32)
rc=$?
case $out in
"TAP version"* | "KTAP version"*)
	printf '%s\n' "$out"
	exit $rc
	;;
esac
echo "KTAP version 1"
echo "1..1"
echo "# dma32demo-ioctls-m32 does not run (exit $rc): $(printf '%s\n' "$out" | head -n 1)"
echo "# (a 32-bit program needs CONFIG_IA32_EMULATION in the guest kernel)"
echo "not ok 1 the guest kernel runs a 32-bit program"
exit 1
