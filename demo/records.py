"""The demo's typed records: what collect writes (raw/manifest.json), what
judge makes of it (results.json), and what the checks, the claims, render
and memmap read. One module, imported by all of them, so a key is spelled
once.

raw/ is the contract, as a log is for `kunit.py parse`: manifest.json says
what ran (every boot and scenario as collect resolved it, with run-guest's
status of every boot), BOOT.out what the guest printed. judge.py is a pure
function from raw/ to results.json; from the live table it takes only what
judges (each scenario's check, its expectation text and kind, the claims).

SCHEMA is the version of both files: a change to their meaning bumps it,
and judge refuses a manifest of another version.
"""
from typing import Any, Dict, List, Optional, Tuple, TypedDict

SCHEMA = 4


# --- raw/manifest.json (collect) ---------------------------------------------

class RunStatus(TypedDict, total=False):
    """run-guest --status's file, as collect read it after the boot."""
    outcome: str            # "ok", "timeout", "panic", ...
    exit: int
    message: Optional[str]
    console_log: Optional[str]
    seconds: Optional[int]


class BootRun(TypedDict):
    """One boot of a configuration: NAME, or NAME~2, NAME~3 for repeats."""
    name: str
    argv: List[str]                 # run-guest's arguments but --status (raw/NAME.status.json) and --run
    command: str                    # the guest command (run-guest --run), exactly
    status: Optional[RunStatus]     # None: run-guest wrote no status
    proc_version: Optional[str]     # the guest's /proc/version; None: it printed none


class FileIdentity(TypedDict):
    path: str
    sha256: Optional[str]           # None: the file was not there


class KernelIdentity(TypedDict):
    bzimage: FileIdentity
    initramfs: FileIdentity
    proc_version: Optional[str]     # what the first guest on this kernel said


class BuildIdentity(TypedDict):
    """What a run booted (identity.build_identity)."""
    git_describe: Optional[str]     # git describe --always --dirty of the project
    qemu: FileIdentity
    kernels: Dict[str, KernelIdentity]


class BootSpec(TypedDict):
    """A boot as it ran: the table's Boot resolved (its kernel named)."""
    name: str
    kernel: str                     # the guest kernel's version, e.g. "6.1"
    machine: str
    mem: str
    kernel_args: str
    device_props: str
    qemu_args: str
    allow_log: str
    devices: int
    prepare: str
    repeats: int
    gart: int                       # the K8 GART's aperture in MiB (run-guest --gart-aperture); 0: none
    timeout: int                    # run-guest --timeout, seconds
    sweep: Dict[str, str]           # strategy -> series label ({} when not swept here)
    runs: List[BootRun]


class Request(TypedDict):
    """What dma32ctl was asked to do for one scenario."""
    strategy: str
    op: str
    size: int
    count: int
    verify: bool
    all_devices: bool


class ScenarioSpec(Request):
    name: str
    boot: str
    repeats_row: Optional[str]      # a headline row repeated on the other kernel: the row it repeats


class SweepSpec(TypedDict):
    enabled: bool
    op: str
    sizes: List[int]
    total: int                      # bytes per point
    repeat: int                     # best of
    max_count: int


class Manifest(TypedDict):
    schema: int
    complete: bool                  # False until the last boot has run
    kernel: str                     # the demo's kernel (judge takes the table of this one)
    other_kernel: str               # the one the headline rows ran on again
    started: str                    # when collect started (UTC): the run's one time stamp
    seconds: Optional[int]
    versions: Dict[str, str]        # build/versions.txt as of the run: package -> version
    build: BuildIdentity
    guest_opts: List[str]           # run-guest options from collect's command line (--kernel, --initramfs)
    runs_asked: int                 # dma32ctl --runs
    counters: Dict[str, str]        # record key -> the kernel file dma32ctl read
    levels: List[str]               # counters reported as levels, not deltas
    sweep: SweepSpec
    boots: Dict[str, BootSpec]
    scenarios: List[ScenarioSpec]


# --- results.json (judge) ------------------------------------------------------

class AddressRun(TypedDict, total=False):
    kind: str                       # device runs: "ring" or "ctrl"
    buffer: int                     # buffer runs: the buffer's index
    phys: Optional[int]
    dma: Optional[int]
    pages: int
    bounced: bool
    in_pool: bool
    reserved: bool


class DeviceResult(TypedDict):
    device: Optional[str]
    ok: bool
    errno: Optional[str]
    bounced: Optional[int]
    coherent_swiotlb_bytes: Optional[int]
    map_failures: Optional[int]


class PerBoot(TypedDict):
    as_expected: bool
    ok: bool
    errno: Optional[str]
    guest_ok: bool
    showed: str
    log: Optional[str]
    definitions_broken: List[str]


class Record(TypedDict, total=False):
    """One row: a scenario as it ran and how it was judged. A figure the
    guest did not report (a kernel without the counters, a failed guest)
    is None, never 0."""
    name: str
    boot: str
    kind: str                       # "claim" or "guarantee"
    kernel: str
    repeats_row: Optional[str]
    machine: str
    mem: str
    kernel_args: str
    device_props: str
    qemu_args: str
    shuffle: Optional[str]          # "random" under page_alloc.shuffle=1
    pressure: bool
    repeats: int
    zone_protection: Dict[str, Optional[List[int]]]
    # the request
    strategy: str
    op: str
    size: int
    count: int
    verify: bool
    # dma32ctl's result
    ok: bool
    errno: Optional[str]
    device_faults: Optional[int]
    driver_bounced: Optional[int]
    driver_bounced_bytes: Optional[int]
    mbps: Optional[float]
    zone_dma_pages_used: Optional[int]
    zone_dma_free_before: Optional[int]
    zone_dma_free_after: Optional[int]
    zone_dma_managed: Optional[int]
    pages_above_4g: Optional[int]
    pages: Optional[int]
    zone_pages: Optional[Dict[str, int]]
    mappings: Optional[int]
    mappings_above_4g: Optional[int]
    bytes: Optional[int]
    ns: Optional[int]
    buffers: Optional[int]
    fault_addr: Optional[int]
    coherent_held: Optional[int]
    cpu_ns: Optional[int]
    devices: int
    gart: int                       # the boot's GART aperture in MiB; 0: no GART
    buffers_verified: Optional[int]
    alias_canary_errors: Optional[int]
    alias_high: Optional[int]
    # The device's coherent DMA mask in bits, as the driver set it
    coherent_mask_bits: Optional[int]
    coherent_swiotlb_bytes: Optional[int]
    # streaming maps the DMA API refused (swiotlb, the driver's pre-check or the GART)
    map_refused: Optional[int]
    map_failed_segments: Optional[int]   # segments of those refused maps (each may have bounced, then been undone)
    per_device: List[DeviceResult]
    stderr: Optional[str]
    # the kernel's counters (manifest "counters": one key each)
    swiotlb_bounced: Optional[int]
    swiotlb_bounced_bytes: Optional[int]
    swiotlb_bounced_bytes_sync: Optional[int]
    swiotlb_full: Optional[int]
    swiotlb_too_big: Optional[int]
    swiotlb_align_fail: Optional[int]
    swiotlb_used: Optional[int]
    swiotlb_used_hiwater: Optional[int]
    zone_dma_fallbacks: Optional[int]
    swiotlb_coherent_held: Optional[int]
    swiotlb_coherent_bytes: Optional[int]
    swiotlb_coherent_full: Optional[int]
    coherent_would_panic: Optional[int]
    gart_used: Optional[int]                # the GART's, in aperture pages; null without the GART
    gart_used_hiwater: Optional[int]
    gart_full: Optional[int]
    gart_coherent: Optional[int]
    # where the device's memory and the buffers lay
    device_runs: Optional[List[AddressRun]]
    runs: Optional[List[AddressRun]]
    runs_dropped: Optional[int]
    runs_disagree: Optional[List[str]]
    zone_dma_pages_distinct: Optional[int]   # distinct ZONE_DMA pages among the runs (several devices repeat pages)
    node_zone_pages: Optional[Dict[str, int]]   # a NUMA boot: {"node N ZONE": pages} of the buffers' runs
    numastat: Optional[Dict[str, Dict[str, int]]]  # a NUMA boot: {node: {numa_hit, ...: delta across the request}}
    vmstat_delta: Optional[Dict[str, int]]   # a swap boot: /proc/vmstat's reclaim events across the request
    zone_lru: Optional[Dict[str, Dict[str, int]]]  # a page-cache boot: {zone: {free_before, free_after,
    #                                         lru_before, lru_after}}, /proc/zoneinfo around the request
    bound_zone_dma_pages: Optional[int]      # the bound devices' rings and control buffers in ZONE_DMA
    bound_pool_bytes: Optional[int]          # ... and in the swiotlb pool (not the request's own buffers)
    request_pool_bytes: Optional[int]        # the request's own coherent buffers in the swiotlb pool
    copied_per_byte: Optional[float]
    cpu_ms_per_mib: Optional[float]
    # the guest and the verdict
    guest_ok: bool
    guest_error: Optional[str]
    log: Optional[str]
    expect: str
    as_expected: bool
    showed: str
    definitions_broken: List[str]   # "column: what breaks it" (table.apply_definitions); a repeated
                                    # row's, "boot N: ..." for every boot's
    # a row whose boot ran several times
    median_boot: int
    median: Dict[str, Any]
    min: Dict[str, Any]
    max: Dict[str, Any]
    per_boot: List[PerBoot]


class BootInfo(TypedDict, total=False):
    """What one boot's guest printed about itself (judge.load_boot); the
    checks' second argument."""
    zones: Dict[str, Dict[str, Any]]
    counters_present: List[str]
    iommu_groups: int
    page_alloc_shuffle: Optional[bool]
    cmdline: Optional[str]
    kernel_release: Optional[str]
    zone_layout_line: Optional[str]
    device: Optional[Dict[str, Any]]
    swiotlb_pool: Optional[Dict[str, int]]
    zones_peak: Optional[Dict[str, Dict[str, Any]]]
    zones_pressed: Optional[Dict[str, Dict[str, Any]]]
    buddyinfo_pressed: Optional[Dict[str, List[int]]]
    prepare: Optional[Dict[str, Any]]
    ram: Optional[List[Dict[str, int]]]
    vmstat: Optional[Dict[str, int]]
    vmstat_pressed: Optional[Dict[str, int]]
    gart_aperture: Optional[Dict[str, Any]] # start, end, iommu_mb, in_use, aperture_pages; None: no GART
    nodes: Optional[Dict[str, Dict[str, Dict[str, Any]]]]   # /proc/zoneinfo per node: {node: {zone: {...}}}
    node_ranges: Optional[Dict[str, List[List[int]]]]       # {node: [[start_pfn, end_pfn), ...]} (boot log)
    device_nodes: Optional[List[Dict[str, Any]]]            # [{function, node}] of the bound devices
    zones_after: Optional[Dict[str, Dict[str, Any]]]        # a swap boot's zones after its scenarios
    vmstat_after: Optional[Dict[str, int]]
    swaps: Optional[List[str]]                              # /proc/swaps' devices (a swap boot)


class BootResult(TypedDict):
    kernel: str
    machine: str
    mem: str
    devices: int
    kernel_args: str
    device_props: str
    qemu_args: str
    cmdline: Optional[str]
    zone_layout_line: Optional[str]
    zones: Optional[Dict[str, Dict[str, Any]]]
    device: Optional[Dict[str, Any]]
    iommu_groups: Optional[int]
    page_alloc_shuffle: Optional[bool]
    swiotlb_pool: Optional[Dict[str, int]]
    gart: int                               # the aperture asked for, MiB (0: no GART)
    gart_aperture: Optional[Dict[str, Any]] # what the kernel took: start, end, iommu_mb, in_use, aperture_pages
    vmstat_during_prepare: Optional[Dict[str, int]]
    prepare: Optional[str]
    prepare_output: Optional[Dict[str, Any]]
    zones_peak: Optional[Dict[str, Dict[str, Any]]]
    zones_pressed: Optional[Dict[str, Dict[str, Any]]]
    buddyinfo_pressed: Optional[Dict[str, List[int]]]
    ram: Optional[List[Dict[str, int]]]
    numa: Optional[str]                     # run-guest --numa (node sizes); None: one node
    device_node: Optional[int]              # run-guest --device-node; -1: none
    swap: int                               # run-guest --swap MiB; 0: none
    nodes: Optional[Dict[str, Dict[str, Dict[str, Any]]]]   # a NUMA boot's zones per node
    node_ranges: Optional[Dict[str, List[List[int]]]]
    device_nodes: Optional[List[Dict[str, Any]]]
    zones_after: Optional[Dict[str, Dict[str, Any]]]
    vmstat_after: Optional[Dict[str, int]]
    vmstat_during_scenarios: Optional[Dict[str, int]]
    swaps: Optional[List[str]]
    seconds: Optional[int]
    error: Optional[str]
    log: Optional[str]


class Claim(TypedDict):
    id: str                         # the claim function's name in table.CLAIMS
    claim: str
    before: str                     # table.ClaimParts: the 2.6.14 model or no zone
    after: str                      # with the zone
    caveat: str


class Summary(TypedDict):
    ratio_direct_over_bounced_1M: Optional[float]
    ratio_coherent_over_bounced_1M: Optional[float]
    scenarios: int
    as_expected: int
    not_as_expected: List[str]
    guest_failures: int


class Results(TypedDict):
    schema: int
    kernel: str
    versions: Dict[str, str]        # the manifest's
    build: BuildIdentity            # the manifest's
    collected: str                  # the manifest's "started"
    seconds: Optional[int]
    kernel_counters_present: List[str]
    boots: Dict[str, BootResult]
    scenarios: List[Record]
    claims: List[Claim]
    sweep: Dict[str, Any]
    summary: Summary


# A check: check(record, boot_info) -> (as_expected, what it showed)
CheckResult = Tuple[bool, str]
