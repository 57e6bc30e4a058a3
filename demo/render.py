"""Render results.json: the terminal table, the throughput plot and the
memory-map figures (gnuplot; memmap.py) and report.md (from report.md.in).
Reads results.json only (and bench.md, the benchmark's own part, when make
bench has written one)."""
import json
import os
import re
import shutil
import string
import subprocess
from typing import Any, Callable, Dict, NamedTuple, Tuple

from . import identity, memmap, render_nodes, table

HERE = os.path.dirname(os.path.abspath(__file__))


def human(n):
    for unit, sh in (("G", 30), ("M", 20), ("K", 10)):
        if n >= (1 << sh) and n % (1 << sh) == 0:
            return "%d%s" % (n >> sh, unit)
    return str(n)


fmt = table.fmt
shown = table.shown   # a repeated row shows the median over its boots


def human_bytes(n):
    return "0" if not n else "%.1fM" % (n / 1048576.0)

COLS = [
    ("scenario", lambda r: r["name"]),
    ("request", lambda r: "%s %s %sx%d" % (r["strategy"], r["op"], human(r["size"]), r["count"])),
    ("ok", lambda r: ("yes" if r["ok"] else "no") if r["guest_ok"] else "FAIL"),
    ("errno", lambda r: r["errno"] or "-"),
    ("swiotlb bounced", lambda r: fmt(shown(r, "swiotlb_bounced"))),
    ("driver bounced", lambda r: fmt(shown(r, "driver_bounced"))),
    ("dev faults", lambda r: fmt(r["device_faults"])),
    ("ZONE_DMA pages", lambda r: fmt(table.zone_dma_pages(r))),
    ("DMA fallbacks", lambda r: fmt(shown(r, "zone_dma_fallbacks"))),
    ("pages >4G", lambda r: fmt(shown(r, "pages_above_4g"))),
    ("devices ok", lambda r: devices_ok_cell(r)),
    ("coherent in pool", lambda r: ("-" if r.get("gart_coherent") is None
                                     else human_bytes(r["gart_coherent"] * 4096) + " GART") if table.gart(r)
     else "-" if r.get("coherent_swiotlb_bytes") is None else human_bytes(r["coherent_swiotlb_bytes"])),
    ("map refused", lambda r: fmt(r.get("map_refused")) + (
     " (%s)" % table.refused_by(r) if table.refused_by(r) else "")),
    ("MB/s", lambda r: "-" if shown(r, "mbps") is None else "%.0f" % shown(r, "mbps")),
    ("copied/B", lambda r: "-" if table.copied_per_byte(r) is None else "%.2f" % table.copied_per_byte(r)),
    ("cpu ms/MiB", lambda r: "-" if r.get("cpu_ms_per_mib") is None else "%.1f" % r["cpu_ms_per_mib"]),
    ("backs", lambda r: r["kind"]),
    ("expected?", lambda r: {True: "yes", False: "NO", None: "?"}[r["as_expected"]]),
]


COL = dict(COLS)


def devices_ok_cell(r):
    """Devices whose request succeeded / devices that made it, and how many
    of the boot's devices did not bind."""
    per = r.get("per_device") or []
    cell = "%d/%d" % (sum(1 for p in per if p["ok"]), len(per))
    unbound = (r.get("devices") or 1) - len(per)
    return cell + (" (%d not bound)" % unbound if unbound and len(per) > 1 else "")


def verdict(r):
    """A row's verdict: the one cell that says a row failed."""
    if not r["guest_ok"]:
        return "**guest failed**"
    return {True: "as expected", False: "**NOT as expected**", None: "?"}[r["as_expected"]]


def result_cell(r):
    return ("ok" if r["ok"] else r["errno"] or "failed") if r["guest_ok"] else "-"


def mib_cell(r, key):
    return "n/a" if r.get(key) is None else "%.1f" % (r[key] / 1048576.0)


# The narrow tables of the report's body: (title, columns as (header with
# its unit, cell)); every cell but the verdict's is a figure or an errno.
SCENARIO = ("scenario", lambda r: '<a id="%s"></a>`%s`' % (anchor(r["name"]), r["name"]))
MUST_SHOW = ("must show", lambda r: r["expect"])
REQUEST = ("request (strategy op size x count)", COL["request"])
RESULT = ("result (ok or errno)", result_cell)
VERDICT = ("verdict", verdict)
ZONE_DMA = ("ZONE_DMA (pages)", COL["ZONE_DMA pages"])
FALLBACKS = ("DMA fallbacks (allocations)", COL["DMA fallbacks"])
ABOVE_4G = ("above 4G (pages)", COL["pages >4G"])
SW_BOUNCED = ("swiotlb bounced (mappings)", COL["swiotlb bounced"])
DRV_BOUNCED = ("driver bounced (mappings)", COL["driver bounced"])
REFUSED = ("map refused (mappings)", COL["map refused"])
MBPS = ("speed (MB/s)", COL["MB/s"])
DEVICES = ("devices ok (of those that made the request)", COL["devices ok"])
IN_POOL = ("coherent in swiotlb pool (MiB)", lambda r: mib_cell(r, "coherent_swiotlb_bytes"))
BOUND_DMA = ("bound devices' ZONE_DMA (pages)", lambda r: fmt(r.get("bound_zone_dma_pages")))
BOUND_POOL = ("bound devices' coherent in pool (MiB)", lambda r: mib_cell(r, "bound_pool_bytes"))
REQUEST_POOL = ("request's coherent in pool (MiB)", lambda r: mib_cell(r, "request_pool_bytes"))
TOPICS = [
    ("Coherent memory", [SCENARIO, REQUEST, RESULT, ZONE_DMA, FALLBACKS, ABOVE_4G, IN_POOL, MBPS, MUST_SHOW, VERDICT]),
    ("Streaming and bounces", [SCENARIO, REQUEST, RESULT, SW_BOUNCED, DRV_BOUNCED, ABOVE_4G,
                               ("copied (bytes per byte)", COL["copied/B"]), MBPS, MUST_SHOW, VERDICT]),
    ("Many devices", [SCENARIO, REQUEST, DEVICES, BOUND_DMA, BOUND_POOL, REQUEST_POOL, ZONE_DMA, REFUSED, SW_BOUNCED,
                      MBPS, MUST_SHOW, VERDICT]),
    ("The K8 GART", [SCENARIO, REQUEST, DEVICES,
                     ("aperture held by coherent memory (4 KiB pages)", lambda r: fmt(r.get("gart_coherent"))),
                     ("refused for aperture space (mappings)", lambda r: fmt(r.get("gart_full"))),
                     ABOVE_4G, MBPS, MUST_SHOW, VERDICT]),
    ("31-bit and 24-bit devices", [SCENARIO, REQUEST, RESULT, ZONE_DMA, FALLBACKS, REFUSED, SW_BOUNCED, MUST_SHOW,
                                   VERDICT]),
    ("Pressure", [SCENARIO, REQUEST, RESULT, ZONE_DMA, FALLBACKS, ABOVE_4G,
                  ("swapped out / reclaimed across the request (pages)", lambda r: "%s / %s" % tuple(
                      fmt(x) for x in table.reclaimed(r)) if r.get("vmstat_delta") else "-"), MUST_SHOW, VERDICT]),
    ("Two NUMA nodes", [SCENARIO, REQUEST, RESULT,
                        ("pages by node and zone (pages)", lambda r: ", ".join(
                            "%s: %d" % kv for kv in sorted((r.get("node_zone_pages") or {}).items())) or "-"),
                        ("node 0 numa_hit / numa_miss / other_node (allocations)", lambda r: " / ".join(
                            "%+d" % v if v is not None else "n/a" for v in (
                                table.numastat(r, "0", k) for k in ("numa_hit", "numa_miss", "other_node")))),
                        ZONE_DMA, IN_POOL, MUST_SHOW, VERDICT]),
    ("Context rows", [SCENARIO, REQUEST, RESULT, ("device faults (count)", COL["dev faults"]),
                      ("bytes written (bytes)", lambda r: fmt(r.get("bytes"))), MUST_SHOW, VERDICT]),
]
CONTEXT_STRATEGIES = ("unsafe-raw", "truncation-alias")


def topic_of(r):
    """Which narrow table a row belongs to (by its boot and strategy)."""
    for prefix, title in (("many-", "Many devices"), ("gart", "The K8 GART"), ("bits", "31-bit and 24-bit devices"),
                          ("pressure", "Pressure"), ("numa", "Two NUMA nodes")):
        if r["boot"].startswith(prefix):
            return title
    if r["strategy"] in CONTEXT_STRATEGIES:
        return "Context rows"
    return "Coherent memory" if r["strategy"] == "coherent" else "Streaming and bounces"


def topic_tables(results):
    """One narrow table per topic, this kernel's rows only (the other
    kernel's repeats are in its appendix)."""
    out = []
    for title, cols in TOPICS:
        recs = [r for r in results["scenarios"] if not r.get("repeats_row") and topic_of(r) == title]
        if not recs:
            continue
        out += ["### %s" % title, "", "| %s |" % " | ".join(h for h, _ in cols), "|---" * len(cols) + "|"]
        out += ["| %s |" % " | ".join(md_escape(f(r)) for _, f in cols) for r in recs]
        out.append("")
        out += ["%s: %s.\n" % (pair, note) for pair, note in pair_notes(recs)]
    return "\n".join(out)


def pair_notes(recs):
    """What the pairs among RECS have as controls, share unevenly or lack
    (table.pair_note), stated under their table: ("`before` / `after`", note)."""
    names = {r["name"] for r in recs}
    return [("`%s` / `%s`" % (b, a), note) for b, a in table.PAIRS if b in names
            for note in [table.pair_note((b, a), names)] if note]


def text_table(records):
    rows = [[c[0] for c in COLS]] + [[c[1](r) for c in COLS] for r in records]
    w = [max(len(row[i]) for row in rows) for i in range(len(COLS))]
    out = []
    for k, row in enumerate(rows):
        out.append("  ".join(v.ljust(w[i]) if i < 2 else v.rjust(w[i]) for i, v in enumerate(row)).rstrip())
        if k == 0:
            out.append("  ".join("-" * x for x in w))
    return "\n".join(out)


def progress_line(i, total, rec):
    if not rec["guest_ok"]:
        return "  [%d/%d] %-26s FAILED: %s (log: %s)" % (i, total, rec["name"], rec["guest_error"], rec["log"])
    state = "ok" if rec["ok"] else (rec["errno"] or "failed")
    mark = {True: "as expected", False: "NOT as expected", None: ""}[rec["as_expected"]]
    return "  [%d/%d] %-26s %-7s %s: %s" % (i, total, rec["name"], state, mark, rec["showed"])


def speedup_line(results):
    """The speed-up, from its one source (the sweep at 1 MiB): a ratio of
    medians only when the two ranges are apart (table.compared), with its
    sizes and the copies per byte of the bounced path."""
    sw = results["sweep"]
    vs = table.compared(sw["mbps"], "streaming-dma32", "streaming", names=("direct", "bounced"))
    if vs is None:
        return "Direct/bounced speed-up at 1 MiB: n/a (no sweep data)."
    ds = next((r for r in results["scenarios"] if r["name"] == "dma32-streaming"), None)
    cpb = table.copied_per_byte(ds) if ds else None
    return ("Speed-up of GFP_DMA32 pages over bounced ordinary pages at 1 MiB: %s; %s per point, %s runs each,"
            " no verify, TCG; the bounced path copied %s bytes per byte (today's swiotlb copies at map and at"
            " unmap; 2.6.14 copied once, at unmap, so 2005's gap was smaller)." % (
                vs, human(sw["bytes_per_point"]), sw["runs_per_point"], "%.2f" % cpb if cpb is not None else "n/a"))


def _row(results, name):
    return next((r for r in results["scenarios"] if r["name"] == name and r["guest_ok"]), None)


def mib(n):
    return "%.1f MiB" % ((n or 0) / 1048576.0)


def anchor(name):
    """The HTML anchor of a row in the topic tables (report.md links to it)."""
    return "row-" + re.sub(r"[^a-z0-9-]", "-", name.lower())


def link(text, row):
    """TEXT linked to ROW's line in the topic tables."""
    return "[%s](#%s)" % (text, anchor(row))


SWEEP_LINK = "#throughput-by-strategy"


class FirstLine(NamedTuple):
    """One line of the first screen: its topic, the rows it needs (all
    must have run) and how it puts them."""
    topic: str
    rows: Tuple[str, ...]
    text: Callable[..., str]


def failed_of(r):
    """'N of M devices' whose request failed, M the devices that made it."""
    return "%d of %d devices" % (sum(1 for p in r["per_device"] if not p["ok"]), len(r["per_device"]))


def _many(res, b, b32, full, a):
    dma, pool = table.bound_holdings(b, res["boots"].get(b["boot"]))
    size = table.swiotlb_pool_mib(res["boots"].get(b["boot"]))
    adma, apool = table.bound_holdings(a, res["boots"].get(a["boot"]))
    return ("under the 2.6.14 model their control buffers held %s and %s; GFP_DMA32 buffers then failed on %s"
            " (ZONE_DMA used up); one more coherent request: %s (2.6.14 panicked). With the zone: %s" % (
                link("%s of ZONE_DMA's %s pages" % (fmt(dma), fmt(table.zone(res["boots"].get(b["boot"]), "DMA")
                                                                    .get("managed"))), b["name"]),
                link("%s of the %s MiB swiotlb pool" % (table.mib_of(pool), fmt(size and int(size))), b["name"]),
                link(failed_of(b32), b32["name"]),
                link("ENOMEM after %s MiB" % table.request_mib(full), full["name"]),
                link("%s pages, %s MiB, %d of %d ok" % (fmt(adma), table.mib_of(apool),
                                                       sum(p["ok"] for p in a["per_device"]), len(a["per_device"])),
                     a["name"])))


def _gart(res, b, sm, a):
    return ("control buffers held %s; %s from each at once: %s refused (this run; varies with overlap); %s: %s."
            " With the zone: %s" % (
                link("%s of the %d MiB aperture" % (table.mib_of((b["gart_coherent"] or 0) * 4096), table.gart(b)),
                     b["name"]),
                link("%d x %s" % (b["count"], mib(b["size"]).replace(".0 ", " ")), b["name"]),
                link(failed_of(b), b["name"]),
                link("a %d MiB aperture" % table.gart(sm), sm["name"]),
                link("%d of %d could not bind" % (sm["devices"] - len(sm["per_device"]), sm["devices"]), sm["name"]),
                link("%s MiB held, %s refused, %d of %d ok" % (
                    table.mib_of((a["gart_coherent"] or 0) * 4096), fmt(a["gart_full"]),
                    sum(p["ok"] for p in a["per_device"]), len(a["per_device"])), a["name"])))


def _speed(res, b):
    mbps, cpb = res["sweep"]["mbps"], table.copied_per_byte(b)
    return ("pages above 4 GiB bounced at %s, GFP_DMA32 pages direct at %s (medians, 1 MiB buffers, TCG), %s"
            " (2.6.14: once)" % (
                "[%.0f MB/s](%s)" % (table.sweep_point(mbps, "streaming")["median"], SWEEP_LINK),
                "[%.0f MB/s](%s)" % (table.sweep_point(mbps, "streaming-dma32")["median"], SWEEP_LINK),
                link("copied %s times per byte" % ("%.2f" % cpb if cpb is not None else "n/a"), b["name"])))


def _bits31(res, b, a, sw, low):
    return ("a 4 GiB zone sent %s of a 31-bit device to ZONE_DMA, a 2 GiB zone %s (medians of %d boots); its"
            " ordinary pages through today's pool, above 2 GiB: %s; through 2.6.14's low pool: %s. The patch"
            " chose 4 GiB" % (
                link("%s coherent allocations" % fmt(table.shown(b, "zone_dma_fallbacks")), b["name"]),
                link(fmt(table.shown(a, "zone_dma_fallbacks")), a["name"]), b.get("repeats", 1),
                link(sw["errno"] or "ok", sw["name"]),
                link("%s bounced, %s of %s verified" % (fmt(table.bounced(low)), fmt(low["buffers_verified"]),
                                                        low["count"]), low["name"])))


def _fresh(res, b):
    return "%s of coherent memory, %s; the costs above need low memory taken" % (
        link("%s MiB" % table.request_mib(b), b["name"]),
        link("%s ZONE_DMA pages, %s MiB in the pool" % (fmt(b["zone_dma_pages_used"]),
                                                        table.mib_of(b.get("coherent_swiotlb_bytes"))), b["name"]))


def _nozone(res, b, a):
    return "`dma32=off` alone (today's allocator, never 2.6.14's): %s, ZONE_DMA used up; with the zone %s" % (
        link("%s after %s MiB" % (b["errno"] or "ok", table.request_mib(b)), b["name"]),
        link("%s MiB %s, %s ZONE_DMA pages" % (table.request_mib(a), table.yes(a["ok"]),
                                               fmt(a["zone_dma_pages_used"])), a["name"]))


FIRST_SCREEN = [
    FirstLine("Eight aged devices, swiotlb (2005 Intel)", (
        "many-before-streaming", "many-before-streaming-dma32", "many-before-coherent-beyond-pool",
        "many-after-streaming"), _many),
    FirstLine("The same behind a K8 GART (2005 AMD)", (
        "gart-before-streaming", "gart32-before-streaming", "gart-after-streaming"), _gart),
    FirstLine("Bounce cost", ("dma32-streaming",), _speed),
    FirstLine("The 2 GiB debate", ("bits31-coherent", "bits31-dma32-2G-coherent", "bits31-swiotlb-streaming",
                                   "bits31-swiotlb-low-streaming"), _bits31),
    FirstLine("A fresh machine: the 2.6.14 model needs no zone", ("before-coherent-64M",), _fresh),
    FirstLine("Today's kernel depends on the zone", ("nozone-coherent-64M", "dma32-coherent-64M"), _nozone),
]


def zone_buys(results):
    """The report's first screen: one short line per topic, from its rows;
    a line whose rows did not run says so."""
    out = []
    for line in FIRST_SCREEN:
        rows = [_row(results, n) for n in line.rows]
        if line.text is _speed and not all(table.sweep_point(results["sweep"]["mbps"], l)
                                           for l in ("streaming", "streaming-dma32")):
            rows = [None]
        ok = all(rows)
        out.append("**%s**: %s." % (line.topic, line.text(results, *rows) if ok else "its rows did not run"))
    return out


def pairs_lines(results):
    """The before/after pairs of this run, with the settings between them
    as the boots' full settings give them (table.pair_settings)."""
    out = []
    for b, a in table.PAIRS:
        if not (_row(results, b) and _row(results, a)):
            continue
        _, settings = table.pair_settings(b, a)
        line = "`%s` / `%s`: %s" % (b, a, "one setting, %s" % settings[0] if len(settings) == 1 else
                                    "%d settings, %s" % (len(settings), " and ".join(settings)))
        if len(settings) > 1 and frozenset(settings) in table.SETTING_SETS:
            line += ": " + table.SETTING_SETS[frozenset(settings)]
        problem = table.pair_problem(b, a)
        if problem:
            line += " (**not a comparison**: %s)" % problem
        note = table.pair_note((b, a), {r["name"] for r in results["scenarios"]})
        if note:
            line += "; " + note
        out.append(line)
    return out


NOT_SHOWN = [
    ("GFP_DMA on ia64 meaning GFP_DMA32", "the guests are x86-64 only"),
]


def summary_lines(results):
    s, out = results["summary"], []
    out.append("%d scenarios, %d as expected, %d guest failures; %ss in all." % (
        s["scenarios"], s["as_expected"], s["guest_failures"], fmt(results["seconds"])))
    out.append(speedup_line(results))
    if results["sweep"]["failed_runs"]:
        out.append("%d sweep runs failed and are not in the sweep's figures: %s." % (
            len(results["sweep"]["failed_runs"]),
            ", ".join("%s %s %s (%s)" % (f["boot"], f["strategy"], human(f["size"]), f["errno"] or "rc %s" % f["rc"])
                      for f in results["sweep"]["failed_runs"][:5])))
    if not results["kernel_counters_present"] and any(results["boots"].values()):
        out.append("This guest kernel has no swiotlb/dma-direct counters from kernel-patches/:"
                   " those columns are n/a (null in results.json).")
    if s["not_as_expected"]:
        out.append("NOT as expected: %s." % ", ".join(s["not_as_expected"]))
    for r in results["scenarios"]:
        if not r["guest_ok"]:
            out.append("%s: guest failed: %s (log: %s)" % (r["name"], r["guest_error"], r["log"]))
    return out


def sweep_boots(results, label, short=False):
    """Which boot a sweep line ran on, and how that machine differs from a
    fresh one-device boot: 'boot NAME' or 'boot NAME: 8 devices bound,
    low memory taken first (aged)' ('8 devices, aged' if SHORT)."""
    out = []
    for name in results["sweep"].get("boots", {}).get(label) or []:
        b = results["boots"].get(name) or {}
        how = (["%d devices%s" % (b["devices"], "" if short else " bound")] if (b.get("devices") or 1) > 1
               else []) + (["aged" if short else "low memory taken first (aged)"] if b.get("prepare") else [])
        out.append("boot %s%s" % (name, ": " + ", ".join(how) if how else ""))
    return "; ".join(out) or "boot unknown"


def sweep_cell(p):
    """One sweep point in the report's table: median (min-max)."""
    return "%.0f (%.0f-%.0f)" % (p["median"], p["min"], p["max"]) if p else "-"


def plot_caption(results):
    """The plot's caption in report.md: what a point and a bar are, and
    which boot each line comes from (they are not all the same machine)."""
    sw, by_boot = results["sweep"], {}
    for l in sw["mbps"]:
        by_boot.setdefault(sweep_boots(results, l), []).append("`%s`" % l)
    return ("Each point is the median of %s runs of %s, its bar from the slowest run to the fastest. The lines come"
            " from different boots: %s." % (sw["runs_per_point"], human(sw["bytes_per_point"]), "; ".join(
                "%s from %s" % (", ".join(ls), b) for b, ls in by_boot.items())))


def plot(results, report):
    """gnuplot: PNG via pngcairo or png, else SVG. (file name, None) or (None, why).
    Each line is the median per size with a bar from min to max, its
    points moved a little sideways per line so that the bars do not hide
    each other; its legend entry names its boot."""
    spread = results["sweep"]["mbps"]
    if not spread:
        return None, "no sweep data"
    if not shutil.which("gnuplot"):
        return None, "gnuplot not found"
    labels = list(spread)
    sizes = sorted({int(s) for d in spread.values() for s in d})
    dat = os.path.join(report, "throughput.dat")
    with open(dat, "w") as f:
        f.write("# one block per line: size_bytes median min max runs (MB/s); blocks: %s\n" % ", ".join(
            '"%s"' % l for l in labels))
        for l in labels:
            for s in sizes:
                p = spread[l].get(str(s))
                f.write("%d %s\n" % (s, "%s %s %s %d" % (p["median"], p["min"], p["max"], p["runs"]) if p
                                     else "NaN NaN NaN 0"))
            f.write("\n\n")
    term, out = memmap.terminal(1000, 640, "throughput")
    for old in ("throughput.png", "throughput.svg"):
        if os.path.exists(os.path.join(report, old)):
            os.remove(os.path.join(report, old))
    n = len(labels)
    gp = [
        "set terminal %s" % term,
        "set output '%s'" % os.path.join(report, out),
        "set title %s" % memmap.gp_lines(
            "dma32-demo: fill throughput of a 32-bit device by buffer strategy (TCG guest, %s per point)"
            % human(results["sweep"]["bytes_per_point"]),
            "median of %s runs per point, bar from min to max; the lines come from different boots (in the key)"
            % results["sweep"]["runs_per_point"]),
        "set logscale x 2",
        "set logscale y 10",
        "set xlabel 'buffer size'",
        "set ylabel 'MB/s (whole request: allocate, map, DMA, unmap/bounce, free)'",
        "set xtics (%s)" % ", ".join("'%s' %d" % (human(s), s) for s in sizes),
        "set grid",
        "set key top left reverse Left box opaque font ',9' width 1",
        "set bars 2",
        "plot " + ", ".join(
            "%s index %d using ($1*%r):2:3:4 with yerrorlines lw 2 title %s" % (
                memmap.gp_str(dat), i, 2 ** ((i - (n - 1) / 2.0) * 0.05),
                memmap.gp_str("%s [%s]" % (table.SERIES.get(l, l), sweep_boots(results, l, short=True))))
            for i, l in enumerate(labels)),
    ]
    r = subprocess.run(["gnuplot"], input="\n".join(gp) + "\n", capture_output=True, text=True)
    if r.returncode != 0:
        lines = r.stderr.strip().splitlines()
        return None, "gnuplot failed: " + lines[-1] if lines else "gnuplot failed"
    return out, None


def md_escape(s):
    return str(s).replace("|", "/")


def boot_desc(b):
    """machine, memory layout, randomness: the conditions of a row."""
    below = {"q35": "2 GiB", "pc": "3 GiB"}.get(b["machine"], "?")
    shuffle = "page_alloc.shuffle=1 (a new random order each boot)" if "page_alloc.shuffle=1" in b[
        "kernel_args"].split() else "no shuffle"
    gart = ", a K8 GART with a %d MiB aperture" % b["gart"] if b.get("gart") else ""
    return "Linux %s, `-M %s -m %s` (%s below 4 GiB)%s, %s" % (
        b.get("kernel") or "?", b["machine"], b["mem"], below, gart, shuffle)


def outcome(r):
    """A record in a few words: what the request did and what it took."""
    if r is None:
        return "not run"
    if not r["guest_ok"]:
        return "guest failed"
    parts = ["ok" if r["ok"] else (r["errno"] or "failed")]
    if r.get("swiotlb_bounced") is not None:
        parts.append("%s bounced" % fmt(r["swiotlb_bounced"]))
    if r.get("zone_dma_pages_used"):
        parts.append("%s ZONE_DMA pages" % fmt(r["zone_dma_pages_used"]))
    if r.get("coherent_swiotlb_bytes"):
        parts.append("%s coherent in pool" % human_bytes(r["coherent_swiotlb_bytes"]))
    return ", ".join(parts) + ("" if r["as_expected"] else " (**NOT as expected**)")


KERNELS_INTRO = """The headline rows ran again on the other guest kernel: Debian's
linux-source-%(first)s and linux-source-%(other)s, each with its own series from
kernel-patches/, on the same machines with the same boot settings
(`NAME@%(other)s` in the whole table). What differs between them is in the
rows and in where each placed its swiotlb pool (from its boot log). 6.12
can grow swiotlb at run time (`CONFIG_SWIOTLB_DYNAMIC`), but Debian's own
6.12 amd64 configuration leaves that off, and so does this guest's: both
kernels have one pool, fixed at boot. 6.12 also keeps mainline's
`io_tlb_used_hiwater` (since 6.4), which its series builds on instead of
adding its own, as the 6.1 series has to."""


def kernels_appendix(results):
    """The other kernel's appendix, or nothing when it did not run."""
    recs = results["scenarios"]
    again = [r for r in recs if r.get("repeats_row")]
    if not again:
        return ""
    first = next((r.get("kernel") for r in recs if r["name"] == again[0]["repeats_row"]), None) or "?"
    return "## Appendix: both guest kernels, side by side\n\n%s\n\n%s\n" % (
        KERNELS_INTRO % {"first": first, "other": again[0]["kernel"]}, kernels_section(results))


def kernels_section(results):
    """The headline rows on both guest kernels side by side, and where each
    kernel put its swiotlb pool."""
    recs = results["scenarios"]
    by_name = {r["name"]: r for r in recs}
    again = [r for r in recs if r.get("repeats_row")]
    if not again:
        return "(only one kernel in this run: no side-by-side rows.)"
    first = (by_name.get(again[0]["repeats_row"]) or {}).get("kernel") or "?"
    other = again[0]["kernel"]
    out = ["| scenario | Linux %s | Linux %s |" % (first, other), "|---|---|---|"]
    for r in again:
        out.append("| `%s` | %s | %s |" % (r["repeats_row"], outcome(by_name.get(r["repeats_row"])), outcome(r)))
    moved = []
    out += ["", "| boot | Linux %s: swiotlb pool | Linux %s: swiotlb pool |" % (first, other), "|---|---|---|"]
    for name, b in results["boots"].items():
        twin = results["boots"].get(name + "@" + other)
        if twin is None:
            continue

        def pool(bb):
            p = bb.get("swiotlb_pool")
            return hexrange(p["start"], p["end"]) if p else "none announced"
        out.append("| %s | %s | %s |" % (name, pool(b), pool(twin)))
        if b.get("swiotlb_pool") and twin.get("swiotlb_pool"):
            moved.append(abs(b["swiotlb_pool"]["start"] - twin["swiotlb_pool"]["start"]))
    if moved:
        out += ["", "Both kernels put the pool at the top of the RAM below 4 GiB: between the two, its start "
                "differs by at most %d KiB on these boots (the kernels' own sizes differ)." % (max(moved) // 1024)]
    same = [r["repeats_row"] for r in again if r["as_expected"] and (by_name.get(r["repeats_row"]) or {}).get(
        "as_expected")]
    out.append("%d of %d headline rows are as expected on both kernels." % (len(same), len(again)))
    return "\n".join(out)


def hexrange(lo, hi):
    return "%#x-%#x" % (lo, hi)


def device_memory(runs):
    """The ring's range and how many control buffers, and where."""
    ring = [x for x in runs if x["kind"] == "ring"]
    ctrl = [x for x in runs if x["kind"] == "ctrl"]
    out = ", ".join(hexrange(x["phys"], x["phys"] + x["pages"] * memmap.PAGE) for x in ring) or "-"
    if ctrl:
        out += "; %d control buffer runs, %d pages, %d in the swiotlb pool" % (
            len(ctrl), sum(x["pages"] for x in ctrl), sum(x["pages"] for x in ctrl if x["in_pool"]))
    return out


# The memory maps in the report's body (the first four of these that ran):
# the 2.6.14 model against today on one device, then on eight devices
# behind swiotlb and behind the K8 GART; the rest go to an appendix.
BODY_MAPS = ("before", "today", "many-before", "gart-before", "nodma32", "many-after")


def body_maps(results):
    return [b for b in BODY_MAPS if b in results["boots"]][:4]


def memmap_sections(results, figures, only=None):
    """Per boot (those in ONLY, else all): its conditions, its scenarios'
    addresses in a table, and its memory-map figure next to it."""
    out = []
    for name, b in results["boots"].items():
        if only is not None and name not in only:
            continue
        recs = [r for r in results["scenarios"] if r["boot"] == name]
        dev, pool, ap = b.get("device") or {}, b.get("swiotlb_pool"), b.get("gart_aperture") or {}
        out.append("### %s\n" % name)
        out.append("%s; %s; %s; swiotlb pool %s%s.\n" % (
            boot_desc(b), md_escape(" ".join(x for x in (b.get("kernel_args"), b.get("device_props"),
                                                       b.get("qemu_args")) if x) or "no extra arguments"),
            memmap.reach_text(dev),
            "%s (%d MiB)" % (hexrange(pool["start"], pool["end"]), (pool["end"] - pool["start"]) >> 20)
            if pool else "none (the GART replaces it)" if ap else "not in the boot log",
            "; GART aperture %s (%d MiB, %s pages the IOMMU maps into)" % (
                hexrange(ap["start"], ap["end"]), (ap["end"] - ap["start"]) >> 20, fmt(ap.get("aperture_pages")))
            if "start" in ap else ""))
        out.append("| scenario | request | result | runs | pages | >4G | ZONE_DMA | bounced runs / mappings |"
                   " lowest .. highest buffer page | ring (phys); control buffers |")
        out.append("|---|---|---|--:|--:|--:|--:|--:|---|---|")
        for r in recs:
            runs = r.get("runs")
            if runs is None:
                cells = ["n/a"] * 6 + ["-"]
            else:
                hi = max((x["phys"] + x["pages"] * memmap.PAGE for x in runs), default=None)
                lo = min((x["phys"] for x in runs), default=None)
                cells = [str(len(runs)) + (" (+%d dropped)" % r["runs_dropped"] if r["runs_dropped"] else ""),
                         str(sum(x["pages"] for x in runs)), fmt(r["pages_above_4g"]),
                         fmt(r["zone_dma_pages_used"]),
                         "%d / %s" % (sum(1 for x in runs if x["bounced"]), fmt(r["driver_bounced"])),
                         hexrange(lo, hi) if runs else "-",
                         device_memory(r.get("device_runs") or [])]
            out.append("| `%s` | %s %s %sx%d | %s | %s |" % (
                r["name"], r["strategy"], r["op"], human(r["size"]), r["count"],
                (("ok" if r["ok"] else r["errno"] or "failed") if r["guest_ok"] else "guest failed"),
                " | ".join(cells)))
        img, why = figures.get(name, (None, "not drawn"))
        out.append("\n" + ("![memory map of boot %s](%s)" % (name, img) if img else "(no figure: %s)" % why) + "\n")
    return "\n".join(out)


CLAIMS_HEADER = ("claim", "before", "after", "caveat", "rows")
# A claim's cell is a short statement with its numbers: at most this many
# characters besides the row names it links (each row's own cells in the
# topic tables have every figure)
CLAIM_CELL_CHARS = 300


def claim_rows(results, claim):
    """The scenarios a claim's cells name."""
    named = set(re.findall(r"`([a-z0-9@.-]+)`", " ".join(claim[p] for p in ("before", "after", "caveat"))))
    return sorted(named & {r["name"] for r in results["scenarios"]})


def claims_table(results):
    """The seed's claims as a table: claim | before | after | caveat | rows."""
    out = ["| %s |" % " | ".join(CLAIMS_HEADER), "|---" * len(CLAIMS_HEADER) + "|"]
    for c in results["claims"]:
        out.append("| %s |" % " | ".join(md_escape(x) for x in (
            c["claim"], c["before"], c["after"], c["caveat"],
            ", ".join("`%s`" % r for r in claim_rows(results, c)) or "-")))
    return "\n".join(out)


def build_line(build):
    """The run's build identity in a few words: git describe, and the first
    12 hex digits of each binary's sha256."""
    if not build:
        return "not recorded"

    def short(f):
        return (f.get("sha256") or "missing")[:12]
    kernels = ["Linux %s bzImage %s, initramfs %s" % (v, short(k["bzimage"]), short(k["initramfs"]))
               for v, k in build["kernels"].items()]
    return "%s; %s; QEMU %s" % (build.get("git_describe") or "no git describe", "; ".join(kernels),
                                short(build["qemu"]))


def report_md(results, table_txt, summary, img, img_err, bench_md, figures=None):
    recs = results["scenarios"]
    rows = ["| scenario | boot | backs | what it must show | what it showed |", "|---|---|---|---|---|"]
    for r in recs:
        b = results["boots"].get(r["boot"]) or {}
        cfg = " ".join(x for x in (b.get("kernel_args") or "", "`%s`" % b["device_props"] if b.get("device_props")
                                   else "", b.get("qemu_args") or "") if x)
        rows.append("| `%s` | %s: %s; %s | %s | %s | %s%s |" % (
            r["name"], r["boot"], boot_desc(b) if b else "-", md_escape(cfg) or "-", r["kind"], md_escape(r["expect"]),
            "" if r["as_expected"] else "**NOT AS EXPECTED**: ", md_escape(r["showed"])))
    boots = ["| boot | conditions | ZONE_DMA managed | ZONE_DMA32 pfns | Normal from pfn | boot line |",
             "|---|---|--:|---|--:|---|"]
    for name, b in results["boots"].items():
        if not b.get("zones"):
            boots.append("| %s | %s | - | - | - | guest failed: %s |" % (name, boot_desc(b), md_escape(b["error"])))
            continue
        d, d32, n = (b["zones"].get(z) or {} for z in ("DMA", "DMA32", "Normal"))
        span = "%s..%s (present %s)" % (d32.get("start_pfn"), (d32.get("start_pfn") or 0) + (d32.get("spanned") or 0),
                                        d32.get("present")) if d32.get("spanned") else "empty"
        boots.append("| %s | %s %s | %s | %s | %s | %s |" % (
            name, boot_desc(b), md_escape(b["kernel_args"]), d.get("managed"), span, n.get("start_pfn"),
            md_escape(b.get("zone_layout_line") or "(no `ZONE_DMA32:` line: kernel without the dma32= patch)")))
    spread = results["sweep"]["mbps"]
    sweep = []
    if spread:
        sizes = sorted({int(s) for d in spread.values() for s in d})
        sweep.append("| MB/s: median (min-max) | boot | " + " | ".join(human(s) for s in sizes) + " |")
        sweep.append("|---|---|" + "--:|" * len(sizes))
        for l, d in spread.items():
            sweep.append("| %s | %s | %s |" % (l, md_escape(sweep_boots(results, l)),
                                               " | ".join(sweep_cell(d.get(str(s))) for s in sizes)))
    with open(os.path.join(HERE, "report.md.in")) as f:
        tmpl = string.Template(f.read())
    return tmpl.substitute(
        zone_buys="\n".join("* " + l for l in zone_buys(results)),
        pairs="\n".join("* " + l for l in pairs_lines(results)) or "(none ran)",
        not_shown="\n".join("* %s: not shown, because %s." % x for x in NOT_SHOWN),
        claims_table=claims_table(results),
        topic_tables=topic_tables(results),
        nodes_section=render_nodes.nodes_section(results),
        definitions="\n".join("* *%s*: %s." % (c, d) for c, d, _ in table.DEFINITIONS),
        collected=results["collected"], seconds=fmt(results["seconds"]), build=build_line(results.get("build")),
        versions=", ".join("%s %s" % kv for kv in results["versions"].items())
        or "not recorded (no build/versions.txt when it ran)",
        table=table_txt,
        summary="\n".join("* " + s for s in summary if s != speedup_line(results)),
        scenario_rows="\n".join(rows),
        kernels_appendix=kernels_appendix(results),
        plot=("![throughput](%s)\n\n%s" % (img, plot_caption(results)) if img else "(no plot: %s)" % img_err),
        sweep_table="\n".join(sweep),
        boot_rows="\n".join(boots),
        memmaps=memmap_sections(results, figures or {}, body_maps(results)),
        memmaps_appendix=memmap_sections(results, figures or {},
                                         [b for b in results["boots"] if b not in body_maps(results)]),
        runs_cap=table.RUNS,
        bench_section="## Appendix: benchmarks\n\n%s\n" % bench_md if bench_md else "",
    )


def render(results, report):
    """Write table.txt, the plot and report.md; (plot file, why not)."""
    records = results["scenarios"]
    table_txt = text_table(records)
    summary = summary_lines(results)
    img, img_err = plot(results, report)
    figures = memmap.draw(results, report)
    with open(os.path.join(report, "table.txt"), "w") as f:
        f.write(table_txt + "\n\n" + "\n".join(summary) + "\n")
    bench_md, bench_left_out = bench_part(results, report)
    with open(os.path.join(report, "report.md"), "w") as f:
        f.write(report_md(results, table_txt, summary, img, img_err, bench_md or bench_left_out, figures))
    return img, img_err, bench_left_out


def bench_part(results, report):
    """(make bench's bench.md, None) when its bench-manifest.json says it
    ran on the kernel and the build of this run; (None, why it is left
    out) when it did not; (None, None) without a bench.md."""
    if not os.path.exists(os.path.join(report, "bench.md")):
        return None, None
    try:
        with open(os.path.join(report, "bench-manifest.json")) as f:
            bench = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        return None, "bench.md left out: it has no readable bench-manifest.json (%s); run 'make bench' again" % e
    kernel = results["kernel"]
    if bench.get("kernel") != kernel or not identity.same_build(bench.get("build") or {}, results.get("build") or {},
                                                                kernel):
        return None, ("bench.md left out: it was measured on Linux %s (%s), this run on Linux %s (%s);"
                      " run 'make bench' again" % (bench.get("kernel"), build_line(bench.get("build")), kernel,
                                                   build_line(results.get("build"))))
    with open(os.path.join(report, "bench.md")) as f:
        return f.read().rstrip("\n"), None
