#!/usr/bin/env python3
"""Host side of `make bench` (scripts/bench): bench.json and bench.md
(report.md, which `make report` writes, takes bench.md in as its last part).

  python3 -m demo.bench_report RAW_DIR REPORT_DIR VERSIONS_TXT SECONDS [BZIMAGE INITRAMFS]
                                                    (from the project root)

raw/ holds what scripts/bench's guests printed, in the demo's '@@' sections
(demo/bench_guest.py builds their command; the guests and their memory are
said there once), parsed with the demo's own parser. Why a guest failed
comes from run-guest's status, raw/NAME.status.json.

bench-manifest.json, beside them, says what the benchmark ran on (the
guest kernel, DMA32_KERNEL's unless BZIMAGE and INITRAMFS name the files
scripts/bench booted, the package versions and the build's identity, as
demo/identity.py records them for `make demo`): render takes bench.md into
report.md only when that is the build the demo's run booted.
"""
import json
import os
import sys
import time

from . import identity, table
from .bench_guest import GUESTS
from .identity import versions_dict
from .judge import counter, first_json, parse_sections


def sections(path):
    """The guest's '@@' sections (demo/collect.py), or [] without output."""
    if not os.path.exists(path):
        return []
    with open(path, errors="replace") as f:
        return parse_sections(f.read())


def rc_after(secs, i):
    """The '@@rc N' that follows section i, or None."""
    for kind, args, _ in secs[i + 1:]:
        if kind == "rc":
            return int(args) if args.strip().lstrip("-").isdigit() else None
        if kind not in ("stderr",):
            return None
    return None


def snapshots(secs):
    """{(when, name): {path: value or None}} from '@@counters WHEN NAME'."""
    out = {}
    for kind, args, body in secs:
        if kind == "counters":
            when, _, name = args.partition(" ")
            vals = {}
            for line in body:
                path, _, v = line.partition(" ")
                vals[path] = int(v) if v.strip().isdigit() else None
            out[(when, name)] = vals
    return out


def delta(snaps, name, key):
    """A counter's change around bench run NAME; None when absent."""
    path = table.COUNTERS[key]
    b = snaps.get(("before", name), {}).get(path)
    a = snaps.get(("after", name), {}).get(path)
    return None if a is None or b is None else a - b


def bench_records(secs):
    """(name, JSON) of every '@@bench NAME' section's demo-bench line."""
    return [(args, first_json(body)) for kind, args, body in secs if kind == "bench"]


def map_records(secs):
    """dma_map_benchmark runs with the swiotlb counters' change around each."""
    snaps = snapshots(secs)
    out = []
    for name, m in bench_records(secs):
        if m and m.get("type") == "map":
            m = dict(m)
            m.pop("type", None)
            m["swiotlb_bounced"] = delta(snaps, name, "swiotlb_bounced")
            m["swiotlb_bounced_bytes"] = delta(snaps, name, "swiotlb_bounced_bytes")
            out.append(m)
    return out


def read(path):
    if not os.path.exists(path):
        return ""
    with open(path, errors="replace") as f:
        return f.read().strip()


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    if not n:
        return None
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2.0


def counter_cost(raw):
    """The A/B of the swiotlb counters: per side (on, off) and thread count,
    the median and the spread (max - min) over the boots of map + unmap us."""
    threads = [int(t) for t in read(os.path.join(raw, "ab.threads")).split()] or [1]
    sides = {}
    for side in ("on", "off"):
        runs = sorted(f for f in os.listdir(raw) if f.startswith("ab-%s-" % side) and f.endswith(".out"))
        for t in threads:
            vals, bounced = [], []
            for f in runs:
                m = next((r for r in map_records(sections(os.path.join(raw, f)))
                          if r.get("threads", 1) == t and r.get("rc") == 0
                          and r.get("map_us") is not None), None)
                if m:
                    vals.append(round(m["map_us"] + m["unmap_us"], 2))
                    bounced.append(m.get("swiotlb_bounced"))
            sides[(side, t)] = {"side": side, "threads": t, "runs": len(vals), "map_unmap_us": vals,
                                "median_us": round(median(vals), 2) if vals else None,
                                "spread_us": round(max(vals) - min(vals), 2) if vals else None,
                                "swiotlb_bounced": bounced}
    out = []
    for t in threads:
        on, off = sides[("on", t)], sides[("off", t)]
        diff = None
        if on["median_us"] is not None and off["median_us"]:
            diff = round(on["median_us"] - off["median_us"], 2)
        out.append({"threads": t, "on": on, "off": off, "median_diff_us": diff,
                    "median_diff_pct": round(100.0 * diff / off["median_us"], 1) if diff is not None else None,
                    "within_spread": (abs(diff) <= max(on["spread_us"], off["spread_us"]))
                    if diff is not None else None})
    return out


def bench_manifest(raw, kernel, versions_txt, files):
    """What the benchmark ran on: bench-manifest.json's content."""
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    build = os.path.dirname(os.path.abspath(versions_txt))
    files = files or identity.kernel_files(build, kernel, table.DEFAULT_KERNEL)
    ident = identity.build_identity(top, build, {kernel: files})
    proc_version = {name: next((" ".join(body).strip() for kind, args, body in sections(os.path.join(raw, name + ".out"))
                                if kind == "file" and args == "/proc/version"), None) or None for name in GUESTS}
    ident["kernels"][kernel]["proc_version"] = next((v for v in proc_version.values() if v), None)
    return {"kernel": kernel, "versions": versions_dict(versions_txt), "build": ident,
            "guests": {name: {"mem": mem, "proc_version": proc_version[name]} for name, mem in GUESTS.items()}}


def main():
    raw, report, versions_txt, seconds = sys.argv[1:5]
    files = dict(zip(("bzimage", "initramfs"), sys.argv[5:7])) if len(sys.argv) >= 7 else None
    kernel = os.environ.get("DMA32_KERNEL") or table.DEFAULT_KERNEL
    manifest = bench_manifest(raw, kernel, versions_txt, files)
    try:
        with open(os.path.join(raw, "copy.json")) as f:
            copy = json.load(f)
    except (OSError, json.JSONDecodeError):
        copy = None
    copy_err = None if copy else (read(os.path.join(raw, "copy.err")).splitlines() or ["no result"])[-1]

    guests, driver, maps = {}, [], []
    for name, mem in GUESTS.items():
        secs = sections(os.path.join(raw, name + ".out"))
        rc = int(read(os.path.join(raw, name + ".rc")) or 1)
        done = any(kind == "done" for kind, _, _ in secs)
        err = None
        if rc != 0 or not done:
            try:
                with open(os.path.join(raw, name + ".status.json")) as f:
                    status = json.load(f)
            except (OSError, json.JSONDecodeError):
                status = {}
            err = (status.get("message") or status.get("outcome")
                   or ("guest exited with status %d" % rc if rc else "the guest's output ended early"))
        bind = next((b for n, b in bench_records(secs) if n == "bind" and b), None)
        if bind and not bind.get("ok"):
            err = err or bind.get("error")
        present = set()
        for i, (kind, args, body) in enumerate(secs):
            if kind != "run":
                continue
            res = first_json(body)
            if not res:
                err = err or "dma32ctl %s printed no result (exit %s)" % (args, rc_after(secs, i))
                continue
            present |= {k for k, p in table.COUNTERS.items()
                        if ((res.get("counters") or {}).get(p) or {}).get("before") is not None}
            driver.append({
                "guest": name, "mem": mem, "strategy": res["strategy"], "op": res["op"],
                "size": res["size"], "count": res["count"], "ok": res["ok"], "errno": res.get("errno"),
                "mappings": res["mappings"], "bounced": res["bounced"],
                "swiotlb_bounced": counter(res, table.COUNTERS["swiotlb_bounced"], False),
                "ns": res["ns"], "dma_ns": res["dma_ns"],
                "us_per_mapping": round(res["ns"] / 1000.0 / res["mappings"], 2) if res["mappings"] else None,
                "mbps": round(res["bytes"] * 1000.0 / res["ns"], 1) if res["ns"] else None,
            })
        for m in map_records(secs):
            m.update({"guest": name, "mem": mem})
            maps.append(m)
        guests[name] = {"mem": mem, "ok": err is None, "error": err,
                        "log": "build/logs/bench-%s.console.log" % name,
                        "counters_present": sorted(present)}

    bench = {
        "versions": versions_dict(versions_txt),
        "generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "seconds": int(seconds),
        "kernel": kernel,
        "device_copy": copy,
        "device_copy_error": copy_err,
        "guests": guests,
        "dma_map_benchmark": maps,
        "driver": driver,
        "counter_cost": counter_cost(raw),
    }

    def mget(guest, bits, g):
        return next((m for m in maps if m["guest"] == guest and m["bits"] == bits and m["granule"] == g), None)

    def dget(guest, strat, size):
        return next((d for d in driver if d["guest"] == guest and d["strategy"] == strat and d["size"] == size), None)

    summary = {}
    # The bounce's cost on one boot: the same pages, mapped with a 32-bit
    # mask (they lie above 4 GiB: every mapping bounces) and a 64-bit one.
    b, n = mget("bounce", 32, 1), mget("bounce", 64, 1)
    if b and n and b.get("map_us") and n.get("map_us") is not None:
        tb = b["map_us"] + b["unmap_us"]
        tn = n["map_us"] + n["unmap_us"]
        summary["map_unmap_4k_us_bounced"] = round(tb, 2)
        summary["map_unmap_4k_us_direct"] = round(tn, 2)
        summary["map_unmap_4k_ratio"] = round(tb / tn, 1) if tn else None
    # For comparison only: a 32-bit mask on a 2 GiB guest (nothing above 4 GiB).
    n2 = mget("nobounce", 32, 1)
    if n2 and n2.get("map_us") is not None:
        summary["map_unmap_4k_us_2g_guest"] = round(n2["map_us"] + n2["unmap_us"], 2)
    ds, dd = dget("bounce", "streaming", 4096), dget("bounce", "streaming-dma32", 4096)
    if ds and dd and ds["us_per_mapping"] and dd["us_per_mapping"]:
        summary["driver_4k_us_per_mapping_bounced"] = ds["us_per_mapping"]
        summary["driver_4k_us_per_mapping_direct"] = dd["us_per_mapping"]
        summary["driver_4k_bounce_cost_us"] = round(ds["us_per_mapping"] - dd["us_per_mapping"], 2)
    if copy:
        summary["device_copy_over_memcpy"] = copy.get("ratio")
    bench["summary"] = summary
    with open(os.path.join(report, "bench.json"), "w") as f:
        json.dump(bench, f, indent=1)
        f.write("\n")

    def f(v, fmtstr="%s"):
        return "n/a" if v is None else fmtstr % v

    md = ["## Benchmarks (`make bench`)", ""]
    md.append("Generated by `scripts/bench` on %s in %ss; guest kernel: Linux %s (linux-source-%s with its series)." % (
        bench["generated"], seconds, bench["kernel"], bench["kernel"]))
    md.append("")
    md.append("### The device's COPY vs host memcpy")
    md.append("")
    if copy:
        md.append("`qemu-device/bench-copy` (a qtest, no guest kernel): 64 MiB COPY, best of %s: device **%s MB/s**, host memcpy **%s MB/s**, ratio **%s** (separate buffers: memcpy %s MB/s, ratio %s)." % (
            copy.get("runs"), copy.get("device_copy_mbps"), copy.get("host_memcpy_mbps"), copy.get("ratio"),
            copy.get("host_memcpy_separate_buffers_mbps"), copy.get("ratio_separate_buffers")))
        md.append("The device itself moves data at host memory speed: any slowness in the table above is the guest's (bounce copies, allocation), not the device's.")
    else:
        md.append("Not measured: %s." % copy_err)
    md.append("")
    md.append("### dma_map_benchmark on our device, next to the driver's own figures")
    md.append("")
    md.append("The kernel's `dma_map_benchmark` (CONFIG_DMA_MAP_BENCHMARK, one thread, %s s per row) bound to the dma32-demo "
              "function through `driver_override` after unbinding dma32demo. It maps and unmaps `granule` pages of "
              "ordinary kernel memory (BIDIRECTIONAL) with the given DMA mask; it does no DMA. On the 6 GiB guest those "
              "pages are above 4 GiB, so a 32-bit mask bounces every mapping through swiotlb; on the 2 GiB guest all memory "
              "is below 4 GiB and nothing bounces. A 64-bit mask is the reference (no bounce; a wrong claim for this device, "
              "harmless here only because the benchmark never starts the device)." % maps[0]["seconds"] if maps else "No dma_map_benchmark results.")
    md.append("")
    md.append("| guest | mask | granule | map us (stddev) | unmap us (stddev) | swiotlb bounced | bounced bytes |")
    md.append("|---|--:|--:|--:|--:|--:|--:|")
    for m in maps:
        md.append("| %s %s | %s | %s x 4K | %s (%s) | %s (%s) | %s | %s |" % (
            m["mem"], m["guest"], m["bits"], m["granule"], f(m.get("map_us")), f(m.get("map_stddev_us")),
            f(m.get("unmap_us")), f(m.get("unmap_stddev_us")), f(m.get("swiotlb_bounced")), f(m.get("swiotlb_bounced_bytes"))))
    md.append("")
    md.append("The driver's own figures, same guests (fill, 4 MiB per request, whole request: allocate, map, DMA, unmap, free):")
    md.append("")
    md.append("| guest | strategy | size x count | mappings | bounced (driver / swiotlb) | us per mapping | MB/s |")
    md.append("|---|---|--:|--:|--:|--:|--:|")
    for d in driver:
        md.append("| %s %s | %s | %s x %s | %s | %s / %s | %s | %s |" % (
            d["mem"], d["guest"], d["strategy"], d["size"], d["count"], d["mappings"], d["bounced"],
            f(d["swiotlb_bounced"]), f(d["us_per_mapping"]), f(d["mbps"])))
    md.append("")
    for g, v in guests.items():
        if not v["ok"]:
            md.append("* guest `%s` failed: %s (log: %s)" % (g, v["error"], v["log"]))
        elif "swiotlb_bounced" not in v["counters_present"]:
            md.append("* guest `%s` (%s): no swiotlb counters (n/a): %s" % (
                g, v["mem"], "x86 sets up no swiotlb pool when all RAM is below 4 GiB, so nothing can bounce"
                if v["mem"] == "2G" else "this kernel lacks the swiotlb counters of kernel-patches/"))
    if summary:
        md.append("")
        if "map_unmap_4k_ratio" in summary:
            md.append("* On one boot (6 GiB guest, its pages above 4 GiB), a 4 KiB map + unmap costs **%s us** with a 32-bit "
                      "mask, where every mapping bounces, and **%s us** with a 64-bit mask, where none does: **%sx** "
                      "(TCG: the bounce is a CPU copy, which TCG makes expensive). A 2 GiB guest with a 32-bit mask, "
                      "nothing to bounce: %s us." % (
                          summary["map_unmap_4k_us_bounced"], summary["map_unmap_4k_us_direct"], summary["map_unmap_4k_ratio"],
                          summary.get("map_unmap_4k_us_2g_guest", "n/a")))
        if "driver_4k_bounce_cost_us" in summary:
            md.append("* The driver's own figure agrees: a 4 KiB streaming mapping costs %s us per mapping over the whole request "
                      "when it bounces vs %s us for streaming-dma32 on the same guest, %s us more per bounced mapping." % (
                          summary["driver_4k_us_per_mapping_bounced"], summary["driver_4k_us_per_mapping_direct"],
                          summary["driver_4k_bounce_cost_us"]))
    md.append("")
    md.append("### What the swiotlb counters cost")
    md.append("")
    md.append("`dma_map_benchmark`, 32-bit mask, 4 KiB mappings that all bounce (6 GiB guest), %s s per run, one boot per run, "
              "the same kernel booted alternately with the counters on and with `swiotlb_stats=off`. Map + unmap us per "
              "mapping: median over the runs, spread = max - min." % (maps[0]["seconds"] if maps else "?"))
    md.append("")
    md.append("| threads | counters on: median (spread) | off: median (spread) | on - off | runs | within spread? |")
    md.append("|--:|--:|--:|--:|--:|---|")
    for c in bench["counter_cost"]:
        md.append("| %s | %s (%s) | %s (%s) | %s us (%s%%) | %s / %s | %s |" % (
            c["threads"], f(c["on"]["median_us"]), f(c["on"]["spread_us"]), f(c["off"]["median_us"]),
            f(c["off"]["spread_us"]), f(c["median_diff_us"]), f(c["median_diff_pct"]), c["on"]["runs"],
            c["off"]["runs"], {True: "yes", False: "no", None: "-"}[c["within_spread"]]))
    if [c["threads"] for c in bench["counter_cost"]] == [1]:
        md.append("")
        md.append("One thread only: the guest kernel is built without CONFIG_SMP, so a second vCPU would sit idle.")
    md.append("")
    text = "\n".join(md)
    with open(os.path.join(report, "bench.md"), "w") as fh:
        fh.write(text)

    # Terminal
    print()
    if copy:
        print("device COPY 64 MiB: %s MB/s, host memcpy %s MB/s, ratio %s" % (
            copy.get("device_copy_mbps"), copy.get("host_memcpy_mbps"), copy.get("ratio")))
    else:
        print("device COPY: not measured (%s)" % copy_err)
    print("%-14s %4s %7s %10s %10s %9s" % ("guest", "mask", "granule", "map us", "unmap us", "bounced"))
    for m in maps:
        print("%-14s %4s %7s %10s %10s %9s" % ("%s %s" % (m["mem"], m["guest"]), m["bits"], m["granule"],
                                               f(m.get("map_us")), f(m.get("unmap_us")), f(m.get("swiotlb_bounced"))))
    print("%-14s %-16s %12s %9s %8s %9s %8s" % ("guest", "driver strategy", "size x count", "mappings", "bounced", "us/map", "MB/s"))
    for d in driver:
        print("%-14s %-16s %12s %9s %8s %9s %8s" % ("%s %s" % (d["mem"], d["guest"]), d["strategy"],
                                                    "%dx%d" % (d["size"], d["count"]), d["mappings"], d["bounced"],
                                                    f(d["us_per_mapping"]), f(d["mbps"])))
    for g, v in guests.items():
        if not v["ok"]:
            print("guest %s failed: %s (log: %s)" % (g, v["error"], v["log"]))
    for c in bench["counter_cost"]:
        print("swiotlb counters, %d thread(s), map+unmap us: on %s (spread %s, %d runs), off %s (spread %s, %d runs), "
              "on - off %s us (%s%%)" % (c["threads"], f(c["on"]["median_us"]), f(c["on"]["spread_us"]), c["on"]["runs"],
                                         f(c["off"]["median_us"]), f(c["off"]["spread_us"]), c["off"]["runs"],
                                         f(c["median_diff_us"]), f(c["median_diff_pct"])))
    with open(os.path.join(report, "bench-manifest.json"), "w") as fh:
        json.dump(manifest, fh, indent=1)
        fh.write("\n")
    print("Wrote %s/bench.json, bench.md and bench-manifest.json" % report)


if __name__ == "__main__":
    main()
