#!/bin/sh
# The guest boots with -device dma32-demo,overflow=truncate: the driver binds and
# moves verified data in this configuration.
# run-guest: --device-props 'overflow=truncate'
# shellcheck source=qemu-device/tests/guest/boot-check.sh.inc
. "$(dirname "$0")/boot-check.sh.inc"
boot_check 32 32 truncate
ktap_finished
