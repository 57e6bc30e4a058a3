"""The report's NUMA and reclaim section (report.md's $nodes_section), from
results.json alone: per NUMA boot each node's zones as /proc/zoneinfo gives
them next to the patch's size_zones() of the node's page range (nodes.py),
the NUMA rows' pages by node and zone with every node's NUMA counters
across the request; per swap or pressure boot each zone's free pages
against its watermarks and lowmem_reserve at the peak, after the aging and
after the requests, and the reclaim counters across each request."""
from . import nodes, table
from .expect import fmt

NUMASTAT_MEANING = (
    "*numa_hit*: allocations whose page came from the node of their preferred zone (the first zone of the"
    " zonelist that the request may use); *numa_miss*: allocations that came from this node although their"
    " preferred zone was on another (*numa_foreign* counts the same allocation on the preferred node);"
    " *interleave_hit*: interleave-policy allocations that got their intended node; *local_node* and"
    " *other_node*: allocations from this node by a CPU on this node, or on another one. All count"
    " allocations, not pages: a coherent 1 MiB buffer is one order-8 allocation, a page-by-page buffer 256."
    " For a device on a node without ZONE_DMA32 the preferred zone is already node 0's ZONE_DMA32 (node 1's"
    " zonelist has no eligible zone of its own): the kernel counts its remote allocations as *numa_hit*, not"
    " *numa_miss* (`zone_statistics()`, mm/page_alloc.c in 6.1 and 6.12); *other_node* on node 0 is what"
    " shows them remote, since the request ran on CPU %d, which is on node 1" % table.NUMA_CPU)
RECLAIM = ("pgscan_kswapd", "pgsteal_kswapd", "pgscan_direct", "pgsteal_direct", "pswpout", "pageoutrun",
           "compact_stall", "compact_success")


def zone_rows(boot, name):
    """Per node and zone: zoneinfo against the formula (and as posted)."""
    ranges, got = boot.get("node_ranges") or {}, boot.get("nodes") or {}
    every = [r for rs in ranges.values() for r in rs]
    out = []
    for node, rs in sorted(ranges.items()):
        want, posted = nodes.formula(rs), nodes.posted_holes(rs, every)
        for z in nodes.ZONES:
            have = (got.get(node) or {}).get(z) or {}
            w = want[z]
            same = all((have.get(k) or 0) == (w[k] or 0) for k in ("spanned", "present")) and (
                not w["spanned"] or have.get("start_pfn") == w["start_pfn"])
            out.append("| %s | %s | [%d, %d) | %s | %s | %s | %s | %s | %s | %s |" % (
                name, node, rs[0][0], rs[-1][1], z, fmt(have.get("start_pfn") if have.get("spanned") else None),
                fmt(have.get("spanned")), fmt(have.get("present")),
                "%s / %d / %d" % (fmt(w["start_pfn"]), w["spanned"], w["present"]),
                w["spanned"] - posted[z] if w["spanned"] else 0, "yes" if same else "**NO**"))
    return out


def numa_rows(results):
    out = []
    for r in results["scenarios"]:
        if not r.get("numastat") or r.get("repeats_row"):
            continue
        nz = r.get("node_zone_pages") or {}
        b = results["boots"].get(r["boot"]) or {}
        out.append("| `%s` | %s | %s | %s | %s | %s |" % (
            r["name"], ", ".join(str(d["node"]) for d in b.get("device_nodes") or []) or "?",
            r["errno"] or "ok", ", ".join("%s: %d" % kv for kv in sorted(nz.items())) or "-",
            fmt(table.numa_allocations(r)),
            "; ".join("node %s: %s" % (n, ", ".join("%s %+d" % (k, v) for k, v in d.items() if v))
                      for n, d in sorted(r["numastat"].items()))))
    return out


def watermark_rows(results):
    out = []
    for name, b in results["boots"].items():
        if not (b.get("zones_peak") or b.get("zones_pressed")):
            continue
        prepared = "after the read" if b.get("prepare") == table.PAGE_CACHE else "after aging"
        for when, zones in (("peak", b.get("zones_peak")), (prepared, b.get("zones_pressed")),
                            ("after the requests", b.get("zones_after"))):
            for z in nodes.ZONES:
                v = (zones or {}).get(z)
                if not v or not v.get("present"):
                    continue
                out.append("| %s | %s | %s | %s | %s / %s / %s | %s |" % (
                    name, when, z, fmt(v.get("free")), fmt(v.get("min")), fmt(v.get("low")), fmt(v.get("high")),
                    " ".join(str(x) for x in v.get("protection") or []) or "-"))
    return out


def reclaim_rows(results):
    out = []
    for r in results["scenarios"]:
        b = results["boots"].get(r["boot"]) or {}
        if not b.get("prepare") or r.get("repeats_row") or not r["boot"].startswith("pressure"):
            continue
        v = r.get("vmstat_delta")
        out.append("| `%s` | %s | %s | %s | %s |" % (
            r["name"], "%d MiB" % b["swap"] if b.get("swap") else "none", r["errno"] or "ok", fmt(r.get("buffers")),
            " | ".join(fmt((v or {}).get(k)) for k in RECLAIM)))
    return out


def nodes_section(results):
    """The report's NUMA and reclaim section (markdown); "" when no such
    boot ran."""
    numa = [(n, b) for n, b in results["boots"].items() if b.get("node_ranges") and len(b["node_ranges"]) > 1]
    out = []
    if numa:
        out += ["### Zones per node", "",
                "Each node's zones as `/proc/zoneinfo` gives them (`Node N, zone X`: start_pfn, spanned, present)"
                " next to the patch's `size_zones(z, h, start_pfn, end_pfn)` for the node's page range (its first"
                " range's start to its last range's end in the boot log's \"Early memory node ranges\"), present"
                " pages as the span less the holes in the zone's own range; *as posted* is the present count the"
                " patch's hole loop gives, which measures from pfn 0 whatever the node's start"
                " (`e820_hole_size(s, w)` with `s` and `w` from 0). `numa-node-zones` checks every"
                " start_pfn, spanned and present. On the `dma32=off` boots (`numa-before`, `numa-nozone`) node 0's"
                " ZONE_DMA32 is empty by design and ZONE_NORMAL starts at 16 MiB: their rows differ, as they"
                " must.", "",
                "| boot | node | node pfns | zone | start_pfn | spanned | present | formula (start / spanned /"
                " present) | as posted (present) | same |", "|---|--:|---|---|--:|--:|--:|---|--:|---|"]
        for n, b in numa:
            out += zone_rows(b, n)
        out += ["", "### Pages by node, and the kernel's NUMA counters", "",
                "Every node's `/sys/devices/system/node/nodeN/numastat` read right before and right after each"
                " request (deltas; counters that did not move left out), the device's node from sysfs"
                " (`numa_node` of each bound function). " + NUMASTAT_MEANING + ".", "",
                "| scenario | device node | result | pages by node and zone | allocations | NUMA counters across"
                " the request |", "|---|--:|---|---|--:|---|"]
        out += numa_rows(results)
        out.append("")
    marks = watermark_rows(results)
    if marks:
        out += ["### Balancing: watermarks and reclaim", "",
                "Each zone's free pages against its min / low / high watermarks and its lowmem_reserve"
                " (`protection`: what allocations for each higher zone must leave free here) at the aging's"
                " peak, after the aging (after the read of the page cache on `pressure-page-cache`, which has"
                " no peak), and (on a boot with swap) after the requests; all from `/proc/zoneinfo`.", "",
                "| boot | when | zone | free | min / low / high | protection |", "|---|---|---|--:|---|---|"]
        out += marks
        out += ["", "The reclaim counters across each request (`/proc/vmstat`, read right before and right after"
                " it on a boot with swap; n/a without). 6.x counts reclaim per node, not per zone"
                " (`pgscan_*`, `pgsteal_*`): the aged machines have one node; `pressure-page-cache` has two,"
                " its page cache read on node 0, whose ZONE_DMA32 the request drew on.", "",
                "| scenario | swap | result | buffers | %s |" % " | ".join(RECLAIM),
                "|---|---|---|--:|" + "--:|" * len(RECLAIM)]
        out += reclaim_rows(results)
        out.append("")
    return "\n".join(out)
