#!/usr/bin/env python3
"""`make bench`'s host side (demo/bench_report.py) on a recorded run
(demo/tests/fixtures/bench/: what scripts/bench's guests printed, in the
demo's '@@' sections), and on that run altered as a broken guest would
leave it: a counter file missing, a guest that died, a dma32ctl that
printed nothing. Each altered run must show up as such, never as a 0.
KTAP; no guest.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
FIXTURE = os.path.join(TOP, "demo", "tests", "fixtures", "bench")
sys.path.insert(0, TOP)
sys.dont_write_bytecode = True
from demo.tests import ktap  # noqa: E402
from demo import bench_guest, identity, table  # noqa: E402

# The kernel make bench ran on, as scripts/bench gives it (DMA32_KERNEL)
KERNEL = table.KERNELS[-1]

results = []


def report(alter=None):
    """bench.json of the fixture, after alter(raw_dir) if given."""
    scratch = tempfile.mkdtemp(prefix="demo-bench-")
    try:
        raw = os.path.join(scratch, "raw")
        shutil.copytree(FIXTURE, raw)
        if alter:
            alter(raw)
        out = os.path.join(scratch, "report")
        os.mkdir(out)
        # The guests' kernel and initramfs as scripts/bench names them: two
        # of the recorded files stand in for them
        booted = [os.path.join(raw, "copy.json"), os.path.join(raw, "ab.threads")]
        r = subprocess.run([sys.executable, "-m", "demo.bench_report", raw, out, os.path.join(raw, "versions.txt"),
                            "100", *booted], cwd=TOP, capture_output=True, text=True,
                           env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1", DMA32_KERNEL=KERNEL))
        if r.returncode != 0:
            return None, r.stderr.strip().splitlines()[-1:] or ["exit %d" % r.returncode]
        with open(os.path.join(out, "bench.json")) as f:
            bench = json.load(f)
        with open(os.path.join(out, "bench-manifest.json")) as f:
            bench["manifest"] = json.load(f)
        bench["manifest"]["booted"] = [identity.file_identity(p)["sha256"] for p in booted]
        return bench, None
    finally:
        shutil.rmtree(scratch)


def check(ok, desc, diag=""):
    results.append((bool(ok), desc, diag))


def drv(bench, guest, strategy, size):
    return next((d for d in bench["driver"] if (d["guest"], d["strategy"], d["size"]) == (guest, strategy, size)),
                None)


def rewrite(path, fn):
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(fn(text))


def main():
    bench, err = report()
    if bench is None:
        return ktap.emit([(False, "bench_report reads the recorded run", err)])
    n_driver = len(bench_guest.GUESTS) * len(bench_guest.DRIVER_SIZES) * len(bench_guest.DRIVER_STRATEGIES)
    n_maps = len(bench_guest.GUESTS) * len(bench_guest.MAP_BITS) * len(bench_guest.MAP_GRANULES)
    check(len(bench["driver"]) == n_driver and len(bench["dma_map_benchmark"]) == n_maps,
          "every driver request and every dma_map_benchmark run of the recorded run is read",
          "%d driver, %d maps" % (len(bench["driver"]), len(bench["dma_map_benchmark"])))
    check(all(g["ok"] for g in bench["guests"].values()), "both recorded guests are ok", bench["guests"])
    check({g: v["mem"] for g, v in bench["guests"].items()} == bench_guest.GUESTS,
          "each guest's memory is the one bench_guest.GUESTS says", bench["guests"])
    s = drv(bench, "bounce", "streaming", 4096)
    check(s and s["bounced"] == s["mappings"] > 0 and s["swiotlb_bounced"] == s["bounced"],
          "6G streaming: every mapping bounced, the driver's count equals swiotlb's", s)
    s = drv(bench, "bounce", "streaming-dma32", 4096)
    check(s and s["bounced"] == 0 and s["swiotlb_bounced"] == 0, "6G streaming-dma32: nothing bounced", s)
    s = drv(bench, "nobounce", "streaming", 4096)
    check(s and s["bounced"] == 0 and s["swiotlb_bounced"] is None,
          "2G: no pool, so swiotlb's count is absent (null), not 0", s)
    m32 = next((m for m in bench["dma_map_benchmark"] if (m["guest"], m["bits"], m["granule"]) == ("bounce", 32, 1)),
               None)
    m64 = next((m for m in bench["dma_map_benchmark"] if (m["guest"], m["bits"], m["granule"]) == ("bounce", 64, 1)),
               None)
    check(m32 and m64 and m32["swiotlb_bounced"] > 0 and m64["swiotlb_bounced"] == 0,
          "dma_map_benchmark on 6G: a 32-bit mask bounces (counted around the run), a 64-bit one does not",
          (m32, m64))
    cc = bench["counter_cost"]
    check(cc and all(c["on"]["runs"] == c["off"]["runs"] > 0 and c["median_diff_us"] is not None for c in cc),
          "the counters' A/B has runs on both sides and a difference", cc)
    m = bench["manifest"]
    k = m["build"]["kernels"].get(KERNEL) or {}
    hashes = [(k.get(f) or {}).get("sha256") for f in ("bzimage", "initramfs")]
    check(m["kernel"] == bench["kernel"] == KERNEL and hashes == m["booted"] and m["build"]["qemu"]["path"] and m["versions"] == identity.versions_dict(
              os.path.join(FIXTURE, "versions.txt")),
          "bench-manifest.json: the kernel, the sha256 of the bzImage and initramfs scripts/bench booted, the versions",
          {x: m[x] for x in ("kernel", "booted")})
    sm = bench["summary"]
    check(sm.get("map_unmap_4k_ratio") and sm["map_unmap_4k_ratio"] > 1,
          "the summary's bounce ratio is read from the same runs", sm)

    # A counter file missing after a run: its change is unknown, not 0
    def drop_after_counters(raw):
        path = table.COUNTERS["swiotlb_bounced"]
        rewrite(os.path.join(raw, "bounce.out"),
                lambda t: t.replace("@@counters after map-32-1-1\n%s " % path, "@@counters after map-32-1-1\n%s-gone " % path))
    b2, err = report(drop_after_counters)
    m = b2 and next((m for m in b2["dma_map_benchmark"] if (m["guest"], m["bits"], m["granule"]) == ("bounce", 32, 1)),
                    None)
    check(m and m["swiotlb_bounced"] is None, "a counter missing after a run reads as null, never 0", m or err)

    # The bounce guest died after the driver's figures: said, with run-guest's reason
    def died(raw):
        rewrite(os.path.join(raw, "bounce.out"), lambda t: t[:t.index("@@bench bind")])
        with open(os.path.join(raw, "bounce.rc"), "w") as f:
            f.write("124\n")
        with open(os.path.join(raw, "bounce.status.json"), "w") as f:
            json.dump({"outcome": "timeout", "exit": 124, "message": "the guest ran over its 180 s timeout"}, f)
    b3, err = report(died)
    g = b3 and b3["guests"]["bounce"]
    check(g and not g["ok"] and "180 s timeout" in (g["error"] or "")
          and not [m for m in b3["dma_map_benchmark"] if m["guest"] == "bounce"],
          "a guest that died is failed with run-guest's reason, and has no benchmark rows", g or err)

    # dma32ctl printed no result: the guest is failed, naming the request
    def no_result(raw):
        rewrite(os.path.join(raw, "nobounce.out"),
                lambda t: t.replace("@@run drv-streaming-4096\n{", "@@run drv-streaming-4096\nX{", 1))
    b4, err = report(no_result)
    g = b4 and b4["guests"]["nobounce"]
    check(g and not g["ok"] and "drv-streaming-4096" in (g["error"] or ""),
          "a request without a result fails its guest, naming the request", g or err)

    return ktap.emit(results)


if __name__ == "__main__":
    sys.exit(main())
