// SPDX-License-Identifier: GPL-2.0
/*
 * dma32demo-regs: the dma32-demo device's registers as the device holds
 * them, read through /sys/bus/pci/devices/BDF/resource0 (mmap) and not
 * through the driver, for tests that check what the driver left behind.
 *
 *   dma32demo-regs BDF
 *
 * prints one line, status=0x... int_mask=0x... head=N tail=N, and says
 * enabled or stopped (DMA32_DEMO_STATUS_ENABLED) and busy or idle.
 */
#include <fcntl.h>
#include <linux/types.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dma32-demo-regs.h"

/* One 32-bit load per register, as the device expects: never torn or merged */
static __u32 rd(const void *regs, unsigned int reg)
{
	return __atomic_load_n((const __u32 *)((const char *)regs + reg),
			       __ATOMIC_RELAXED);
}

int main(int argc, char **argv)
{
	const void *regs;
	__u32 status;
	char path[256];
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: dma32demo-regs BDF\n");
		return 2;
	}
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource0",
		 argv[1]);
	fd = open(path, O_RDONLY | O_SYNC);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	regs = mmap(NULL, DMA32_DEMO_BAR0_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	if (regs == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	status = rd(regs, DMA32_DEMO_REG_STATUS);
	printf("status=%#x int_mask=%#x head=%u tail=%u %s %s\n", status,
	       rd(regs, DMA32_DEMO_REG_INT_MASK),
	       rd(regs, DMA32_DEMO_REG_RING_HEAD),
	       rd(regs, DMA32_DEMO_REG_RING_TAIL),
	       status & DMA32_DEMO_STATUS_ENABLED ? "enabled" : "stopped",
	       status & DMA32_DEMO_STATUS_BUSY ? "busy" : "idle");
	return 0;
}
