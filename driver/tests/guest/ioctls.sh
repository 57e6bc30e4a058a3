#!/bin/sh
#
# Every malformed ioctl to /dev/dma32demo0 gets its errno, and only the
# requests that pass validation are counted: dma32demo-ioctls, a kselftest
# harness program (driver/tests/dma32demo-ioctls.c), prints its own KTAP,
# one result per case.
exec dma32demo-ioctls
