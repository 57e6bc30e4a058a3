"""NUMA nodes: each node's page range from the guest's boot log, its zones
as the ZONE_DMA32 patch computed them, and which node and zone a page lies
in.

The patch ("[PATCH] x86_64: Add 4GB DMA32 zone", Andi Kleen, 2005) sized
every node's zones with size_zones(z, h, start_pfn, end_pfn) in
arch/x86_64/mm/init.c, called for each node by setup_node_zones() in
arch/x86_64/mm/numa.c ("Compute zone sizes for the DMA and DMA32 zones in
a node"):

    if (start_pfn < MAX_DMA_PFN) z[ZONE_DMA] = MAX_DMA_PFN - start_pfn;
    if (start_pfn < MAX_DMA32_PFN) {
        dma32_pfn = min(MAX_DMA32_PFN, end_pfn);
        z[ZONE_DMA32] = dma32_pfn - start_pfn;
    }
    z[ZONE_NORMAL] = end_pfn - start_pfn;
    /* Remove lower zones from higher ones. */
    w = 0; for each i: if (z[i]) z[i] -= w; w += z[i];
    /* Compute holes */
    w = 0; for each i: s = w; w += z[i]; h[i] = e820_hole_size(s, w);

spans() is that computation; holes are measured in each zone's own pfn
range (present()); posted_holes() is the hole loop as posted, which starts
at pfn 0 whatever the node's start_pfn.

A node's ranges come from free_area_init()'s "Early memory node ranges"
block of the boot log ("  node   0: [mem 0x...-0x...]"); a node's start
and end pfn are its first range's start and its last range's end + 1.
"""
import re

PAGE_SHIFT = 12
MAX_DMA_PFN = (16 << 20) >> PAGE_SHIFT    # 16 MiB: ZONE_DMA's end
MAX_DMA32_PFN = (1 << 32) >> PAGE_SHIFT   # 4 GiB: ZONE_DMA32's end
ZONES = ("DMA", "DMA32", "Normal")
# The NUMA rows' device sits on this node, the one wholly above 4 GiB
NUMA_DEVICE_NODE = 1

RANGE_LINE = re.compile(r"node +(\d+): \[mem (0x[0-9a-f]+)-(0x[0-9a-f]+)\]")


def parse_ranges(lines):
    """{node: [[start_pfn, end_pfn), ...]} from the boot log's "Early memory
    node ranges" lines; None when there are none."""
    out = {}
    for line in lines:
        m = RANGE_LINE.search(line)
        if m:
            out.setdefault(m.group(1), []).append([int(m.group(2), 16) >> PAGE_SHIFT,
                                                   (int(m.group(3), 16) + 1) >> PAGE_SHIFT])
    return out or None


def node_bounds(ranges):
    """(start_pfn, end_pfn) of a node: its first range's start, its last's end."""
    return ranges[0][0], ranges[-1][1]


def spans(start, end):
    """{zone: (first pfn, pages spanned)} as size_zones() computes them for
    a node from START to END (pfns); zones it leaves empty span 0 pages."""
    z = [0, 0, 0]
    if start < MAX_DMA_PFN:
        z[0] = MAX_DMA_PFN - start
    if start < MAX_DMA32_PFN:
        z[1] = min(MAX_DMA32_PFN, end) - start
    z[2] = end - start
    w = 0
    for i in range(3):
        if z[i]:
            z[i] -= w
        w += z[i]
    out, at = {}, start
    for i, name in enumerate(ZONES):
        out[name] = (at if z[i] else None, z[i])
        at += z[i]
    return out


def hole(ranges, lo, hi):
    """Pages of [LO, HI) in none of the node's RANGES."""
    covered = sum(max(0, min(hi, b) - max(lo, a)) for a, b in ranges)
    return (hi - lo) - covered


def formula(ranges):
    """{zone: {start_pfn, spanned, present}} of one node: spans by
    size_zones(), present = span less the holes in the zone's own range."""
    start, end = node_bounds(ranges)
    out = {}
    for name, (first, n) in spans(start, end).items():
        out[name] = {"start_pfn": first, "spanned": n,
                     "present": n - hole(ranges, first, first + n) if n else 0}
    return out


def posted_holes(ranges, machine_ranges):
    """{zone: hole pages} as the posted loop computes them for one node:
    s and w start at pfn 0, not at the node's start_pfn, and
    e820_hole_size() measures against the whole machine's RAM
    (MACHINE_RANGES: every node's ranges)."""
    start, end = node_bounds(ranges)
    out, w = {}, 0
    for name, (_, n) in spans(start, end).items():
        s = w
        w += n
        out[name] = hole(machine_ranges, s, w) if n else 0
    return out


def where(phys, ranges_by_node, zones_by_node):
    """(node, zone) of a physical address: the node whose ranges hold it and
    the zone of that node (/proc/zoneinfo's spans) that does; (None, None)
    when no node's memory holds it."""
    pfn = phys >> PAGE_SHIFT
    for node, ranges in (ranges_by_node or {}).items():
        if any(a <= pfn < b for a, b in ranges):
            for z, v in ((zones_by_node or {}).get(node) or {}).items():
                if v.get("spanned") and v.get("start_pfn") is not None \
                        and v["start_pfn"] <= pfn < v["start_pfn"] + v["spanned"]:
                    return node, z
            return node, None
    return None, None


def node_zone_pages(runs, info):
    """{"node N ZONE": pages} of address runs, page by page; None without
    runs or without the boot's node ranges."""
    ranges, zones = (info or {}).get("node_ranges"), (info or {}).get("nodes")
    if runs is None or not ranges or not zones:
        return None
    out = {}
    for r in runs:
        if r.get("reserved") or r.get("phys") is None:
            continue
        for k in range(r["pages"]):
            node, z = where(r["phys"] + (k << PAGE_SHIFT), ranges, zones)
            key = "node %s %s" % (node if node is not None else "?", z or "?")
            out[key] = out.get(key, 0) + 1
    return out
