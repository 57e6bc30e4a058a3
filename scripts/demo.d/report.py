#!/usr/bin/env python3
"""Host side of the reviewer's demo (scripts/demo): turn the guests' JSON
lines into the progress lines, the terminal table, results.json, the
throughput plot and report.md.

  report.py progress RAW_DIR BOOT DONE TOTAL
  report.py final RAW_DIR REPORT_DIR VERSIONS_TXT SCENARIOS_TXT SECONDS

RAW_DIR holds, per boot, BOOT.meta.json (how it was booted, run-guest's exit
status and message) and BOOT.jsonl (what guest-image/rootfs/usr/bin/
demo-scenario printed). Nothing here invents a number: a counter that the
guest kernel lacks is null in results.json and "n/a" in the table.
"""
import json
import os
import shutil
import subprocess
import sys
import time

GIB4 = 1 << 32


def load_boot(raw, boot):
    with open(os.path.join(raw, boot + ".meta.json")) as f:
        meta = json.load(f)
    recs = []
    path = os.path.join(raw, boot + ".jsonl")
    if os.path.exists(path):
        with open(path, errors="replace") as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    try:
                        recs.append(json.loads(line))
                    except json.JSONDecodeError:
                        pass
    info = next((r for r in recs if r.get("type") == "info"), None)
    runs = {r["name"]: r for r in recs if r.get("type") == "run"}
    sweep = [r for r in recs if r.get("type") == "sweep"]
    done = any(r.get("type") == "done" for r in recs)
    return meta, info, runs, sweep, done


def guest_failure(meta, done):
    """None if the boot worked, else one line saying why."""
    if meta["rc"] == 0 and done:
        return None
    err = [l for l in meta.get("error", "").splitlines() if l.strip()]
    why = err[-1] if err else "guest exited with status %d" % meta["rc"]
    why = why.replace("run-guest: error: ", "")
    if " (console log: " in why:
        why = why[:why.index(" (console log: ")]
    why = why.strip()
    if meta["rc"] == 0 and not done:
        why = "the guest's output ended early"
    return why


def mb_s(res):
    if not res or not res.get("ns") or not res.get("bytes"):
        return None
    return round(res["bytes"] * 1000.0 / res["ns"], 1)


def delta(run, key):
    c = (run or {}).get("counters") or {}
    return c.get(key)


def parse_size(s):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    if s and s[-1] in mult:
        return int(s[:-1]) * mult[s[-1]]
    return int(s)


def human(n):
    for unit, sh in (("G", 30), ("M", 20), ("K", 10)):
        if n >= (1 << sh) and n % (1 << sh) == 0:
            return "%d%s" % (n >> sh, unit)
    return str(n)


def zone(info, name):
    return ((info or {}).get("zones") or {}).get(name) or {}


def layout_ok(meta, info):
    """Did the kernel honour dma32= (None when there is nothing to check)?"""
    args = meta["kernel_args"].split()
    want = [a.split("=", 1)[1] for a in args if a.startswith("dma32=")]
    if not want or not info:
        return None, ""
    d32 = zone(info, "DMA32")
    if want[-1] == "off":
        ok = d32.get("present") == 0
        return ok, "ZONE_DMA32 present pages %s" % d32.get("present")
    end = (d32.get("start_pfn") or 0) + (d32.get("spanned") or 0)
    ok = end == parse_size(want[-1]) >> 12
    return ok, "ZONE_DMA32 ends at pfn %s" % end


# What each scenario must show: (one-line expectation, check(rec, info) ->
# (bool, what it showed)).
def _b(rec):
    """bounces: the kernel's counter when it exists, else the driver's"""
    return rec["swiotlb_bounced"] if rec["swiotlb_bounced"] is not None else rec["driver_bounced"]


def ex_direct(rec, info):
    ok = rec["ok"] and _b(rec) == 0 and rec["driver_bounced"] == 0
    return ok, "%s, %s bounced, %s ZONE_DMA pages" % (yes(rec["ok"]), _b(rec), rec["zone_dma_pages_used"])


def ex_coherent_today(rec, info):
    ok, txt = ex_direct(rec, info)
    return ok and rec["zone_dma_pages_used"] == 0, txt


def ex_streaming(rec, info):
    above = rec["mappings_above_4g"]
    ok = rec["ok"] and (above or 0) > 0 and _b(rec) == above and rec["driver_bounced"] == above
    return ok, "%s of %s mappings above 4 GiB, swiotlb bounced %s, driver bounced %s" % (
        above, rec["mappings"], fmt(rec["swiotlb_bounced"]), rec["driver_bounced"])


def ex_unsafe(rec, info):
    ok = (not rec["ok"] and rec["errno"] == "EIO" and (rec["device_faults"] or 0) > 0
          and rec["device_faults"] == rec["mappings_above_4g"])
    return ok, "%s, %s device faults (first at %s), %s bytes written, %s of %s pages above 4 GiB" % (
        rec["errno"], rec["device_faults"], hex(rec["fault_addr"] or 0), rec["bytes"],
        rec["pages_above_4g"], rec["pages"])


def ex_nodma32_coherent(rec, info):
    held = rec.get("coherent_held") or 0
    ok = (not rec["ok"] and rec["errno"] == "ENOMEM" and zone(info, "DMA32").get("present") == 0
          and (rec["zone_dma_pages_used"] or 0) > 0)
    return ok, "%s after %s of %s MiB (%s buffers, %s ZONE_DMA pages; ZONE_DMA manages %s pages)" % (
        rec["errno"], round(held / 1048576.0, 1), rec["size"] * rec["count"] >> 20,
        rec.get("buffers"), rec["zone_dma_pages_used"], zone(info, "DMA").get("managed"))


def ex_nodma32_streaming(rec, info):
    above = rec["mappings_above_4g"] or 0
    ok = (rec["ok"] and above > 0 and _b(rec) == above and rec["driver_bounced"] == above
          and zone(info, "DMA32").get("present") == 0)
    txt = "%s bounced of %s mappings (%s above 4 GiB)" % (fmt(_b(rec)), rec["mappings"], above)
    if rec["ok"] and above == 0:
        txt += ("; every page came from ZONE_NORMAL below 4 GiB: a freshly booted buddy allocator hands out"
                " a zone from its low end (page_alloc.shuffle: %s)" % fmt((info or {}).get("page_alloc_shuffle")))
    return ok, txt


def ex_nodma32_dma32(rec, info):
    ok = rec["ok"] and _b(rec) == 0 and rec["zone_dma_pages_used"] == rec["pages"]
    return ok, "%s of %s pages from ZONE_DMA, %s bounced" % (
        rec["zone_dma_pages_used"], rec["pages"], fmt(_b(rec)))


def ex_iommu(rec, info):
    groups = (info or {}).get("iommu_groups") or 0
    ok = rec["ok"] and _b(rec) == 0 and (rec["pages_above_4g"] or 0) > 0 and groups > 0
    return ok, "%s IOMMU groups, %s pages above 4 GiB, %s bounced" % (
        groups, rec["pages_above_4g"], fmt(_b(rec)))


def ex_bits31(rec, info):
    fb = rec["zone_dma_fallbacks"]
    used = rec["zone_dma_pages_used"] or 0
    ok = (rec["ok"] or rec["errno"] == "ENOMEM") and _b(rec) == 0 and ((fb or 0) > 0 or used > 0)
    txt = "%s coherent allocation(s) landed above 2 GiB, failed dma_coherent_ok and fell back to ZONE_DMA (%s ZONE_DMA pages)" % (
        fmt(fb), used)
    if rec["errno"] == "ENOMEM":
        txt += "; then ZONE_DMA was used up: ENOMEM after %s of %d MiB" % (
            round((rec.get("coherent_held") or 0) / 1048576.0, 1), rec["size"] * rec["count"] >> 20)
    if rec["ok"] and not fb and not used:
        txt += ("; every buffer landed below 2 GiB: a freshly booted buddy allocator hands out ZONE_DMA32"
                " from its low end, so nothing failed dma_coherent_ok (page_alloc.shuffle: %s)"
                % fmt((info or {}).get("page_alloc_shuffle")))
    return ok, txt


def ex_bits31_2g(rec, info):
    fb = rec["zone_dma_fallbacks"]
    ok = rec["ok"] and _b(rec) == 0 and (fb == 0 or fb is None) and rec["zone_dma_pages_used"] == 0
    return ok, "%s fallbacks to ZONE_DMA, %s ZONE_DMA pages, %s DMA32 pages" % (
        fmt(fb), rec["zone_dma_pages_used"], (rec.get("zone_pages") or {}).get("DMA32"))


def ex_ring32(rec, info):
    ring = ((info or {}).get("device") or {}).get("ring_dma")
    ok = rec["ok"] and _b(rec) == 0 and (rec["pages_above_4g"] or 0) > 0 and ring is not None and ring < GIB4
    return ok, "ring at %s (below 4 GiB), %s data pages above 4 GiB, %s bounced" % (
        hex(ring) if ring is not None else "?", rec["pages_above_4g"], fmt(_b(rec)))


EXPECT = {
    "dma32-coherent": ("ok, 0 bounces, 0 ZONE_DMA pages", ex_coherent_today),
    "dma32-streaming": ("ok, swiotlb bounced == mappings above 4 GiB", ex_streaming),
    "dma32-streaming-dma32": ("ok, 0 bounces", ex_direct),
    "dma32-unsafe-raw": ("EIO, device faults, nothing written above 4 GiB", ex_unsafe),
    "dma32-coherent-64M": ("64 MiB of 32-bit coherent memory: ok, 0 ZONE_DMA pages", ex_coherent_today),
    "nodma32-coherent": ("dma32=off: ENOMEM once the 16 MiB ZONE_DMA is used up", ex_nodma32_coherent),
    "nodma32-streaming": ("dma32=off: bounces", ex_nodma32_streaming),
    "nodma32-streaming-dma32": ("dma32=off: GFP_DMA32 pages come from ZONE_DMA", ex_nodma32_dma32),
    "iommu-streaming": ("IOMMU: ok, 0 bounces, pages above 4 GiB", ex_iommu),
    "bits31-coherent": ("31-bit device, 4 GiB zone: allocations above 2 GiB fall back to ZONE_DMA", ex_bits31),
    "bits31-dma32-2G-coherent": ("31-bit device, dma32=2G: ok from DMA32, 0 fallbacks", ex_bits31_2g),
    "ring32-data64-streaming": ("64-bit data, 32-bit ring: ring below 4 GiB, 0 bounces", ex_ring32),
}


def yes(ok):
    return "ok" if ok else "failed"


def fmt(v):
    return "n/a" if v is None else str(v)


def make_record(spec, meta, info, run, failure):
    name, boot, strategy, op, size, count, flags = spec
    res = (run or {}).get("result") or {}
    rec = {
        "name": name,
        "boot": boot,
        "machine": meta["machine"],
        "mem": meta["mem"],
        "kernel_args": meta["kernel_args"],
        "device_props": meta["device_props"],
        "qemu_args": meta["qemu_args"],
        "strategy": strategy,
        "op": op,
        "size": parse_size(size),
        "count": int(count),
        "verify": "--verify" in flags,
        "ok": bool(res.get("ok")) if failure is None and run else False,
        "errno": res.get("errno"),
        "device_faults": res.get("device_faults"),
        "swiotlb_bounced": delta(run, "io_tlb_bounced"),
        "swiotlb_bounced_bytes": delta(run, "io_tlb_bounced_bytes_map"),
        "swiotlb_bounced_bytes_sync": delta(run, "io_tlb_bounced_bytes_sync"),
        "swiotlb_full": delta(run, "io_tlb_full"),
        "swiotlb_too_big": delta(run, "io_tlb_too_big"),
        "swiotlb_align_fail": delta(run, "io_tlb_align_fail"),
        "zone_dma_fallbacks": delta(run, "zone_dma_fallbacks"),
        "driver_bounced": res.get("bounced"),
        "driver_bounced_bytes": res.get("bounced_bytes"),
        "mbps": mb_s(res),
        "zone_dma_pages_used": (res.get("zones") or {}).get("DMA"),
        "zone_dma_free_before": ((run or {}).get("zone_dma") or {}).get("free_before"),
        "zone_dma_free_after": ((run or {}).get("zone_dma") or {}).get("free_after"),
        "zone_dma_managed": zone(info, "DMA").get("managed"),
        "pages_above_4g": res.get("pages_above_4g"),
        "pages": res.get("pages"),
        "zone_pages": res.get("zones"),
        "mappings": res.get("mappings"),
        "mappings_above_4g": res.get("mappings_above_4g"),
        "bytes": res.get("bytes"),
        "ns": res.get("ns"),
        "buffers": res.get("buffers"),
        "fault_addr": res.get("fault_addr"),
        "coherent_held": res.get("coherent_held"),
        "stderr": (run or {}).get("stderr") or None,
        "guest_ok": failure is None,
        "guest_error": failure,
        "log": meta["log"],
    }
    expect, check = EXPECT.get(name, ("", None))
    rec["expect"] = expect
    if failure is not None or not run:
        rec["as_expected"] = False
        rec["showed"] = ("guest failed: %s" % failure if failure else
                         "the guest printed no result for this scenario (is demo-scenario in the initramfs?)")
        return rec
    lok, ltxt = layout_ok(meta, info)
    if not res:
        rec["as_expected"] = False
        rec["showed"] = "dma32ctl gave no result (exit %s): %s" % (run.get("rc"), run.get("stderr") or "no output")
        return rec
    if check:
        rec["as_expected"], rec["showed"] = check(rec, info)
    else:
        rec["as_expected"], rec["showed"] = None, ""
    if lok is False:
        rec["as_expected"] = False
        rec["showed"] = "kernel ignored %s (%s); %s" % (meta["kernel_args"], ltxt, rec["showed"])
    return rec


def read_specs(path):
    specs = []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line:
                specs.append(line.split("|"))
    return specs


def progress_line(i, total, rec):
    if not rec["guest_ok"]:
        return "  [%d/%d] %-26s FAILED: %s (log: %s)" % (i, total, rec["name"], rec["guest_error"], rec["log"])
    state = "ok" if rec["ok"] else (rec["errno"] or "failed")
    mark = {True: "as expected", False: "NOT as expected", None: ""}[rec["as_expected"]]
    return "  [%d/%d] %-26s %-7s %s: %s" % (i, total, rec["name"], state, mark, rec["showed"])


def cmd_progress(raw, boot, done, total):
    meta, info, runs, _, fin = load_boot(raw, boot)
    failure = guest_failure(meta, fin)
    specs = [s for s in read_specs(os.path.join(raw, "scenarios.txt")) if s[1] == boot]
    for i, spec in enumerate(specs):
        rec = make_record(spec, meta, info, runs.get(spec[0]), failure)
        print(progress_line(done + i + 1, total, rec), flush=True)


# The table ------------------------------------------------------------------

COLS = [
    ("scenario", lambda r: r["name"]),
    ("request", lambda r: "%s %s %sx%d" % (r["strategy"], r["op"], human(r["size"]), r["count"])),
    ("ok", lambda r: ("yes" if r["ok"] else "no") if r["guest_ok"] else "FAIL"),
    ("errno", lambda r: r["errno"] or "-"),
    ("swiotlb bounced", lambda r: fmt(r["swiotlb_bounced"])),
    ("driver bounced", lambda r: fmt(r["driver_bounced"])),
    ("dev faults", lambda r: fmt(r["device_faults"])),
    ("ZONE_DMA pages", lambda r: fmt(r["zone_dma_pages_used"])),
    ("DMA fallbacks", lambda r: fmt(r["zone_dma_fallbacks"])),
    ("pages >4G", lambda r: fmt(r["pages_above_4g"])),
    ("MB/s", lambda r: "-" if r["mbps"] is None else "%.0f" % r["mbps"]),
    ("expected?", lambda r: {True: "yes", False: "NO", None: "?"}[r["as_expected"]]),
]


def text_table(records):
    rows = [[c[0] for c in COLS]] + [[c[1](r) for c in COLS] for r in records]
    w = [max(len(row[i]) for row in rows) for i in range(len(COLS))]
    out = []
    for k, row in enumerate(rows):
        out.append("  ".join(v.ljust(w[i]) if i < 2 else v.rjust(w[i]) for i, v in enumerate(row)).rstrip())
        if k == 0:
            out.append("  ".join("-" * x for x in w))
    return "\n".join(out)


def md_table(records):
    out = ["| " + " | ".join(c[0] for c in COLS) + " |",
           "|" + "|".join("---" if i < 2 else "--:" for i in range(len(COLS))) + "|"]
    for r in records:
        out.append("| " + " | ".join(c[1](r).replace("|", "/") for c in COLS) + " |")
    return "\n".join(out)


# The sweep and the plot -------------------------------------------------------

def sweep_best(sweeps):
    """{label: {size: best MB/s}} from all sweep records"""
    best = {}
    for boot, recs in sweeps.items():
        for s in recs:
            res = s.get("result") or {}
            if s.get("rc") != 0 or not res.get("ok"):
                continue
            label = s["strategy"] + (" via IOMMU" if boot == "iommu" else "")
            v = mb_s(res)
            if v is None:
                continue
            d = best.setdefault(label, {})
            d[s["size"]] = max(d.get(s["size"], 0), v)
    return best


PLOT_LABEL = {
    "coherent": "coherent (DMA32, zeroed at alloc)",
    "streaming": "streaming (pages >4G: bounced)",
    "streaming-dma32": "streaming-dma32 (direct)",
    "user": "user pages (>4G: bounced)",
    "streaming via IOMMU": "streaming via IOMMU (no bounce)",
}


def plot(best, report):
    """gnuplot: PNG via pngcairo or png, else SVG. Returns the file name or None."""
    if not best or not shutil.which("gnuplot"):
        return None, "gnuplot not found" if best else "no sweep data"
    labels = list(best)
    sizes = sorted({s for d in best.values() for s in d})
    dat = os.path.join(report, "throughput.dat")
    with open(dat, "w") as f:
        f.write("# size_bytes " + " ".join('"%s"' % l for l in labels) + "\n")
        for s in sizes:
            f.write("%d %s\n" % (s, " ".join(str(best[l].get(s, "NaN")) for l in labels)))
    terms = subprocess.run(["gnuplot", "-e", "set terminal"], capture_output=True, text=True)
    avail = terms.stdout + terms.stderr
    if " pngcairo " in avail:
        term, out = "pngcairo size 900,560 font 'sans,10'", "throughput.png"
    elif " png " in avail:
        term, out = "png size 900,560", "throughput.png"
    else:
        term, out = "svg size 900,560", "throughput.svg"
    for old in ("throughput.png", "throughput.svg"):
        if os.path.exists(os.path.join(report, old)):
            os.remove(os.path.join(report, old))
    gp = [
        "set terminal %s" % term,
        "set output '%s'" % os.path.join(report, out),
        "set title 'dma32-demo: fill throughput of a 32-bit device by buffer strategy (TCG guest, 8 MiB per point)'",
        "set logscale x 2",
        "set logscale y 10",
        "set xlabel 'buffer size'",
        "set ylabel 'MB/s (whole request: allocate, map, DMA, unmap/bounce, free)'",
        "set xtics ('4K' 4096, '16K' 16384, '64K' 65536, '256K' 262144, '1M' 1048576, '4M' 4194304)",
        "set grid",
        "set key top left box opaque",
        "plot " + ", ".join("'%s' using 1:%d with linespoints lw 2 title '%s'" % (dat, i + 2, PLOT_LABEL.get(l, l))
                            for i, l in enumerate(labels)),
    ]
    r = subprocess.run(["gnuplot"], input="\n".join(gp) + "\n", capture_output=True, text=True)
    if r.returncode != 0:
        return None, "gnuplot failed: " + r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "gnuplot failed"
    return out, None


def ratio(best, a, b, size=1 << 20):
    va, vb = best.get(a, {}).get(size), best.get(b, {}).get(size)
    if not va or not vb:
        return None
    return round(va / vb, 1)


# The report -----------------------------------------------------------------------

def rec_by(records, name):
    return next((r for r in records if r["name"] == name), None)


def claims(records, infos, best):
    """(seed claim, number that shows it) pairs; only numbers that exist."""
    out = []
    today = infos.get("today") or {}
    dma = zone(today, "DMA")
    nc = rec_by(records, "nodma32-coherent")
    if dma.get("managed") is not None:
        txt = "ZONE_DMA manages %d pages (%.1f MiB) of a 6 GiB guest" % (dma["managed"], dma["managed"] * 4096 / 1048576.0)
        if nc and nc["guest_ok"] and nc["coherent_held"] is not None:
            txt += "; with `dma32=off` a 32-bit driver asking for %d MiB of coherent memory got %.1f MiB (`%s`, %s ZONE_DMA pages) (`nodma32-coherent`)" % (
                nc["size"] * nc["count"] >> 20, nc["coherent_held"] / 1048576.0, nc["errno"], nc["zone_dma_pages_used"])
        out.append(("\"`ZONE_DMA` is a small and scarce resource\" (LWN); \"device drivers had trouble getting enough DMA able memory\" (the patch)", txt))
    c64 = rec_by(records, "dma32-coherent-64M")
    dc = rec_by(records, "dma32-coherent")
    if dc and dc["guest_ok"]:
        txt = "`dma32-coherent`: %s, %s bounced, %s ZONE_DMA pages, %s of %s pages below 4 GiB" % (
            yes(dc["ok"]), fmt(dc["swiotlb_bounced"]), dc["zone_dma_pages_used"], (dc["pages"] or 0) - (dc["pages_above_4g"] or 0), dc["pages"])
        if c64 and c64["guest_ok"]:
            txt += "; `dma32-coherent-64M`: 64 MiB of coherent memory %s with %s ZONE_DMA pages" % (yes(c64["ok"]), c64["zone_dma_pages_used"])
        out.append(("\"With the new zone pci_alloc_consistent can just put this stuff into memory below 4GB\" (the patch); \"the generic DMA code [uses] the new zone ... with no additional work required\" (LWN)", txt))
    r1 = ratio(best, "streaming-dma32", "streaming")
    ds = rec_by(records, "dma32-streaming")
    if r1 is not None:
        txt = "at 1 MiB, streaming-dma32 (direct) %.0f MB/s vs streaming (bounced) %.0f MB/s: %.1fx" % (
            best["streaming-dma32"][1 << 20], best["streaming"][1 << 20], r1)
        if ds and ds["guest_ok"]:
            txt += "; `dma32-streaming` bounced %s mappings / %s bytes through swiotlb" % (fmt(ds["swiotlb_bounced"]), fmt(ds["swiotlb_bounced_bytes"]))
        out.append(("\"bounce buffers are slow\" (LWN)", txt))
    io = rec_by(records, "iommu-streaming")
    if io and io["guest_ok"]:
        txt = "`iommu-streaming`: %s pages above 4 GiB reached the 32-bit device with %s bounces" % (io["pages_above_4g"], fmt(io["swiotlb_bounced"]))
        ri = ratio(best, "streaming-dma32", "streaming via IOMMU")
        if ri is not None:
            txt += "; at 1 MiB the IOMMU path ran at %.0f MB/s (direct: %.1fx that)" % (best["streaming via IOMMU"][1 << 20], ri)
        out.append(("\"Drivers for such devices have been forced to use `ZONE_DMA`, the I/O memory management unit ... or bounce buffers\" (LWN)", txt))
    rr = rec_by(records, "ring32-data64-streaming")
    if rr and rr["guest_ok"]:
        ring = ((infos.get("ring32") or {}).get("device") or {}).get("ring_dma")
        out.append(("\"hardware who has full memory addressing for >4GB misses it for some control structures in memory (like transmit rings)\" (the patch)",
                    "`ring32-data64-streaming`: ring at %s (coherent, below 4 GiB), %s data pages above 4 GiB, %s bounced" % (
                        hex(ring) if ring is not None else "n/a", rr["pages_above_4g"], fmt(rr["swiotlb_bounced"]))))
    b31, b2g = rec_by(records, "bits31-coherent"), rec_by(records, "bits31-dma32-2G-coherent")
    if b31 and b31["guest_ok"] and b2g and b2g["guest_ok"]:
        out.append(("\"One argument was still if the zone should be 4GB or 2GB\" (the patch)",
                    "31-bit device asking for %d x 1 MiB coherent: with the 4 GiB zone %s allocations landed above 2 GiB and fell back to ZONE_DMA (%s ZONE_DMA pages)%s; with `dma32=2G` the request was %s with %s fallbacks (%s ZONE_DMA pages)" % (
                        b31["count"], fmt(b31["zone_dma_fallbacks"]), b31["zone_dma_pages_used"],
                        ", then `%s` after %.1f MiB" % (b31["errno"], (b31["coherent_held"] or 0) / 1048576.0) if b31["errno"] else ", request ok",
                        yes(b2g["ok"]), fmt(b2g["zone_dma_fallbacks"]), b2g["zone_dma_pages_used"])))
    un = rec_by(records, "dma32-unsafe-raw")
    if un and un["guest_ok"]:
        out.append(("(why the DMA API matters) a driver that hands a 32-bit device raw addresses",
                    "`dma32-unsafe-raw`: %s, %s device faults, %s bytes written" % (un["errno"], un["device_faults"], un["bytes"])))
    return out


def versions_dict(path):
    d = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                parts = line.rstrip("\n").split(None, 1)
                if len(parts) == 2:
                    k, v = parts
                    if v.startswith("(") and ")" in v:  # "qemu (source) 1:7.2..."
                        extra, v = v.split(")", 1)
                        k = "%s %s)" % (k, extra)
                    d[k] = v.strip()
    return d


def cmd_final(raw, report, versions_txt, spec_txt, seconds):
    specs = read_specs(spec_txt)
    boots, infos, sweeps = {}, {}, {}
    for spec in specs:
        b = spec[1]
        if b not in boots:
            meta, info, runs, sw, done = load_boot(raw, b)
            boots[b] = (meta, info, runs, guest_failure(meta, done))
            infos[b] = info
            sweeps[b] = sw
    records = []
    for spec in specs:
        meta, info, runs, failure = boots[spec[1]]
        records.append(make_record(spec, meta, info, runs.get(spec[0]), failure))
    best = sweep_best(sweeps)
    os.makedirs(report, exist_ok=True)
    img, img_err = plot(best, report)
    r_dma32 = ratio(best, "streaming-dma32", "streaming")
    r_coh = ratio(best, "coherent", "streaming")
    versions = versions_dict(versions_txt)
    kernel_counters = sorted({c for i in infos.values() if i for c in i.get("counters_present", [])})

    results = {
        "versions": versions,
        "generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "seconds": int(seconds),
        "kernel_counters_present": kernel_counters,
        "boots": {b: {"cmdline": (i or {}).get("cmdline"), "zone_layout_line": (i or {}).get("zone_layout_line"),
                      "zones": (i or {}).get("zones"), "device": (i or {}).get("device"),
                      "iommu_groups": (i or {}).get("iommu_groups"),
                      "page_alloc_shuffle": (i or {}).get("page_alloc_shuffle"), "seconds": boots[b][0]["seconds"],
                      "error": boots[b][3], "log": boots[b][0]["log"]} for b, i in infos.items()},
        "scenarios": records,
        "sweep": {"op": "fill", "bytes_per_point": 8 << 20, "mbps_best_of": 5,
                  "mbps": {l: {str(s): v for s, v in sorted(d.items())} for l, d in best.items()}},
        "summary": {"ratio_direct_over_bounced_1M": r_dma32, "ratio_coherent_over_bounced_1M": r_coh,
                    "scenarios": len(records), "as_expected": sum(1 for r in records if r["as_expected"]),
                    "guest_failures": sum(1 for r in records if not r["guest_ok"])},
    }
    with open(os.path.join(report, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
        f.write("\n")

    table = text_table(records)
    summary = []
    summary.append("%d scenarios, %d as expected, %d guest failures; %ds in all." % (
        len(records), results["summary"]["as_expected"], results["summary"]["guest_failures"], int(seconds)))
    if r_dma32 is not None:
        summary.append("At 1 MiB: direct (streaming-dma32) %.0f MB/s / bounced (streaming) %.0f MB/s = %.1fx; coherent / bounced = %sx." % (
            best["streaming-dma32"][1 << 20], best["streaming"][1 << 20], r_dma32, fmt(r_coh)))
    else:
        summary.append("Direct/bounced ratio at 1 MiB: n/a (no sweep data).")
    if not kernel_counters and any(infos.values()):
        summary.append("This guest kernel has no swiotlb/dma-direct counters from kernel-patches/: those columns are n/a (null in results.json).")
    for r in records:
        if not r["guest_ok"]:
            summary.append("%s: guest failed: %s (log: %s)" % (r["name"], r["guest_error"], r["log"]))
    print()
    print(table)
    print()
    for s in summary:
        print(s)
    print("Report: %s/report.md, %s/results.json%s" % (
        rel(report), rel(report), ", %s/%s" % (rel(report), img) if img else " (no plot: %s)" % img_err))

    with open(os.path.join(report, "table.txt"), "w") as f:
        f.write(table + "\n\n" + "\n".join(summary) + "\n")
    write_md(report, records, results, best, infos, boots, table, summary, img, img_err)
    # Exit status: 1 when a guest failed (the table says which); a scenario
    # that ran but showed something unexpected is a finding, not a failure.
    return 1 if results["summary"]["guest_failures"] else 0


def rel(p):
    top = os.environ.get("DMA32_TOP", "")
    return os.path.relpath(p, top) if top else p


def write_md(report, records, results, best, infos, boots, table, summary, img, img_err):
    L = []
    L.append("# dma32-demo: the reviewer's report")
    L.append("")
    L.append("Generated by `make demo` (`scripts/demo`) on %s in %ss. Versions: %s." % (
        results["generated"], results["seconds"],
        ", ".join("%s %s" % (k, v) for k, v in results["versions"].items()) or "build/versions.txt missing"))
    L.append("")
    L.append("## The table")
    L.append("")
    L.append("One guest boot per configuration (QEMU TCG, one vCPU, %s); one `dma32ctl run` request per scenario." %
             ", ".join(sorted({"%s %s" % (m[0]["machine"], m[0]["mem"]) for m in boots.values()})))
    L.append("")
    L.append("```")
    L.append(table)
    L.append("```")
    L.append("")
    for s in summary:
        L.append("* " + s)
    L.append("")
    L.append("| scenario | boot | what it must show | what it showed |")
    L.append("|---|---|---|---|")
    for r in records:
        boot = " ".join(x for x in ("-M %s -m %s" % (r["machine"], r["mem"]), r["kernel_args"],
                                    ("`%s`" % r["device_props"]) if r["device_props"] else "", r["qemu_args"]) if x)
        L.append("| `%s` | %s | %s | %s%s |" % (r["name"], boot, r["expect"], "" if r["as_expected"] else "**NOT AS EXPECTED**: ",
                                               r["showed"].replace("|", "/")))
    L.append("")
    L.append("## Throughput by strategy")
    L.append("")
    if img:
        L.append("![throughput](%s)" % img)
    else:
        L.append("(no plot: %s)" % img_err)
    L.append("")
    if best:
        sizes = sorted({s for d in best.values() for s in d})
        L.append("| MB/s | " + " | ".join(human(s) for s in sizes) + " |")
        L.append("|---|" + "--:|" * len(sizes))
        for l, d in best.items():
            L.append("| %s | %s |" % (l, " | ".join("%.0f" % d[s] if s in d else "-" for s in sizes)))
        L.append("")
    L.append("## How to read it")
    L.append("")
    L.append(READING)
    L.append("")
    L.append("## The seed's claims, next to the numbers")
    L.append("")
    for claim, num in claims(records, infos, best):
        L.append("* %s: **%s**." % (claim, num))
    L.append("")
    L.append("## The zone layouts that were booted")
    L.append("")
    L.append("| boot | kernel args | ZONE_DMA managed | ZONE_DMA32 pfns | Normal from pfn | boot line |")
    L.append("|---|---|--:|---|--:|---|")
    for b, (meta, info, _, failure) in boots.items():
        if not info:
            L.append("| %s | %s | - | - | - | guest failed: %s |" % (b, meta["kernel_args"], failure))
            continue
        d, d32, n = zone(info, "DMA"), zone(info, "DMA32"), zone(info, "Normal")
        span = "%s..%s (present %s)" % (d32.get("start_pfn"), (d32.get("start_pfn") or 0) + (d32.get("spanned") or 0),
                                        d32.get("present")) if d32.get("spanned") else "empty"
        L.append("| %s | %s | %s | %s | %s | %s |" % (b, meta["kernel_args"] or "-", d.get("managed"), span,
                                                      n.get("start_pfn"), info.get("zone_layout_line") or "(no `ZONE_DMA32:` line: kernel without the dma32= patch)"))
    L.append("")
    L.append(METHOD)
    L.append("")
    L.append("<!-- bench: scripts/bench replaces everything below this line -->")
    bench_md = os.path.join(report, "bench.md")
    if os.path.exists(bench_md):
        with open(bench_md) as f:
            L.append(f.read().rstrip("\n"))
    with open(os.path.join(report, "report.md"), "w") as f:
        f.write("\n".join(L) + "\n")


READING = """\
Each row is one request from `dma32ctl` to the driver, on a device that can
reach only the first 4 GiB (2 GiB for `bits31-*`). *swiotlb bounced* is the
delta of the kernel's own counter (`/sys/kernel/debug/swiotlb/io_tlb_bounced`,
from kernel-patches/) across the request; *driver bounced* is the driver's own
count of mappings whose DMA address fell inside the swiotlb pool. The two must
agree: a 0 in both columns means the device touched the buffer directly. *ZONE_DMA
pages* counts the request's buffer pages that the page allocator took from the
16 MiB ZONE_DMA (the driver checks `page_zonenum()` of every page); *DMA
fallbacks* is the kernel's count of coherent allocations that dma-direct had
to retry in ZONE_DMA because the first page failed the device's mask. *pages
>4G* are buffer pages above 4 GiB; for `streaming` they are exactly the
bounced mappings, for `streaming-dma32` and `coherent` there are none, and
behind the IOMMU they do not matter. *MB/s* is bytes over the whole request
(allocate, map, DMA, unmap or bounce back, verify if asked, free): it is a
TCG guest, so CPU work (zeroing, copying to and from swiotlb) is expensive
and device work is cheap; compare strategies, not absolute numbers. Most
scenarios run with `--verify` (the CPU checks every byte), so their MB/s
are lower than the sweep's, which does not verify.

The plot shows the same for fill requests of 8 MiB in all at each buffer
size (best of 5, no verify), on the 6 GiB guest whose ordinary pages are
above 4 GiB. `streaming-dma32` (GFP_DMA32 pages, mapped, never bounced) is
the direct path; `streaming via IOMMU` maps the same kind of high pages
through the IOMMU instead (IOVAs below 4 GiB, no copy: it pays page-table
updates and IOTLB flushes, the "IOMMU mapping cost"); `streaming` and `user`
are ordinary pages above 4 GiB, which swiotlb copies into its pool at map
and back at unmap, every byte, on the CPU. `coherent` sits between the two:
it never bounces either, but dma_alloc_coherent hands back zeroed memory,
one CPU pass over every byte per request (a real driver allocates coherent
memory once and reuses it). At small sizes the per-request cost
(allocation, one mapping per buffer) dominates every line."""

METHOD = """\
## Method and caveats

* Guest: Debian's linux-source-6.1 with kernel-patches/ (the `dma32=` boot
  parameter and the swiotlb counters), QEMU 7.2 with the `dma32-demo`
  device, TCG, one vCPU. Each boot's console log is under `build/logs/demo-*.console.log`.
* Counters that the guest kernel does not have are `null` in results.json
  and `n/a` here, never 0.
* `zone_dma_pages_used` is the driver's per-page count of the request's
  buffers in ZONE_DMA (exact; the buffers are freed before the request
  returns, so the before/after free counts from /proc/zoneinfo, also in
  results.json as `zone_dma_free_before/after`, only show that nothing leaked).
* `nodma32-coherent` asks for 64 x 1 MiB in one request: all buffers are
  allocated before the device runs, so it fails with ENOMEM at the first
  buffer that does not fit and frees the rest; `coherent_held` is how far it got."""


def main():
    if len(sys.argv) >= 6 and sys.argv[1] == "progress":
        cmd_progress(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    elif len(sys.argv) == 7 and sys.argv[1] == "final":
        sys.exit(cmd_final(*sys.argv[2:6], int(sys.argv[6])))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
