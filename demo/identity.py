"""What a run ran on, as collect (and make bench) record it beside their
output: the package versions of build/versions.txt as of the run, and the
build's identity: the sha256 of each guest kernel's bzImage and initramfs
and of the QEMU binary, and `git describe --dirty` of the project. judge
and render read these from the manifests, never from the live build/.
"""
import hashlib
import os
import subprocess
from typing import Dict, Optional

from .records import BuildIdentity, FileIdentity


def versions_dict(path: str) -> Dict[str, str]:
    """build/versions.txt, as setup-host writes it: 'NAME<TAB>VERSION' lines."""
    d = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                k, tab, v = line.rstrip("\n").partition("\t")
                if tab:
                    d[k] = v
    return d


def file_identity(path: str) -> FileIdentity:
    """A file and its sha256 (None when it is not there)."""
    if not os.path.isfile(path):
        return {"path": path, "sha256": None}
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return {"path": path, "sha256": h.hexdigest()}


def kernel_files(build: str, kernel: str, default_kernel: str) -> Dict[str, str]:
    """run-guest's default bzImage and initramfs for a kernel version, as
    scripts/lib.sh's kernel_dirs names their folders."""
    suffix = "" if kernel == default_kernel else "-" + kernel
    return {"bzimage": os.path.join(build, "linux" + suffix, "arch", "x86", "boot", "bzImage"),
            "initramfs": os.path.join(build, "guest" + suffix, "initramfs.cpio")}


def qemu_binary(build: str) -> str:
    """run-guest's QEMU (DMA32_QEMU, else the one build/ holds)."""
    return os.environ.get("DMA32_QEMU") or os.path.join(build, "qemu", "build", "qemu-system-x86_64")


def git_describe(top: str) -> Optional[str]:
    try:
        r = subprocess.run(["git", "-C", top, "describe", "--always", "--dirty"], capture_output=True, text=True,
                           check=False)
    except OSError:
        return None
    return r.stdout.strip() or None if r.returncode == 0 else None


def build_identity(top: str, build: str, kernels: Dict[str, Dict[str, str]]) -> BuildIdentity:
    """The identity of a run's build: kernels maps each guest kernel version
    the run boots to its {"bzimage": path, "initramfs": path}."""
    return {"git_describe": git_describe(top), "qemu": file_identity(qemu_binary(build)),
            "kernels": {v: {"bzimage": file_identity(f["bzimage"]), "initramfs": file_identity(f["initramfs"]),
                            "proc_version": None}
                        for v, f in sorted(kernels.items())}}


def binaries(identity: BuildIdentity, kernel: str) -> list:
    """The sha256 of KERNEL's bzImage and initramfs and of QEMU."""
    k = (identity.get("kernels") or {}).get(kernel) or {}
    return [(k.get("bzimage") or {}).get("sha256"), (k.get("initramfs") or {}).get("sha256"),
            (identity.get("qemu") or {}).get("sha256")]


def same_build(a: BuildIdentity, b: BuildIdentity, kernel: str) -> bool:
    """Whether two runs booted the same binaries for KERNEL: its bzImage and
    initramfs, and QEMU (git describe aside: a commit that changes no
    binary is the same build)."""
    return None not in binaries(a, kernel) and binaries(a, kernel) == binaries(b, kernel)
