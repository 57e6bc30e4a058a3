"""A pure function from collect.py's raw/ folder to results.json: load what
the guests printed, make one record per scenario, judge it, add the claims.

What ran comes from raw/manifest.json alone (records.Manifest: every boot
and scenario as collect resolved it, with run-guest's arguments, the exact
guest command and run-guest's status of each boot, the package versions
and the build's identity). judge takes the table of the manifest's kernel
(table.for_kernel) and reads no environment and no clock: the same raw/
and table give the same results.json. From the table it takes only what
judges: each scenario's check, its expectation text and its kind, and the
claims. It refuses (Refused, with a message saying why and what to run) a
manifest of another schema or from a collect that did not finish, a run
collected for another kernel than the one asked for (judge
--kernel-version), a run the table would now run otherwise: a scenario
whose request or boot it has changed (or no longer has), other kernel
counters or levels, another number of address runs or sweep, or a guest
command or run-guest arguments it would now build differently; and guest
output that disagrees with its manifest (a request, a kernel command line,
a kernel version, a boot that is not in it).

Nothing here invents a number: a counter that the guest kernel lacks is
null, and a guest that failed says why from run-guest's status.
"""
import json
import os
import re
import statistics
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

from . import collect, nodes, table
from .records import (SCHEMA, AddressRun, BootInfo, BootResult, BootSpec, Claim, DeviceResult, Manifest,
                      Record, Results, RunStatus, ScenarioSpec)


class Refused(Exception):
    """raw/ that judge will not judge; the message says why."""


def parse_sections(text):
    """[(kind, args, [lines])] from the guest's '@@KIND ARGS' sections."""
    sections = []
    for line in text.splitlines():
        if line.startswith("@@"):
            kind, _, args = line[2:].partition(" ")
            sections.append((kind, args, []))
        elif sections:
            sections[-1][2].append(line)
    return sections


def parse_zoneinfo(lines):
    """{zone: {free, present, managed, spanned, start_pfn, min, low, high,
    protection}}, summed over nodes (Node 0's protection)."""
    zones, z = {}, None
    for line in lines:
        w = line.split()
        if z is not None and w[:1] == ["protection:"]:
            if zones[z].get("protection") is None:
                zones[z]["protection"] = [int(x) for x in re.findall(r"\d+", line)]
            continue
        if z is not None and len(w) == 2 and w[0] in ("min", "low", "high") and w[1].isdigit():
            zones[z][w[0]] = (zones[z].get(w[0]) or 0) + int(w[1])
            continue
        if len(w) >= 4 and w[0] == "Node" and w[2] == "zone":
            z = w[3]
            zones.setdefault(z, {k: None for k in ("free", "present", "managed", "spanned", "start_pfn",
                                                   "min", "low", "high", "protection")})
            continue
        if z is None or len(w) < 2:
            continue
        key = {"pages": "free" if len(w) >= 3 and w[1] == "free" else None,
               "spanned": "spanned", "present": "present", "managed": "managed",
               "start_pfn:": "start_pfn"}.get(w[0])
        if key:
            v = w[2] if key == "free" else w[1]
            if v.isdigit():
                cur = zones[z][key]
                # A zone name on several nodes (NUMA): counts add up, it
                # starts at the lowest node's start (zoneinfo_nodes keeps each)
                zones[z][key] = int(v) if cur is None else min(cur, int(v)) if key == "start_pfn" else cur + int(v)
    return zones


def parse_zoneinfo_nodes(lines):
    """{node: {zone: {free, present, managed, spanned, start_pfn, min, low,
    high, protection}}}: /proc/zoneinfo's "Node N, zone X" sections, each
    node's own (the zone names repeat on every node)."""
    per, node, chunk = {}, None, []
    for line in lines + ["Node - , zone -"]:
        w = line.split()
        if len(w) >= 4 and w[0] == "Node" and w[2] == "zone":
            if node is not None:
                per.setdefault(node, []).extend(chunk)
            node, chunk = w[1].rstrip(","), []
        if node is not None:
            chunk.append(line)
    return {n: parse_zoneinfo(ls) for n, ls in per.items() if n != "-"} or None


def parse_buddyinfo(lines):
    """{zone: [free blocks of order 0, 1, ...]}, summed over nodes."""
    zones = {}
    for line in lines:
        w = line.replace(",", " ").split()
        if len(w) > 4 and w[0] == "Node" and w[2] == "zone" and all(x.isdigit() for x in w[4:]):
            cur = zones.setdefault(w[3], [0] * (len(w) - 4))
            for i, x in enumerate(w[4:]):
                cur[i] += int(x)
    return zones


def parse_iomem(lines):
    """The top-level "System RAM" ranges of /proc/iomem: [{start, end}]
    (end inclusive, as the kernel prints it); None when it printed none."""
    ram = []
    for line in lines:
        m = re.match(r"([0-9a-f]+)-([0-9a-f]+) : System RAM$", line)
        if m:
            ram.append({"start": int(m.group(1), 16), "end": int(m.group(2), 16)})
    return ram or None


def first_json(lines):
    for line in lines:
        if line.startswith("{"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                return None
    return None


# The /proc/vmstat events a pressure boot reports, per zone where the kernel
# counts per zone (CONFIG_VM_EVENT_COUNTERS; absent otherwise).
VMSTAT_EVENTS = ("pgalloc_dma", "pgalloc_dma32", "pgalloc_normal", "pgscan_kswapd", "pgscan_direct",
                 "pgsteal_kswapd", "pgsteal_direct", "pageoutrun", "kswapd_low_wmark_hit_quickly",
                 "kswapd_high_wmark_hit_quickly", "allocstall_dma32", "allocstall_normal",
                 "compact_stall", "compact_success", "compact_fail", "pswpout", "pswpin")
# A node's NUMA counters (/sys/devices/system/node/nodeN/numastat), in
# allocations: numa_hit (the allocation's node is its preferred zone's
# node), numa_miss (it is not: counted on the node it came from),
# numa_foreign (the same allocation, on the preferred node), interleave_hit,
# local_node and other_node (the node is, or is not, the running CPU's).
NUMASTAT = ("numa_hit", "numa_miss", "numa_foreign", "interleave_hit", "local_node", "other_node")


def parse_numastat(lines):
    """{counter: value} of one node's numastat."""
    out = {}
    for line in lines:
        w = line.split()
        if len(w) == 2 and w[0] in NUMASTAT and w[1].isdigit():
            out[w[0]] = int(w[1])
    return out


def snap_deltas(snaps):
    """A request's snapshots ({path: {before, after}}) as deltas: ({node:
    {counter: delta}}, {vmstat event: delta}); None for what was not read."""
    numa, vm = {}, None
    for path, when in snaps.items():
        m = re.search(r"/node(\d+)/numastat$", path)
        if m:
            b, a = parse_numastat(when.get("before", [])), parse_numastat(when.get("after", []))
            numa[m.group(1)] = {k: a[k] - b[k] for k in NUMASTAT if k in a and k in b}
        elif path == "/proc/vmstat":
            vm = vmstat_delta(parse_vmstat(when.get("before", [])), parse_vmstat(when.get("after", [])))
    return numa or None, vm


# A zone's LRU pages in /proc/zoneinfo: what reclaim can take from it.
ZONE_LRU = ("nr_zone_inactive_anon", "nr_zone_active_anon", "nr_zone_inactive_file", "nr_zone_active_file")


def parse_zone_lru(lines):
    """{zone: {"free", "lru"}} from /proc/zoneinfo, summed over nodes: free
    pages and LRU pages (ZONE_LRU)."""
    zones, z = {}, None
    for line in lines:
        w = line.split()
        if len(w) >= 4 and w[0] == "Node" and w[2] == "zone":
            z = zones.setdefault(w[3], {"free": 0, "lru": 0})
        elif z is not None and len(w) == 3 and w[:2] == ["pages", "free"] and w[2].isdigit():
            z["free"] += int(w[2])
        elif z is not None and len(w) == 2 and w[0] in ZONE_LRU and w[1].isdigit():
            z["lru"] += int(w[1])
    return zones


def zone_lru(snaps):
    """A request's /proc/zoneinfo snapshots as {zone: {free_before,
    free_after, lru_before, lru_after}}; None when it was not read."""
    when = snaps.get("/proc/zoneinfo")
    if not when or not when.get("before") or not when.get("after"):
        return None
    b, a = parse_zone_lru(when["before"]), parse_zone_lru(when["after"])
    return {z: {"free_before": b[z]["free"], "free_after": a[z]["free"], "lru_before": b[z]["lru"],
                "lru_after": a[z]["lru"]} for z in b if z in a} or None


def parse_vmstat(lines):
    """{event: count} for VMSTAT_EVENTS that the kernel has."""
    out = {}
    for line in lines:
        w = line.split()
        if len(w) == 2 and w[0] in VMSTAT_EVENTS and w[1].isdigit():
            out[w[0]] = int(w[1])
    return out


def vmstat_delta(before, after):
    """What the prepare step added to each event; None without the counters."""
    if not before or not after:
        return None
    return {k: after[k] - before.get(k, 0) for k in VMSTAT_EVENTS if k in after}


class Loaded(NamedTuple):
    """One boot run's output: what the guest said about itself, its
    scenarios' dma32ctl results by name, its sweep, why it failed (None
    when it did not) and run-guest's status."""
    info: Optional[BootInfo]
    runs: Dict[str, Dict[str, Any]]
    sweep: List[Dict[str, Any]]
    failure: Optional[str]
    status: Optional[RunStatus]


def parse_gart(lines, have):
    """The K8 GART from the boot log: {"start", "end" (the aperture, end
    exclusive), "iommu_mb" (the part the IOMMU maps into, its top), "in_use"
    (PCI-DMA: using GART IOMMU)}, merged into HAVE; None on a boot without it."""
    text = " ".join(lines)
    out = dict(have or {})
    m = re.search(r"Mapping aperture over RAM \[mem (0x[0-9a-f]+)-(0x[0-9a-f]+)\]", text)
    if m:
        out.update(start=int(m.group(1), 16), end=int(m.group(2), 16) + 1)
    m = re.search(r"Reserving ([0-9]+)MB of IOMMU area", text)
    if m:
        out["iommu_mb"] = int(m.group(1))
    if out or "using GART IOMMU" in text:
        out["in_use"] = "using GART IOMMU" in text
    return out or None


def load_boot(raw: str, boot: str, status: Optional[RunStatus], counters: Dict[str, str]) -> Loaded:
    """One boot run's raw/BOOT.out, with run-guest's status from the
    manifest; counters: record key -> kernel file (the manifest's)."""
    text = ""
    out_path = os.path.join(raw, boot + ".out")
    if os.path.exists(out_path):
        with open(out_path, errors="replace") as f:
            text = f.read()
    sections = parse_sections(text)
    info = {"zones": {}, "counters_present": [], "iommu_groups": 0, "page_alloc_shuffle": None,
            "cmdline": None, "zone_layout_line": None, "device": None, "swiotlb_pool": None,
            "zones_peak": None, "zones_pressed": None, "buddyinfo_pressed": None, "prepare": None,
            "ram": None, "vmstat": None, "vmstat_pressed": None, "kernel_release": None,
            "gart_aperture": None, "nodes": None, "node_ranges": None, "device_nodes": None,
            "zones_after": None, "vmstat_after": None, "swaps": None}
    runs, sweep, done, snaps = {}, [], False, {}
    devruns, snapshots = {}, {}
    for i, (kind, args, lines) in enumerate(sections):
        nxt = sections[i + 1] if i + 1 < len(sections) else None
        rc = int(nxt[1]) if nxt and nxt[0] == "rc" and nxt[1].isdigit() else None
        err_sec = sections[i + 2] if i + 2 < len(sections) and sections[i + 2][0] == "stderr" else None
        stderr = " ".join(l.strip() for l in err_sec[2] if l.strip()) if err_sec else ""
        if kind == "file" and args == "/proc/zoneinfo":
            info["zones"] = parse_zoneinfo(lines)
            info["nodes"] = parse_zoneinfo_nodes(lines)
        elif kind == "file" and args == "zoneinfo:after":
            info["zones_after"] = parse_zoneinfo(lines) or None
        elif kind == "file" and args == "vmstat:after":
            info["vmstat_after"] = parse_vmstat(lines) or None
        elif kind == "file" and args == "/proc/swaps":
            info["swaps"] = [l.split()[0] for l in lines[1:] if l.strip()]
        elif kind == "file" and args == "dmesg:node-ranges":
            info["node_ranges"] = nodes.parse_ranges(lines)
        elif kind == "file" and args == "dma32demo:numa_node":
            info["device_nodes"] = [{"function": w[0], "node": int(w[1])} for w in (l.split() for l in lines)
                                    if len(w) == 2 and re.match(r"-?\d+$", w[1])] or None
        elif kind == "snap":
            w = args.split()
            if len(w) == 3:
                snaps.setdefault(w[1], {}).setdefault(w[2], {})[w[0]] = lines
        elif kind == "file" and args == "zoneinfo:peak":
            info["zones_peak"] = parse_zoneinfo(lines) or None
        elif kind == "file" and args == "zoneinfo:pressed":
            info["zones_pressed"] = parse_zoneinfo(lines) or None
        elif kind == "file" and args == "/proc/vmstat":
            info["vmstat"] = parse_vmstat(lines) or None
        elif kind == "file" and args == "vmstat:pressed":
            info["vmstat_pressed"] = parse_vmstat(lines) or None
        elif kind == "file" and args == "buddyinfo:pressed":
            info["buddyinfo_pressed"] = parse_buddyinfo(lines) or None
        elif kind == "prepare":
            info["prepare"] = {"rc": rc, "output": " ".join(l.strip() for l in lines if l.strip()) or None}
        elif kind == "file" and args == "/proc/iomem":
            info["ram"] = parse_iomem(lines)
        elif kind == "file" and args == "/proc/cmdline":
            info["cmdline"] = " ".join(lines).strip() or None
        elif kind == "file" and args == "/proc/version":
            m = re.match(r"Linux version (\S+)", " ".join(lines).strip())
            info["kernel_release"] = m.group(1) if m else None
        elif kind == "file" and args.endswith("page_alloc/parameters/shuffle"):
            v = " ".join(lines).strip()
            info["page_alloc_shuffle"] = None if not v else v in ("Y", "1")
        elif kind == "file" and args == "dmesg:swiotlb":
            m = re.search(r"\[mem (0x[0-9a-f]+)-(0x[0-9a-f]+)\]", " ".join(lines))
            info["swiotlb_pool"] = {"start": int(m.group(1), 16), "end": int(m.group(2), 16)} if m else None
        elif kind == "file" and args == "dmesg:gart":
            info["gart_aperture"] = parse_gart(lines, info.get("gart_aperture"))
        elif kind == "file" and args == table.GART + "aperture_pages":
            v = " ".join(lines).strip()
            if v.isdigit():
                info["gart_aperture"] = dict(info.get("gart_aperture") or {}, aperture_pages=int(v))
        elif kind == "file" and args == "dmesg:ZONE_DMA32":
            info["zone_layout_line"] = (lines[0].strip() if lines else "") or None
        elif kind == "ls" and args == "/sys/kernel/iommu_groups":
            info["iommu_groups"] = len([l for l in lines if l.strip()])
        elif kind == "ls":
            info["counters_present"] += [w for l in lines for w in l.split()]   # ls may print columns
        elif kind == "info":
            info["device"] = first_json(lines)
        elif kind == "run":
            runs[args] = {"rc": rc, "stderr": stderr, "result": first_json(lines)}
        elif kind == "devrun":
            name, _, dev = args.partition(" ")
            devruns.setdefault(name, []).append({"device": dev, "rc": rc, "stderr": stderr,
                                                 "result": first_json(lines)})
        elif kind == "counters":
            when, _, name = args.partition(" ")
            snap = snapshots.setdefault(name, {})
            for line in lines:
                path, _, v = line.strip().partition(" ")
                snap.setdefault(path, {})[when] = int(v) if v.strip().isdigit() else None
        elif kind == "sweep":
            w = args.split()
            if len(w) == 3 and w[1].isdigit() and w[2].isdigit():
                sweep.append({"strategy": w[0], "size": int(w[1]), "count": int(w[2]), "rc": rc,
                              "result": first_json(lines)})
        elif kind == "done":
            done = True
    for name, per in devruns.items():
        runs[name] = aggregate(per, snapshots.get(name, {}))
    for name, snap in snaps.items():
        if name in runs:
            runs[name]["snaps"] = snap
    info["counters_present"] = sorted(
        k for k, p in counters.items() if os.path.basename(p) in info["counters_present"])
    failure = None
    if status is None:
        failure = "run-guest wrote no status (see %s)" % os.path.join(raw, boot + ".err")
    elif status.get("outcome") != "ok":
        failure = status.get("message") or status.get("outcome")
    elif not done:
        failure = "the guest's output ended early"
    if not info["zones"]:
        info = None if failure else info
    return Loaded(info, runs, sweep, failure, status)


# What a run on every device at once adds up to: these are summed over the
# devices; ns is the longest run; the kernel counters come from the
# snapshots around the whole batch (the runs overlap).
SUMMED = ("bytes", "buffers", "buffers_verified", "descriptors", "transfers", "mappings",
          "mappings_above_4g", "bounced", "bounced_bytes", "pages", "pages_above_4g", "device_faults",
          "alloc_failures", "coherent_held", "coherent_swiotlb_bytes", "map_failures", "map_failed_segments",
          "cpu_ns")


def aggregate(per, snapshot):
    """One run record out of the per-device runs of an all-devices scenario."""
    results = [p["result"] for p in per if p["result"]]
    res = None
    if results:
        res = {k: (sum(r.get(k) or 0 for r in results) if all(k in r for r in results) else None)
               for k in SUMMED}
        res["ok"] = len(results) == len(per) and all(r.get("ok") for r in results)
        res["errno"] = next((r.get("errno") for r in results if r.get("errno")), None)
        res["ns"] = max(r.get("ns") or 0 for r in results)
        zones = {}
        for r in results:
            for z, v in (r.get("zones") or {}).items():
                zones[z] = zones.get(z, 0) + (v or 0)
        res["zones"] = zones
        res["counters"] = snapshot
        # The address runs of every device, one after the other
        if all(isinstance(r.get("runs"), list) for r in results):
            for k in ("ring", "ctrl", "runs"):
                res[k] = [x for r in results for x in r.get(k) or []]
            res["runs_dropped"] = sum(r.get("runs_dropped") or 0 for r in results)
    return {"rc": max((p["rc"] or 0) for p in per) if all(p["rc"] is not None for p in per) else None,
            "stderr": " ".join(p["stderr"] for p in per if p["stderr"]),
            "result": res, "per_device": per}


def per_device(run):
    """[{device, ok, errno, bounced, coherent_swiotlb_bytes, map_failures}]"""
    if not run:
        return []
    entries = run.get("per_device") or [{"device": None, "rc": run.get("rc"), "result": run.get("result")}]
    out = []
    for p in entries:
        r = p.get("result") or {}
        out.append({"device": r.get("device") or p.get("device"), "ok": bool(r.get("ok")),
                    "errno": r.get("errno") if r else "no result (exit %s)" % p.get("rc"),
                    "bounced": r.get("bounced"), "coherent_swiotlb_bytes": r.get("coherent_swiotlb_bytes"),
                    "map_failures": r.get("map_failures")})
    return out


def mb_s(res):
    if not res or not res.get("ns") or not res.get("bytes"):
        return None
    return round(res["bytes"] * 1000.0 / res["ns"], 1)


def counter(res: Optional[Dict[str, Any]], path: str, level: bool) -> Optional[int]:
    """A kernel counter (its file) around the request: its delta, or its
    level after it; None when the kernel has no such file."""
    c = ((res or {}).get("counters") or {}).get(path) or {}
    before, after = c.get("before"), c.get("after")
    if level:
        return after
    if before is None or after is None:
        return None
    return after - before


def layout_ok(boot: BootSpec, info: Optional[BootInfo]) -> Tuple[Optional[bool], str]:
    """Did the kernel honour dma32= (None when there is nothing to check)?"""
    want = [a.split("=", 1)[1] for a in boot["kernel_args"].split() if a.startswith("dma32=")]
    if not want or not info:
        return None, ""
    d32 = table.zone(info, "DMA32")
    if want[-1] == "off":
        return d32.get("present") == 0, "ZONE_DMA32 present pages %s" % d32.get("present")
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    size = int(want[-1][:-1]) * mult[want[-1][-1]] if want[-1][-1] in mult else int(want[-1])
    end = (d32.get("start_pfn") or 0) + (d32.get("spanned") or 0)
    return end == size >> 12, "ZONE_DMA32 ends at pfn %s" % end


PAGE_SHIFT = 12
RUN_ZONES = ("DMA", "DMA32", "Normal")


def address(v):
    """dma32ctl prints addresses as "0x..." strings; a number here."""
    return None if v is None else int(v, 16)


class MalformedRuns(ValueError):
    """dma32ctl reported address runs that do not parse."""


def parse_runs(res: Dict[str, Any]) -> Tuple[Optional[List[AddressRun]], Optional[List[AddressRun]], Optional[int]]:
    """(device, runs, runs_dropped) from dma32ctl's JSON, addresses as
    numbers: the device's own memory (ring and control buffers, each with
    "kind") and the buffers' runs, a run's "bounce_slot" (the device got a
    swiotlb slot) as "bounced"; (None, None, None) when it reported none
    (not asked, or the request was rejected). Runs that are there but do
    not parse raise MalformedRuns: they are never left unchecked."""
    if "runs" not in res:
        return None, None, None
    try:
        if not isinstance(res["runs"], list):
            raise TypeError("\"runs\" is %s, not a list" % type(res["runs"]).__name__)
        device = [{"kind": kind, "phys": address(r["phys"]), "dma": address(r.get("dma")),
                   "pages": int(r["pages"]), "in_pool": bool(r.get("in_pool"))}
                  for kind in ("ring", "ctrl") for r in res.get(kind) or []]
        runs = [{"buffer": int(r["buffer"]), "phys": address(r["phys"]), "dma": address(r.get("dma")),
                 "pages": int(r["pages"]), "bounced": bool(r.get("bounce_slot")),
                 "in_pool": bool(r.get("in_pool")), "reserved": bool(r.get("reserved"))}
                for r in res["runs"]]
        return device, runs, int(res.get("runs_dropped") or 0)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise MalformedRuns("%s: %s" % (type(e).__name__, e)) from e


def runs_tally(runs, zones):
    """What the buffers' address runs add up to: pages, pages above 4 GiB,
    pages per zone (by the boot's zone spans from /proc/zoneinfo), bounced
    runs and their pages. The truncation-alias window is reserved memory,
    not pages: in none of them."""
    spans = [(z, zones[z]["start_pfn"], zones[z]["start_pfn"] + zones[z]["spanned"])
             for z in RUN_ZONES if (zones.get(z) or {}).get("spanned") and zones[z].get("start_pfn") is not None]
    t = {"pages": 0, "pages_above_4g": 0, "zones": {z: 0 for z in RUN_ZONES + ("other",)},
         "bounced_runs": 0, "bounced_pages": 0}
    for r in runs:
        if r["reserved"]:
            continue
        lo = r["phys"] >> PAGE_SHIFT
        hi = lo + r["pages"]
        t["pages"] += r["pages"]
        t["pages_above_4g"] += max(0, hi - max(lo, table.GIB4 >> PAGE_SHIFT))
        inside = 0
        for z, zlo, zhi in spans:
            n = max(0, min(hi, zhi) - max(lo, zlo))
            t["zones"][z] += n
            inside += n
        t["zones"]["other"] += r["pages"] - inside
        if r["bounced"]:
            t["bounced_runs"] += 1
            t["bounced_pages"] += r["pages"]
    return t


def runs_disagree(rec: Record, zones: Optional[Dict[str, Any]], runs_asked: int) -> Optional[List[str]]:
    """Where the address runs and the driver's counters disagree: a list of
    reasons ([] when they agree), None without runs."""
    if rec.get("runs") is None:
        return None
    if rec["runs_dropped"]:
        return ["%d runs did not fit in --runs %d" % (rec["runs_dropped"], runs_asked)]
    t, out = runs_tally(rec["runs"], zones or {}), []
    for what, mine, theirs in (("pages", t["pages"], rec["pages"]),
                               ("pages above 4 GiB", t["pages_above_4g"], rec["pages_above_4g"]),
                               ("pages per zone", t["zones"], rec["zone_pages"])):
        if mine != theirs:
            out.append("%s: %s in the runs, %s counted" % (what, mine, theirs))
    bounced = rec["driver_bounced"] or 0
    if t["bounced_runs"] > bounced or (t["bounced_runs"] > 0) != (bounced > 0):
        out.append("%d bounced runs for %d bounced mappings" % (t["bounced_runs"], bounced))
    if rec["size"] % (1 << PAGE_SHIFT) == 0 and t["bounced_pages"] << PAGE_SHIFT != (rec["driver_bounced_bytes"] or 0):
        out.append("bounced runs cover %d bytes, %s bytes bounced" % (
            t["bounced_pages"] << PAGE_SHIFT, rec["driver_bounced_bytes"]))
    return out


def make_record(spec: ScenarioSpec, boot: BootSpec, live: "table.Scenario", manifest: Manifest,
                loaded: Loaded) -> Record:
    """One scenario's record from one boot run: what ran from the manifest
    (spec, boot), what judges it from the live table's scenario (live)."""
    info, failure, status = loaded.info, loaded.failure, loaded.status
    run = loaded.runs.get(spec["name"])
    res = (run or {}).get("result") or {}
    zone_dma = ((res.get("counters") or {}).get("zone:DMA")) or {}
    rec: Record = {
        "name": spec["name"], "boot": spec["boot"], "kind": live.kind,
        "kernel": boot["kernel"], "repeats_row": spec["repeats_row"],
        "machine": boot["machine"], "mem": boot["mem"], "kernel_args": boot["kernel_args"],
        "device_props": boot["device_props"], "qemu_args": boot["qemu_args"],
        "shuffle": "random" if "page_alloc.shuffle=1" in boot["kernel_args"].split() else None,
        "pressure": bool(boot["prepare"]),
        "repeats": 1,
        "zone_protection": {z: v.get("protection") for z, v in ((info or {}).get("zones") or {}).items()},
        "strategy": spec["strategy"], "op": spec["op"], "size": spec["size"], "count": spec["count"],
        "verify": spec["verify"],
        "ok": bool(res.get("ok")) if failure is None and run else False,
        "errno": res.get("errno"),
        "device_faults": res.get("device_faults"),
        "driver_bounced": res.get("bounced"),
        "driver_bounced_bytes": res.get("bounced_bytes"),
        "mbps": mb_s(res),
        "zone_dma_pages_used": (res.get("zones") or {}).get("DMA"),
        "zone_dma_free_before": zone_dma.get("before"),
        "zone_dma_free_after": zone_dma.get("after"),
        "zone_dma_managed": table.zone(info, "DMA").get("managed"),
        "pages_above_4g": res.get("pages_above_4g"), "pages": res.get("pages"),
        "zone_pages": res.get("zones"),
        "mappings": res.get("mappings"), "mappings_above_4g": res.get("mappings_above_4g"),
        "bytes": res.get("bytes"), "ns": res.get("ns"), "buffers": res.get("buffers"),
        "fault_addr": res.get("fault_addr"), "coherent_held": res.get("coherent_held"),
        "cpu_ns": res.get("cpu_ns"),
        "devices": boot["devices"],
        "gart": boot["gart"],
        "buffers_verified": res.get("buffers_verified"),
        "alias_canary_errors": res.get("alias_canary_errors"),
        "alias_high": ((info or {}).get("device") or {}).get("alias_window") or None,
        "coherent_mask_bits": ((info or {}).get("device") or {}).get("coherent_mask_bits"),
        "coherent_swiotlb_bytes": res.get("coherent_swiotlb_bytes"),
        "map_refused": res.get("map_failures"),
        "map_failed_segments": res.get("map_failed_segments"),
        "per_device": per_device(run),
        "stderr": (run or {}).get("stderr") or None,
        "guest_ok": failure is None, "guest_error": failure,
        "log": (status or {}).get("console_log"),
        "expect": live.expect,
    }
    for key, path in manifest["counters"].items():
        rec[key] = counter(res, path, key in manifest["levels"])  # type: ignore[literal-required]
    # Around the request, on a NUMA boot or one with swap: every node's NUMA
    # counters and the reclaim counters, as deltas
    rec["numastat"], rec["vmstat_delta"] = snap_deltas((run or {}).get("snaps") or {})
    # Around the request, on a boot with a page cache to reclaim: each
    # zone's free and LRU pages
    rec["zone_lru"] = zone_lru((run or {}).get("snaps") or {})
    if boot["gart"]:
        # No swiotlb on a GART boot: its pool figures are null there, not 0
        rec["coherent_swiotlb_bytes"] = None
        for p in rec["per_device"]:
            p["coherent_swiotlb_bytes"] = None
    # Where the ring, the control buffers and the buffers were: runs of
    # contiguous pages, from the driver; they must add up to its counts.
    try:
        rec["device_runs"], rec["runs"], rec["runs_dropped"] = parse_runs(res)
        rec["runs_disagree"] = runs_disagree(rec, (info or {}).get("zones"), manifest["runs_asked"])
        rec["zone_dma_pages_distinct"] = table.distinct_zone_pages(rec["runs"], info, "DMA")
        # Where the pages came from by node and zone (a NUMA boot's node ranges)
        rec["node_zone_pages"] = nodes.node_zone_pages(rec["runs"], info) if (info or {}).get("node_ranges") \
            and len(info["node_ranges"]) > 1 else None
        # The bound devices' rings and control buffers, apart from the request's own buffers
        # (a K8 GART boot has no swiotlb pool: null, not 0)
        rec["bound_zone_dma_pages"], rec["bound_pool_bytes"] = table.bound_holdings(rec, info)
        if boot["gart"]:
            rec["bound_pool_bytes"] = None
        # What the request's own coherent buffers held of the pool: the
        # driver counts the devices' coherent memory in it, bound or not
        rec["request_pool_bytes"] = (res.get("coherent_swiotlb_bytes") - rec["bound_pool_bytes"]
                                     if None not in (res.get("coherent_swiotlb_bytes"), rec["bound_pool_bytes"])
                                     else None)
    except MalformedRuns as e:
        rec["device_runs"], rec["runs"], rec["runs_dropped"] = None, None, None
        rec["runs_disagree"] = ["malformed address runs from dma32ctl (%s)" % e]
        rec["zone_dma_pages_distinct"] = rec["bound_zone_dma_pages"] = rec["bound_pool_bytes"] = None
        rec["node_zone_pages"] = None
        rec["request_pool_bytes"] = None
    # Bounce cost in units that carry over to real hardware: bytes swiotlb
    # copied per byte the request moved, and guest CPU time per MiB.
    copied = [rec["swiotlb_bounced_bytes"], rec["swiotlb_bounced_bytes_sync"]]
    rec["copied_per_byte"] = (round(sum(copied) / rec["bytes"], 3)
                              if rec["bytes"] and None not in copied else None)
    rec["cpu_ms_per_mib"] = (round(rec["cpu_ns"] / 1e6 / (rec["bytes"] / 1048576.0), 3)
                             if rec["cpu_ns"] and rec["bytes"] else None)
    if failure is not None or not run:
        rec["as_expected"] = False
        rec["showed"] = ("guest failed: %s" % failure if failure else
                         "the guest printed no result for this scenario")
        return rec
    if not res:
        rec["as_expected"] = False
        rec["showed"] = "dma32ctl gave no result (exit %s): %s" % (run.get("rc"), run.get("stderr") or "no output")
        return rec
    try:
        rec["as_expected"], rec["showed"] = live.check(rec, info)
    except KeyError as e:
        raise Refused("the check of %s (%s) reads %s, which this run's records lack (the table reads a counter"
                      " or figure this run did not record): run 'make demo ONLY=%s' again" % (
                          spec["name"], getattr(live.check, "__name__", "?"), e, re.escape(spec["name"]))) from e
    if rec["runs_disagree"]:
        rec["as_expected"] = False
        rec["showed"] = "address runs disagree with the counters (%s); %s" % (
            "; ".join(rec["runs_disagree"]), rec["showed"])
    lok, ltxt = layout_ok(boot, info)
    if lok is False:
        rec["as_expected"] = False
        rec["showed"] = "kernel ignored %s (%s); %s" % (boot["kernel_args"], ltxt, rec["showed"])
    return rec


# The figures a row whose boot ran several times (a random draw:
# page_alloc.shuffle=1) reports as min, median and max over its boots.
REPEATED = ("mbps", "driver_bounced", "driver_bounced_bytes", "swiotlb_bounced", "swiotlb_bounced_bytes",
            "zone_dma_pages_used", "zone_dma_fallbacks", "buffers", "pages", "pages_above_4g", "mappings",
            "mappings_above_4g", "coherent_swiotlb_bytes", "copied_per_byte", "cpu_ms_per_mib")


def combine(recs: List[Record]) -> Record:
    """One record for a row whose boot ran len(recs) times: the median boot's
    record, as it was (its counts, address runs and memory map agree with
    each other), with "median", "min" and "max" beside it for each REPEATED
    figure, and "per_boot" what each boot showed. The median boot is the
    middle one ordered by pages above 4 GiB, then buffers, then MB/s: for
    the figure that varies most between boots its figure is the median. A
    boot whose guest failed has no figures to order: the median boot is
    one whose guest ran, and a failed boot is named beside it. As expected
    only when every boot was (its check and every column's definition: the
    records come here through table.apply_definitions)."""
    if len(recs) == 1:
        return recs[0]
    ran = [k for k, r in enumerate(recs) if r["guest_ok"]] or list(range(len(recs)))
    order = sorted(ran, key=lambda k: tuple(recs[k].get(f) or 0 for f in ("pages_above_4g", "buffers", "mbps")))
    mid = order[len(order) // 2]
    rec: Record = dict(recs[mid])  # type: ignore[assignment]
    rec["repeats"] = len(recs)
    rec["median_boot"] = mid + 1
    rec["median"], rec["min"], rec["max"] = {}, {}, {}
    for key in REPEATED:
        vals = [r[key] for r in recs if r.get(key) is not None]
        if vals:
            rec["median"][key] = statistics.median(vals)
            rec["min"][key], rec["max"][key] = min(vals), max(vals)
    rec["per_boot"] = [{"as_expected": r["as_expected"], "ok": r["ok"], "errno": r["errno"],
                        "guest_ok": r["guest_ok"], "showed": r["showed"], "log": r["log"],
                        "definitions_broken": r.get("definitions_broken") or []} for r in recs]
    rec["definitions_broken"] = ["boot %d: %s" % (k + 1, d) for k, r in enumerate(recs)
                                 for d in r.get("definitions_broken") or []]
    rec["guest_ok"] = all(r["guest_ok"] for r in recs)
    rec["guest_error"] = next((r["guest_error"] for r in recs if not r["guest_ok"]), None)
    # A boot whose check skipped (None: its random draw showed nothing)
    # neither passes nor fails the row; at least one boot must show it.
    rec["as_expected"] = (all(r["as_expected"] is not False for r in recs)
                          and any(r["as_expected"] for r in recs))
    varied = ["%s %s / %s / %s" % (k, fmt_num(rec["min"][k]), fmt_num(rec["median"][k]), fmt_num(rec["max"][k]))
              for k in rec["median"] if rec["min"][k] != rec["max"][k]]
    bad = [(k + 1, r) for k, r in enumerate(recs) if r["as_expected"] is False]
    skipped = [k + 1 for k, r in enumerate(recs) if r["as_expected"] is None]
    rec["showed"] = "%d boots (min / median / max: %s); the median boot, %d: %s%s%s" % (
        len(recs), ", ".join(varied) if varied else "the same figures each time", mid + 1, recs[mid]["showed"],
        "".join("; NOT as expected on boot %d: %s" % (k, r["showed"]) for k, r in bad if k != mid + 1),
        "; skipped on boot%s %s (nothing to show)%s" % (
            "s" if len(skipped) > 1 else "", ", ".join(map(str, skipped)),
            "" if any(r["as_expected"] for r in recs) else "; no boot showed it") if skipped else "")
    return rec


def fmt_num(v: Any) -> str:
    return ("%.2f" % v).rstrip("0").rstrip(".") if isinstance(v, float) else str(v)


def sweep_spread(sweeps: Dict[str, List[Dict[str, Any]]], boots: Dict[str, BootSpec]
                 ) -> Tuple[Dict[str, Dict[int, Dict[str, Any]]], Dict[str, List[str]], List[Dict[str, Any]]]:
    """From all sweep records: ({label: {size: {min, median, max, runs}}}
    in MB/s over the runs that succeeded, {label: [boots it ran on]},
    [failed sweep runs]). Every run counts, not only the best: the spread
    is what a ratio between two lines must clear (table.ratio)."""
    got: Dict[str, Dict[int, List[float]]] = {}
    where: Dict[str, List[str]] = {}
    failed = []
    for boot, recs in sweeps.items():
        for s in recs:
            res = s.get("result") or {}
            v = mb_s(res)
            if s.get("rc") != 0 or not res.get("ok") or v is None:
                failed.append({"boot": boot, "strategy": s["strategy"], "size": s["size"], "rc": s.get("rc"),
                               "errno": res.get("errno")})
                continue
            label = boots[boot]["sweep"].get(s["strategy"], s["strategy"])
            got.setdefault(label, {}).setdefault(s["size"], []).append(v)
            if boot not in where.setdefault(label, []):
                where[label].append(boot)
    spread = {label: {size: {"min": min(v), "median": round(statistics.median(v), 1), "max": max(v), "runs": len(v)}
                      for size, v in sorted(d.items())} for label, d in got.items()}
    return spread, where, failed


def read_manifest(raw: str) -> Manifest:
    path = os.path.join(raw, "manifest.json")
    if not os.path.exists(path):
        raise Refused("%s has no manifest.json, so nothing says what ran there: run 'make demo' "
                      "(or python3 -m demo collect)" % raw)
    try:
        with open(path) as f:
            manifest = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise Refused("%s is not readable JSON (%s): run 'make demo' again" % (path, e)) from e
    if not isinstance(manifest, dict) or manifest.get("schema") != SCHEMA:
        raise Refused("%s has schema %s, this judge reads schema %d: run 'make demo' again" % (
            path, manifest.get("schema") if isinstance(manifest, dict) else "?", SCHEMA))
    if not manifest.get("complete"):
        done = [r["name"] for b in manifest["boots"].values() for r in b["runs"]]
        raise Refused("%s is from a collect that did not finish (%d boots ran: %s): run 'make demo' again" % (
            path, len(done), ", ".join(done) or "none"))
    return manifest


# What a scenario asks of its boot and of dma32ctl, what a boot is, and
# what every request of a run shares (the counters dma32ctl reads and how
# they are reported, the address runs it asks for, the sweep): a change to
# any of them in the table changes what a re-run would measure.
REQUEST_KEYS = ("boot", "strategy", "op", "size", "count", "verify", "all_devices", "repeats_row")
BOOT_KEYS = ("kernel", "machine", "mem", "kernel_args", "device_props", "qemu_args", "devices", "prepare",
             "repeats", "gart", "timeout")
RUN_KEYS = ("counters", "levels", "runs_asked", "sweep")


class Disagreement(NamedTuple):
    """One way the table would now run a manifest otherwise than it ran:
    the scenarios and boots it concerns (() for all of them) and what."""
    names: Tuple[str, ...]
    text: str


def run_disagrees(manifest: Manifest) -> List[Disagreement]:
    """What every request of the run shares, then and now."""
    now = {"counters": dict(table.COUNTERS), "levels": sorted(table.LEVELS), "runs_asked": table.RUNS,
           "sweep": collect.sweep_spec(manifest["sweep"]["enabled"])}
    out = []
    for key in RUN_KEYS:
        then = manifest[key]  # type: ignore[literal-required]
        if key == "counters":
            out += [Disagreement((), "counter %s: %s when it ran, the table now says %s" % (
                c, then.get(c, "not read"), now[key].get(c, "not read")))
                for c in sorted(set(then) | set(now[key])) if then.get(c) != now[key].get(c)]
        elif then != now[key]:
            out.append(Disagreement((), "%s was %r when it ran, the table now says %r" % (key, then, now[key])))
    return out


def first_difference(then: str, now: str) -> str:
    """Where two guest commands part: a few words of each around it."""
    at = next((i for i, (x, y) in enumerate(zip(then, now)) if x != y), min(len(then), len(now)))
    start = max(0, at - 40)
    return "at character %d: ran ...%s..., now ...%s..." % (at, then[start:at + 40], now[start:at + 40])


def command_disagrees(manifest: Manifest, tbl: table.KernelTable) -> List[Disagreement]:
    """Each boot run's exact run-guest arguments and guest command, then
    and as the table builds them now."""
    out = []
    for name, ran in manifest["boots"].items():
        if name not in tbl.boot:
            continue
        commands = collect.boot_commands(tbl, manifest, name)
        for run in ran["runs"]:
            argv = collect.run_guest_args(tbl.boot[name], run["name"], manifest["guest_opts"])
            if run["argv"] != argv:
                out.append(Disagreement((name,), "boot %s (%s): run-guest was given %s, the table now gives %s" % (
                    name, run["name"], " ".join(run["argv"]), " ".join(argv))))
            now = commands.get(run["name"])
            if now is None:
                out.append(Disagreement((name,), "boot %s: %s ran, the table now has no such boot run" % (
                    name, run["name"])))
            elif run["command"] != now:
                out.append(Disagreement((name,), "boot %s (%s): the guest command the table builds now differs"
                                        " %s" % (name, run["name"], first_difference(run["command"], now))))
    return out


def table_disagrees(manifest: Manifest, tbl: table.KernelTable) -> List[Disagreement]:
    """Where the table TBL would run the manifest's scenarios otherwise
    than they ran: [] when it would run them the same."""
    out = run_disagrees(manifest)
    live = {s.name: s for s in tbl.scenarios}
    for spec in manifest["scenarios"]:
        s = live.get(spec["name"])
        if s is None:
            out.append(Disagreement((spec["name"],), "%s ran, but the table has no such scenario now" % spec["name"]))
            continue
        now = collect.scenario_spec(s)
        out += [Disagreement((spec["name"],), "%s: %s was %r when it ran, the table now says %r" % (
            spec["name"], k, spec[k], now[k]))  # type: ignore[literal-required]
            for k in REQUEST_KEYS if spec[k] != now[k]]  # type: ignore[literal-required]
    for name, ran in manifest["boots"].items():
        b = tbl.boot.get(name)
        if b is None:
            out.append(Disagreement((name,), "boot %s ran, but the table has no such boot now" % name))
            continue
        now = collect.boot_spec(b, manifest["kernel"])
        out += [Disagreement((name,), "boot %s: %s was %r when it ran, the table now says %r" % (
            name, k, ran[k], now[k]))  # type: ignore[literal-required]
            for k in BOOT_KEYS if ran[k] != now[k]]  # type: ignore[literal-required]
    return out + consequences(manifest, out, command_disagrees(manifest, tbl))


def consequences(manifest: Manifest, causes: List[Disagreement],
                 commands: List[Disagreement]) -> List[Disagreement]:
    """The command disagreements: in full for boots no cause above explains;
    one line counting the rest (a changed counter, request or boot changes
    the guest command of every boot run it concerns)."""
    boot_of = {s["name"]: s["boot"] for s in manifest["scenarios"]}
    explained = {boot_of.get(n, n) for d in causes for n in d.names}
    everything = any(not d.names for d in causes)
    rest = [d for d in commands if everything or set(d.names) & explained]
    out = [d for d in commands if d not in rest]
    if rest:
        out.append(Disagreement(tuple(sorted({n for d in rest for n in d.names})),
                                "and so the guest command or run-guest arguments of %d boot runs" % len(rest)))
    return out


def output_disagrees(manifest: Manifest, loaded: Dict[str, Loaded], raw: str) -> List[str]:
    """Where the guests' output disagrees with the manifest: [] when it
    does not."""
    out = []
    runs = {r["name"]: (b, r) for b in manifest["boots"].values() for r in b["runs"]}
    extra = sorted(f[:-4] for f in os.listdir(raw) if f.endswith(".out") and f[:-4] not in runs)
    if extra:
        out.append("raw/ holds output of boots the manifest does not list: %s" % ", ".join(extra))
    for name, (boot, run) in runs.items():
        on_disk = read_status_file(os.path.join(raw, name + ".status.json"))
        if on_disk is not None and on_disk != run["status"]:
            out.append("%s: run-guest's status file says %s, the manifest %s" % (
                name, on_disk.get("outcome"), (run["status"] or {}).get("outcome")))
        info = loaded[name].info
        if not info:
            continue
        words = (info.get("cmdline") or "").split()
        missing = [w for w in boot["kernel_args"].split() if w not in words]
        if info.get("cmdline") is not None and missing:
            out.append("%s: the kernel booted without %s, which the manifest says it was given" % (
                name, " ".join(missing)))
        release = info.get("kernel_release")
        if release is not None and not (release == boot["kernel"] or release.startswith(boot["kernel"] + ".")
                                        or release.startswith(boot["kernel"] + "-")):
            out.append("%s: the guest ran Linux %s, the manifest says %s" % (name, release, boot["kernel"]))
    for spec in manifest["scenarios"]:
        for run in manifest["boots"][spec["boot"]]["runs"]:
            got = loaded[run["name"]].runs.get(spec["name"])
            results = [p.get("result") for p in (got or {}).get("per_device") or [got or {}]]
            for res in results:
                if not res:
                    continue
                diff = ["%s %r" % (k, res[k]) for k in ("strategy", "op", "size", "count", "verify")
                        if k in res and res[k] != spec[k]]  # type: ignore[literal-required]
                if diff and not any(o.startswith("%s (%s):" % (spec["name"], run["name"])) for o in out):
                    out.append("%s (%s): dma32ctl ran %s; the manifest asked %s" % (
                        spec["name"], run["name"], ", ".join(diff),
                        ", ".join("%s %r" % (k, spec[k]) for k in ("strategy", "op", "size", "count", "verify"))))
    return out


def read_status_file(path: str) -> Optional[RunStatus]:
    try:
        with open(path) as f:
            status = json.load(f)
    except (OSError, json.JSONDecodeError):
        return None
    return status if isinstance(status, dict) else None


def refuse(what: str, problems: List[str], hint: str) -> None:
    if problems:
        shown = problems[:8] + (["... and %d more" % (len(problems) - 8)] if len(problems) > 8 else [])
        raise Refused("%s:\n  %s\n%s" % (what, "\n  ".join(shown), hint))


class RawRun(NamedTuple):
    """raw/ as loaded: the manifest and every boot run's output."""
    manifest: Manifest
    boots: Dict[str, Loaded]


def load(raw: str) -> RawRun:
    """raw/ as it is, checked against itself: Refused when its manifest is
    missing, incomplete, of another schema, or disagrees with the guests'
    output."""
    manifest = read_manifest(raw)
    loaded = {r["name"]: load_boot(raw, r["name"], r["status"], manifest["counters"])
              for b in manifest["boots"].values() for r in b["runs"]}
    refuse("the guests' output in %s disagrees with its manifest" % raw, output_disagrees(manifest, loaded, raw),
           "It was not written by one run of collect: run 'make demo' again.")
    return RawRun(manifest, loaded)


def table_for(manifest: Manifest) -> table.KernelTable:
    """The table of the manifest's kernel; Refused when the project no
    longer has that kernel."""
    try:
        return table.for_kernel(manifest["kernel"])
    except ValueError as e:
        raise Refused("this run was collected for a kernel the table does not have now: %s" % e) from e


def check_against(run: RawRun, tbl: table.KernelTable, expect_kernel: Optional[str] = None) -> None:
    """Refused when the table TBL would not judge this run as what it was,
    or when the run is not for EXPECT_KERNEL (when given)."""
    m = run.manifest
    if expect_kernel and expect_kernel != m["kernel"]:
        raise Refused("this run was collected with %s as the demo's kernel (%s the other), and you asked for %s:"
                      " its rows are %s's. Re-judge with KERNEL=%s, or run 'make demo KERNEL=%s'" % (
                          m["kernel"], m["other_kernel"], expect_kernel, m["kernel"], m["kernel"], expect_kernel))
    if tbl.kernel != m["kernel"]:
        raise Refused("this run was collected for kernel %s, the table given is %s's" % (m["kernel"], tbl.kernel))
    changed = table_disagrees(m, tbl)
    on_boot = {b: [s["name"] for s in m["scenarios"] if s["boot"] == b] for b in m["boots"]}
    names = sorted({x for d in changed for n in d.names for x in on_boot.get(n, [n])})
    rerun = ("make demo ONLY='%s'" % "|".join(re.escape(n) for n in names)
             if changed and all(d.names for d in changed) else "make demo")
    refuse("the table has changed what this run measured", [d.text for d in changed],
           "Its checks would judge numbers of another request. Run the scenarios again: %s" % rerun)


Judging = Dict[str, Any]   # scenario name -> the live table's Scenario (check, expect, kind)
ClaimFn = Callable[[Dict[str, Record], Dict[str, Optional[BootInfo]], Dict[str, Dict[int, float]]], Optional[table.ClaimParts]]


def evaluate(run: RawRun, judging: Judging, claims: Sequence[Tuple[str, ClaimFn]]) -> Results:
    """results.json from loaded raw/ and what judges it: judging[name]'s
    check, expect and kind, and the claims as (quote, function). Every
    boot's record is held to every column's definition (as code) before a
    repeated row combines them."""
    m = run.manifest
    records = []
    for spec in m["scenarios"]:
        boot = m["boots"][spec["boot"]]
        records.append(combine([table.apply_definitions(
            make_record(spec, boot, judging[spec["name"]], m, run.boots[r["name"]])) for r in boot["runs"]]))
    firsts = {b: run.boots[spec["runs"][0]["name"]] for b, spec in m["boots"].items() if spec["runs"]}
    infos = {b: loaded.info for b, loaded in firsts.items()}
    sweeps = {b: loaded.sweep for b, loaded in firsts.items()}
    spread, sweep_boots, failed_sweeps = sweep_spread(sweeps, m["boots"])
    by_name = {r["name"]: r for r in records}
    out_claims: List[Claim] = []
    for quote, fn in claims:
        txt = fn(by_name, infos, spread)
        if txt is not None:
            out_claims.append({"id": fn.__name__, "claim": quote, "before": txt.before, "after": txt.after,
                               "caveat": txt.caveat})
    kernel_counters = sorted({c for i in infos.values() if i for c in i.get("counters_present", [])})
    boots: Dict[str, BootResult] = {}
    for b, loaded in firsts.items():
        spec, i = m["boots"][b], loaded.info or {}
        boots[b] = {"kernel": spec["kernel"], "machine": spec["machine"], "mem": spec["mem"],
                    "devices": spec["devices"], "kernel_args": spec["kernel_args"],
                    "device_props": spec["device_props"], "qemu_args": spec["qemu_args"],
                    "cmdline": i.get("cmdline"), "zone_layout_line": i.get("zone_layout_line"),
                    "zones": i.get("zones"), "device": i.get("device"),
                    "iommu_groups": i.get("iommu_groups"),
                    "page_alloc_shuffle": i.get("page_alloc_shuffle"),
                    "swiotlb_pool": i.get("swiotlb_pool"),
                    "gart": spec["gart"], "gart_aperture": i.get("gart_aperture"),
                    "vmstat_during_prepare": vmstat_delta(i.get("vmstat"), i.get("vmstat_pressed")),
                    "prepare": spec["prepare"] or None,
                    "prepare_output": i.get("prepare"),
                    "zones_peak": i.get("zones_peak"),
                    "zones_pressed": i.get("zones_pressed"),
                    "buddyinfo_pressed": i.get("buddyinfo_pressed"),
                    "ram": i.get("ram"),
                    "numa": spec.get("numa") or None, "device_node": spec.get("device_node"),
                    "swap": spec.get("swap") or 0,
                    "nodes": i.get("nodes") if i.get("node_ranges") else None,
                    "node_ranges": i.get("node_ranges"), "device_nodes": i.get("device_nodes"),
                    "zones_after": i.get("zones_after"), "vmstat_after": i.get("vmstat_after"),
                    "vmstat_during_scenarios": vmstat_delta(i.get("vmstat_pressed") or i.get("vmstat"),
                                                            i.get("vmstat_after")),
                    "swaps": i.get("swaps"),
                    "seconds": (loaded.status or {}).get("seconds"),
                    "error": loaded.failure, "log": (loaded.status or {}).get("console_log")}
    return {
        "schema": SCHEMA,
        "kernel": m["kernel"],
        "versions": m["versions"],
        "build": m["build"],
        "collected": m["started"],
        "seconds": m["seconds"],
        "kernel_counters_present": kernel_counters,
        "boots": boots,
        "scenarios": records,
        "claims": out_claims,
        # mbps: per line and size, min, median and max MB/s over the runs
        # that succeeded, and how many did (of runs_per_point); boots: the
        # boot(s) each line ran on
        "sweep": {"op": m["sweep"]["op"], "bytes_per_point": m["sweep"]["total"],
                  "runs_per_point": m["sweep"]["repeat"],
                  "mbps": {l: {str(s): p for s, p in d.items()} for l, d in spread.items()},
                  "boots": sweep_boots,
                  "failed_runs": failed_sweeps},
        # from the medians; null when the two ranges [min, max] overlap
        "summary": {"ratio_direct_over_bounced_1M": table.ratio(spread, "streaming-dma32", "streaming"),
                    "ratio_coherent_over_bounced_1M": table.ratio(spread, "coherent", "streaming"),
                    "scenarios": len(records),
                    "as_expected": sum(1 for r in records if r["as_expected"]),
                    "not_as_expected": [r["name"] for r in records if not r["as_expected"]],
                    "guest_failures": sum(1 for r in records if not r["guest_ok"])},
    }


def judging_of(tbl: table.KernelTable) -> Judging:
    return {s.name: s for s in tbl.scenarios}


def judge(raw: str, expect_kernel: Optional[str] = None, tbl: Optional[table.KernelTable] = None) -> Results:
    """raw/ -> results.json's content, judged with the table of the run's
    kernel (or TBL); Refused when raw/ cannot be judged as what it was, or
    was collected for another kernel than EXPECT_KERNEL (see the module's
    docstring). Reads raw/ and the table alone: no environment, no clock."""
    run = load(raw)
    tbl = tbl or table_for(run.manifest)
    check_against(run, tbl, expect_kernel)
    return evaluate(run, judging_of(tbl), tbl.claims)
