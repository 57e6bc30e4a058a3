#!/bin/sh
# The guest boots with -device dma32-demo,dma-bits=31: the driver binds and
# moves verified data in this configuration.
# run-guest: --device-props 'dma-bits=31'
# shellcheck source=qemu-device/tests/guest/boot-check.sh.inc
. "$(dirname "$0")/boot-check.sh.inc"
boot_check 31 32 fault
ktap_finished
