#!/bin/sh
# The guest boots with -device dma32-demo,ring-bits=32,dma-bits=64: the driver binds and
# moves verified data in this configuration.
# run-guest: --device-props 'ring-bits=32,dma-bits=64'
# shellcheck source=qemu-device/tests/guest/boot-check.sh.inc
. "$(dirname "$0")/boot-check.sh.inc"
boot_check 64 32 fault
ktap_finished
