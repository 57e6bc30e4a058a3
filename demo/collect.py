"""Boot each guest configuration (repeats times) and run its scenarios there.

raw/manifest.json says what ran (records.Manifest): every boot and
scenario as resolved here (the request, the kernel, the boot's settings and
timeout, and for each boot run-guest's arguments, the exact guest command,
run-guest's status and the guest's /proc/version), the counters dma32ctl
read, the sweep, the package versions (build/versions.txt) and the build's
identity (identity.py) as of the run, and records.SCHEMA. It is written
before the first boot with "complete": false, after every boot again, and
last with "complete": true; judge takes what ran from it, never from the
live table or build/. Before the first boot collect deletes raw/ and
every file made from an earlier run (DERIVED), so nothing of an earlier
run is left looking current.
For every boot, raw/BOOT.out holds what the guest printed and
raw/BOOT.status.json run-guest's outcome (run-guest --status); a repeated
boot's later runs are BOOT~2, BOOT~3, ... The guest
prints sections, each opened by a line '@@KIND ARGS' (see guest_command):

  @@file PATH            the kernel's own file, as it reads (zoneinfo,
                         vmstat, ...); zoneinfo:peak, zoneinfo:pressed,
                         buddyinfo:pressed, vmstat:pressed after a boot's
                         prepare step; zoneinfo:after, vmstat:after,
                         /proc/swaps after a swap boot's scenarios;
                         dmesg:node-ranges (the boot log's "Early memory
                         node ranges") and dma32demo:numa_node (each bound
                         device's PCI function and node) on a NUMA boot
  @@prepare              what the boot's prepare step printed
  @@info                 dma32ctl info --json: one JSON line
  @@run NAME             dma32ctl run --json: one JSON line (with the
                         kernel counters it read around the ioctl and the
                         address runs of the ring, the control buffers and
                         the buffers)
  @@devrun NAME DEVICE   the same, for a scenario that runs on every
                         device at once (one section per device)
  @@snap WHEN NAME PATH  a kernel file (a node's numastat, /proc/vmstat,
                         /proc/zoneinfo) right before or after scenario
                         NAME, on a NUMA boot, an aged one, one with swap
                         or the page-cache one (snapshot_files)
  @@counters WHEN NAME   'PATH VALUE' lines: the kernel counters right
                         before and after such a scenario (WHEN is
                         before or after; VALUE is empty when absent)
  @@sweep STRATEGY SIZE COUNT
  @@rc N                 the exit status of the command before
  @@stderr               its stderr, for people (never parsed)

Only dma32ctl writes JSON; the host parses the kernel's files itself.
"""
import fnmatch
import json
import os
import shlex
import subprocess
import time
from typing import Callable, Dict, List, Optional

from . import identity, table
from .records import SCHEMA, BootSpec, BuildIdentity, Manifest, RunStatus, ScenarioSpec

# run-guest --timeout for every demo boot, seconds, unless its Boot says
# otherwise (table.Boot.timeout).
BOOT_TIMEOUT = 180
# The most buffers a sweep point asks for (dma32ctl's limit).
SWEEP_MAX_COUNT = 4096

# Files the guest hands over as they are. 'ls' lines list directories.
GUEST_FILES = ["/proc/version", "/proc/cmdline", "/proc/zoneinfo", "/proc/vmstat", "/proc/iomem",
               "/sys/module/page_alloc/parameters/shuffle", table.GART + "aperture_pages"]
GUEST_DIRS = ["/sys/kernel/iommu_groups", "/sys/kernel/debug/swiotlb", "/sys/kernel/debug/dma_direct",
              table.GART.rstrip("/")]


def run_command(args: str, name: str, pin: str = "") -> str:
    """dma32ctl ARGS --json with its rc and stderr, as sections; PIN: the
    command that runs it on one CPU (a NUMA boot's taskset), or ""."""
    return ("echo '@@%s'; %sdma32ctl %s --json 2>/tmp/err; echo \"@@rc $?\"; echo '@@stderr'; cat /tmp/err"
            % (name, pin, args))


def snapshot_files(boot: table.Boot) -> List[str]:
    """The kernel's own files read right before and right after each of a
    boot's requests (@@snap): every node's NUMA counters on a NUMA boot,
    /proc/vmstat (reclaim, swap) on an aged boot (PRESSURE) and on a boot
    with swap, and /proc/zoneinfo on the page-cache boot (PAGE_CACHE)."""
    files = []
    if boot.numa:
        files += [table.NUMASTAT % n for n in range(len(boot.numa.split(",")))]
    if boot.swap or boot.prepare in (table.PRESSURE, table.PRESSURE_WHOLE):
        files.append("/proc/vmstat")
    if boot.prepare == table.PAGE_CACHE:
        # each zone's free and LRU pages: what reclaim took where
        files.append("/proc/zoneinfo")
    return files


def snapshot(boot: table.Boot, when: str, name: str) -> List[str]:
    return ["echo '@@snap %s %s %s'; cat %s" % (when, name, f, f) for f in snapshot_files(boot)]


def counter_args() -> str:
    return " ".join("--counter %s" % shlex.quote(p) for p in table.COUNTERS.values())


def all_devices_command(s: table.Scenario, args: str) -> str:
    """Run ARGS on every bound device at once; the kernel counters are
    read around the whole batch, since the runs overlap."""
    paths = " ".join(shlex.quote(p) for p in table.COUNTERS.values())

    def snapshot(when):
        return ("echo '@@counters %s %s'; for f in %s; do echo \"$f $(cat $f 2>/dev/null)\"; done"
                % (when, s.name, paths))
    # Wait for these runs only: a prepare step may have left a job running
    launch = ("pids=; for d in /dev/dma32demo*; do n=${d##*/}; "
              "(dma32ctl --device $d %s --json >/tmp/$n.json 2>/tmp/$n.err; echo $? >/tmp/$n.rc) & "
              "pids=\"$pids $!\"; done; wait $pids" % args)
    report = ("for d in /dev/dma32demo*; do n=${d##*/}; echo \"@@devrun %s $d\"; cat /tmp/$n.json; "
              "echo \"@@rc $(cat /tmp/$n.rc)\"; echo '@@stderr'; cat /tmp/$n.err; done" % s.name)
    return "; ".join([snapshot("before"), launch, snapshot("after"), report])


def guest_command(boot: table.Boot, scenarios: List[table.Scenario], sweep: bool) -> str:
    cmd = []
    for f in GUEST_FILES:
        cmd.append("echo '@@file %s'; cat %s 2>/dev/null" % (f, f))
    for d in GUEST_DIRS:
        cmd.append("echo '@@ls %s'; ls %s 2>/dev/null" % (d, d))
    # The boot line of the dma32= patch, shown as it is (display only).
    cmd.append("echo '@@file dmesg:ZONE_DMA32'; dmesg | grep -o 'ZONE_DMA32: .*' | tail -n 1")
    # Where the swiotlb pool lies: the kernel says so only in its boot log.
    cmd.append("echo '@@file dmesg:swiotlb'; dmesg | grep -o 'software IO TLB: mapped \\[mem [^]]*\\]' | tail -n 1")
    # Where the GART's aperture lies and whether the kernel uses it (a
    # boot with the northbridge): the boot log again.
    cmd.append("echo '@@file dmesg:gart'; dmesg | grep -o -e 'Mapping aperture over RAM \\[mem [^]]*\\]'"
               " -e 'PCI-DMA: using GART IOMMU' -e 'PCI-DMA: Reserving [0-9]*MB of IOMMU area'")
    if boot.numa:
        # The nodes' memory as the kernel took it (init keeps the boot's
        # messages in /tmp/boot.dmesg), and the node of each bound device
        cmd.append("echo '@@file dmesg:node-ranges'; grep -E 'node +[0-9]+: \\[mem 0x' /tmp/boot.dmesg")
        cmd.append("echo '@@file dma32demo:numa_node'; for d in /sys/class/misc/dma32demo*; do "
                   "echo \"$(basename $(readlink -f $d/device)) $(cat $d/device/numa_node)\"; done")
    if boot.prepare:
        # Age the machine, then the zones as they stand under that pressure
        cmd.append("echo '@@prepare'; %s; echo \"@@rc $?\"" % boot.prepare)
        cmd.append("echo '@@file zoneinfo:peak'; cat /tmp/zoneinfo.peak 2>/dev/null")
        cmd.append("echo '@@file zoneinfo:pressed'; cat /proc/zoneinfo")
        cmd.append("echo '@@file buddyinfo:pressed'; cat /proc/buddyinfo")
        cmd.append("echo '@@file vmstat:pressed'; cat /proc/vmstat")
    cmd.append(run_command("info", "info"))
    for s in scenarios:
        args = "run --strategy %s --op %s --size %d --count %d%s --runs %d" % (
            s.strategy, s.op, s.size, s.count, " --verify" if s.verify else "", table.RUNS)
        cmd += snapshot(boot, "before", s.name)
        if s.all_devices:
            cmd.append(all_devices_command(s, args))
        else:
            cmd.append(run_command(args + " " + counter_args(), "run " + s.name,
                                   "taskset -c %d " % table.NUMA_CPU if boot.numa else ""))
        cmd += snapshot(boot, "after", s.name)
    if boot.swap:
        cmd.append("echo '@@file zoneinfo:after'; cat /proc/zoneinfo")
        cmd.append("echo '@@file vmstat:after'; cat /proc/vmstat")
        cmd.append("echo '@@file /proc/swaps'; cat /proc/swaps")
    if sweep:
        for strategy in boot.sweep:
            for size in table.SWEEP_SIZES:
                count = min(max(table.SWEEP_TOTAL // size, 1), SWEEP_MAX_COUNT)
                for _ in range(table.SWEEP_REPEAT):
                    cmd.append(run_command("run --strategy %s --op fill --size %d --count %d --runs 0" % (
                        strategy, size, count), "sweep %s %d %d" % (strategy, size, count)))
    cmd.append("echo '@@done'")
    return "; ".join(cmd)


def boot_spec(boot: table.Boot, kernel: str) -> BootSpec:
    """A boot as it will run in a run on KERNEL: the table's Boot, its
    kernel resolved."""
    return {"name": boot.name, "kernel": boot.kernel or kernel, "machine": boot.machine,
            "mem": boot.mem, "kernel_args": boot.kernel_args, "device_props": boot.device_props,
            "qemu_args": boot.qemu_args, "allow_log": boot.allow_log, "devices": boot.devices,
            "prepare": boot.prepare, "repeats": boot.repeats, "gart": boot.gart, "numa": boot.numa,
            "device_node": boot.device_node, "swap": boot.swap, "timeout": boot.timeout or BOOT_TIMEOUT,
            "sweep": dict(boot.sweep), "runs": []}


def scenario_spec(s: table.Scenario) -> ScenarioSpec:
    return {"name": s.name, "boot": s.boot, "strategy": s.strategy, "op": s.op, "size": s.size,
            "count": s.count, "verify": s.verify, "all_devices": s.all_devices,
            "repeats_row": s.repeats_row or None}


def sweep_spec(enabled: bool) -> Dict:
    return {"enabled": enabled, "op": "fill", "sizes": list(table.SWEEP_SIZES), "total": table.SWEEP_TOTAL,
            "repeat": table.SWEEP_REPEAT, "max_count": SWEEP_MAX_COUNT}


def run_guest_args(boot: table.Boot, run_name: str, guest_opts: List[str]) -> List[str]:
    """run-guest's options for one boot, all but --status and the guest
    command. A boot on the run's own kernel names none: collect gives
    run-guest DMA32_KERNEL."""
    args = [*guest_opts, "--machine", boot.machine, "--mem", boot.mem,
            "--log", "demo-" + run_name.replace("@", "-").replace("~", "-"),
            "--timeout", str(boot.timeout or BOOT_TIMEOUT), "--devices", str(boot.devices)]
    if boot.kernel:
        args += ["--kernel-version", boot.kernel]
    if boot.kernel_args:
        args += ["--append", boot.kernel_args]
    if boot.device_props:
        args += ["--device-props", boot.device_props]
    if boot.qemu_args:
        args += ["--qemu-args", boot.qemu_args]
    if boot.allow_log:
        args += ["--allow-log", boot.allow_log]
    if boot.gart:
        args += ["--gart-aperture", str(boot.gart)]
    if boot.numa:
        args += ["--numa", boot.numa]
    if boot.device_node >= 0:
        args += ["--device-node", str(boot.device_node)]
    if boot.swap:
        args += ["--swap", str(boot.swap)]
    return args


def boot_commands(tbl: table.KernelTable, manifest: Manifest, boot_name: str) -> Dict[str, str]:
    """{run name: guest command} for one boot of a manifest, as the table
    TBL builds them: the boot's scenarios in the manifest's order, the sweep
    (when the run has one) on its first boot only."""
    boot = tbl.boot[boot_name]
    live = {s.name: s for s in tbl.scenarios}
    mine = [live[s["name"]] for s in manifest["scenarios"] if s["boot"] == boot_name and s["name"] in live]
    sweep = manifest["sweep"]["enabled"]
    return {run: guest_command(boot, mine, sweep and run == boot.name) for run in table.boot_runs(boot)}


def build_files(tbl: table.KernelTable, kernels: List[str], guest_opts: List[str],
                build: str) -> Dict[str, Dict[str, str]]:
    """{kernel version: {"bzimage", "initramfs"}}: the files run-guest boots
    for each kernel of the run (--kernel and --initramfs, when given, for
    every boot)."""
    given = dict(zip(guest_opts[::2], guest_opts[1::2]))
    files = {}
    for v in kernels:
        f = identity.kernel_files(build, v, table.DEFAULT_KERNEL)
        files[v] = {"bzimage": given.get("--kernel") or f["bzimage"],
                    "initramfs": given.get("--initramfs") or f["initramfs"]}
    return files


def plan(tbl: table.KernelTable, scenarios: List[table.Scenario], sweep: bool, guest_opts: List[str],
         versions: Dict[str, str], build: BuildIdentity) -> Manifest:
    """The manifest of a run of these scenarios of TBL, before any boot."""
    boots = {b.name: boot_spec(b, tbl.kernel) for b in tbl.boots if any(s.boot == b.name for s in scenarios)}
    for b in boots.values():
        if not sweep:
            b["sweep"] = {}
    return {"schema": SCHEMA, "complete": False, "kernel": tbl.kernel, "other_kernel": tbl.other_kernel,
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "seconds": None,
            "versions": versions, "build": build, "guest_opts": list(guest_opts),
            "runs_asked": table.RUNS, "counters": dict(table.COUNTERS), "levels": sorted(table.LEVELS),
            "sweep": sweep_spec(sweep), "boots": boots, "scenarios": [scenario_spec(s) for s in scenarios]}


def read_status(path: str) -> Optional[RunStatus]:
    """run-guest's status file; None when it wrote none (or not JSON)."""
    try:
        with open(path) as f:
            status = json.load(f)
    except (OSError, json.JSONDecodeError):
        return None
    return status if isinstance(status, dict) else None


def guest_proc_version(out_path: str) -> Optional[str]:
    """The line under '@@file /proc/version' in a boot's output; None
    without one."""
    try:
        with open(out_path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for i, line in enumerate(lines[:-1]):
        if line == "@@file /proc/version" and not lines[i + 1].startswith("@@"):
            return lines[i + 1].strip() or None
    return None


def write_manifest(raw: str, manifest: Manifest) -> None:
    path = os.path.join(raw, "manifest.json")
    with open(path + ".tmp", "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    os.replace(path + ".tmp", path)


# What render, memmap and make bench make from a run, in the report
# folder: collect deletes them before its first boot.
DERIVED = ("results.json", "results.json.tmp", "report.md", "table.txt", "throughput.*", "memmap-*",
           "bench.md", "bench.json", "bench-manifest.json")


def remove_earlier_run(report: str, raw: str) -> None:
    """Delete raw/'s files and every file DERIVED from an earlier run."""
    for folder, patterns in ((raw, ("*",)), (report, DERIVED)):
        for name in os.listdir(folder) if os.path.isdir(folder) else []:
            path = os.path.join(folder, name)
            if os.path.isfile(path) and any(fnmatch.fnmatch(name, p) for p in patterns):
                os.remove(path)


def collect(raw: str, tbl: table.KernelTable, scenarios: List[table.Scenario], sweep: bool, guest_opts: List[str],
            top: str, build: str, on_boot: Optional[Callable[[Manifest, str], None]] = None) -> Manifest:
    """Run every boot of TBL that has a selected scenario, keeping
    raw/manifest.json up to date; on_boot(manifest, boot name) after each."""
    os.makedirs(raw, exist_ok=True)
    run_guest = os.path.join(top, "scripts", "run-guest")
    start = time.time()
    names = {s.boot for s in scenarios}
    kernels = sorted({b.kernel or tbl.kernel for b in tbl.boots if b.name in names})
    manifest = plan(tbl, scenarios, sweep, guest_opts, identity.versions_dict(os.path.join(build, "versions.txt")),
                    identity.build_identity(top, build, build_files(tbl, kernels, guest_opts, build)))
    write_manifest(raw, manifest)
    env = dict(os.environ, DMA32_KERNEL=tbl.kernel)
    for boot_name in manifest["boots"]:
        boot, spec = tbl.boot[boot_name], manifest["boots"][boot_name]
        for run_name, command in boot_commands(tbl, manifest, boot_name).items():
            args = run_guest_args(boot, run_name, guest_opts)
            status = os.path.join(raw, run_name + ".status.json")
            with open(os.path.join(raw, run_name + ".out"), "w") as out, \
                    open(os.path.join(raw, run_name + ".err"), "w") as err:
                subprocess.run([run_guest, *args, "--status", status, "--run", command], stdout=out, stderr=err,
                               stdin=subprocess.DEVNULL, env=env, check=False)
            version = guest_proc_version(os.path.join(raw, run_name + ".out"))
            spec["runs"].append({"name": run_name, "argv": args, "command": command, "status": read_status(status),
                                 "proc_version": version})
            kernel_id = manifest["build"]["kernels"][spec["kernel"]]
            kernel_id["proc_version"] = kernel_id["proc_version"] or version
            write_manifest(raw, manifest)
        if on_boot:
            on_boot(manifest, boot_name)
    manifest["complete"] = True
    manifest["seconds"] = int(time.time() - start)
    write_manifest(raw, manifest)
    return manifest
