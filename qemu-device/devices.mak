# The QEMU devices the demo's guests and the qtests use, and nothing else:
# build-qemu configures with --without-default-devices and this list
# (grafted as configs/devices/x86_64-softmmu/dma32-demo.mak).
# The boards select their own chipset, serial ports, RTC and ACPI.
# The pc boards also make a parallel port unless told -parallel none, and
# refuse to start when it is not built.
CONFIG_PARALLEL=y
CONFIG_Q35=y
CONFIG_I440FX=y
# -device intel-iommu
CONFIG_VTD=y
# -device pcie-root-port (pci-bridge comes with PCI itself)
CONFIG_PCIE_PORT=y
CONFIG_DMA32_DEMO=y
# -device virtio-iommu-pci, for the qtest in which an IOMMU's fault record
# (a DMA write it makes while translating) unplugs the device
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_IOMMU=y
# -device k8-northbridge (run-guest --gart)
CONFIG_K8_NORTHBRIDGE=y
# -device pxb-pcie (run-guest --device-node: a device on a NUMA node,
# behind a PCIe expander bridge whose ACPI _PXM names the node). QEMU
# 7.2's expander code calls CXL's register helpers for its pxb-cxl
# variant, and CXL's host code calls the CXL memory device's, so both
# must be built too (their Kconfig defaults, which
# --without-default-devices turns off).
CONFIG_PXB=y
CONFIG_CXL=y
CONFIG_CXL_MEM_DEVICE=y
# -device virtio-blk-pci (run-guest --swap: a disk for the guest's swap)
CONFIG_VIRTIO_BLK=y
