"""The memory-map figures: one per boot, from results.json alone.

Physical address on an axis that is linear in two pieces: the first
16 MiB (ZONE_DMA) magnified, so that it shows next to 16 GiB, then the rest
to scale, the change of scale marked; the boot's zones as bands, its RAM
holes hatched, the swiotlb pool as a band, 2 GiB and 4 GiB as marked lines
(the device's reach drawn heavier), and one lane per scenario of the boot:
its buffers' address runs where the driver found them, the runs that
bounced marked apart together with the bounce slots the device was given
instead (their DMA addresses, inside the pool), coherent memory held in the
pool, runs never mapped or handed over beyond the device's reach, the
truncation-alias window with the address the device was given, and the
device's own ring and control buffers. On a NUMA boot each node's page
range (from the boot log's node ranges) is marked too: a line where a node
begins and its name over its range, so that a page's node and zone read
off the same axis.
"""
import functools
import os
import shutil
import subprocess
import textwrap

from . import table

PAGE = 4096
ZOOM_END = 16 << 20     # [0, ZOOM_END) is magnified ...
ZOOM_SHARE = 0.14       # ... to this share of the axis
MIN_SHARE = 1.0 / 450   # a run narrower than this share of the axis is drawn this wide
KEY_ROW = 16            # px a row of the key takes, font size 9
AXIS_BELOW = 48         # px under a figure's graph for its tic labels and axis label
INSET_SHARE = 0.03      # a swiotlb pool or GART aperture narrower than this share gets an inset
POOL_COLOUR, APERTURE_COLOUR = "#9e9ac8", "#fec44f"
ZONE_COLOURS = {"DMA": "#fbb4ae", "DMA32": "#b3cde3", "Normal": "#ccebc5"}
NODE_COLOUR = "#7b3294"
# Coherent memory the device holds in the swiotlb pool or the GART aperture
# for as long as it is bound (or the buffer lives) is magenta; what a
# streaming mapping takes there for the request alone is orange (a bounce
# slot) or dark yellow (an aperture page), a row of its own under the lane.
HELD_COLOUR = "#ae017e"
STYLES = [  # series, legend, colour, lane offset, half height; drawn in this order
    ("ring", "descriptor ring", "#006d2c", 0.12, 0.3),
    ("ctrl", "control buffers", "#66c2a4", 0.12, 0.3),
    ("heldpool", "ring or control buffers, held in the swiotlb pool", HELD_COLOUR, 0.12, 0.3),
    ("direct", "buffer, used directly", "#1f4e9c", 0.12, 0.2),
    ("bounced", "buffer, bounced", "#e6550d", 0.12, 0.2),
    ("slot", "streaming: its bounce slot (DMA address)", "#fd8d3c", -0.24, 0.09),
    ("unmapped", "buffer, never mapped", "#888888", 0.12, 0.2),
    ("unreachable", "buffer, beyond the device's reach", "#cb181d", 0.12, 0.2),
    ("pool", "coherent buffer, held in the swiotlb pool", "#6a51a3", 0.12, 0.2),
    ("remapped", "buffer, remapped by the GART", "#41b6c4", 0.12, 0.2),
    ("aperslot", "streaming: its GART aperture page (DMA address)", "#b8860b", -0.24, 0.09),
    ("aperheld", "coherent: GART aperture page it holds (DMA address)", HELD_COLOUR, -0.44, 0.08),
    ("alias", "reserved window: where the data landed", "#8c6d31", 0.12, 0.2),
    ("target", "the address the device was given", "#cb181d", -0.24, 0.09),
]


def human(n):
    for unit, sh in (("G", 30), ("M", 20), ("K", 10)):
        if n >= (1 << sh) and n % (1 << sh) == 0:
            return "%d%s" % (n >> sh, unit)
    return str(n)


@functools.lru_cache(maxsize=None)
def gnuplot_terminals():
    """What `gnuplot -e 'set terminal'` lists: asked once a run, not per map."""
    terms = subprocess.run(["gnuplot", "-e", "set terminal"], capture_output=True, text=True)
    return terms.stdout + terms.stderr


def terminal(width, height, stem):
    """(gnuplot terminal, file name): PNG via pngcairo or png, else SVG."""
    avail = gnuplot_terminals()
    if " pngcairo " in avail:
        return "pngcairo noenhanced size %d,%d font 'sans,10'" % (width, height), stem + ".png"
    if " png " in avail:
        return "png noenhanced size %d,%d" % (width, height), stem + ".png"
    return "svg noenhanced size %d,%d" % (width, height), stem + ".svg"


def zone_spans(zones):
    """[(zone, start, end)] in bytes, for the zones that span something."""
    out = []
    for z in ("DMA", "DMA32", "Normal"):
        d = (zones or {}).get(z) or {}
        if d.get("spanned") and d.get("start_pfn") is not None:
            out.append((z, d["start_pfn"] * PAGE, (d["start_pfn"] + d["spanned"]) * PAGE))
    return out


class Axis:
    """The piecewise linear address axis: [0, ZOOM_END) magnified k times."""

    def __init__(self, top):
        self.top = top
        self.k = max(1.0, ZOOM_SHARE * (top - ZOOM_END) / ((1 - ZOOM_SHARE) * ZOOM_END))

    def fwd(self, x):
        return x * self.k if x < ZOOM_END else ZOOM_END * self.k + (x - ZOOM_END)

    def inv(self, y):
        return y / self.k if y < ZOOM_END * self.k else y - ZOOM_END * self.k + ZOOM_END

    def gnuplot(self):
        b, k = ZOOM_END, self.k
        return "set nonlinear x via (x < %d ? x * %r : %r + (x - %d)) inverse (x < %r ? x / %r : x - %r + %d)" % (
            b, k, b * k, b, b * k, k, b * k, b)

    def box(self, lo, hi):
        """[lo, hi), widened to the least visible width."""
        t = self.fwd(lo) + (self.fwd(self.top) * MIN_SHARE)
        return lo, max(hi, int(self.inv(t)))


class Inset:
    """A linear axis over [lo, hi): the inset of a narrow band."""

    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    def box(self, lo, hi):
        return lo, max(hi, lo + int((self.hi - self.lo) * MIN_SHARE))


def series(recs, axis, reach, aperture=None):
    """{series: [(x_lo, x_hi, lane)]} for the scenarios of one boot, the
    first scenario in the top lane. A run the device got at an address at
    or beyond @reach (its data reach: unsafe-raw) is 'unreachable'; one
    whose DMA address lies in the GART @aperture ({start, end}) is
    'remapped', its aperture page drawn under it: 'aperslot' for a
    streaming mapping, 'aperheld' for coherent memory (the ring, the
    control buffers, a coherent request), which holds it while it lives.
    The ring and control buffers that lie in the swiotlb pool are
    'heldpool'."""
    out = {k[0]: [] for k in STYLES}
    n = len(recs)

    def in_aperture(run):
        return (aperture is not None and run.get("dma") is not None
                and aperture["start"] <= run["dma"] < aperture["end"])
    for i, r in enumerate(recs):
        lane = n - 1 - i
        box = axis.box
        for run in r.get("device_runs") or []:
            out["heldpool" if run.get("in_pool") else run["kind"]].append(
                box(run["phys"], run["phys"] + run["pages"] * PAGE) + (lane,))
            if in_aperture(run):
                out["aperheld"].append(box(run["dma"], run["dma"] + run["pages"] * PAGE) + (lane,))
        for run in r.get("runs") or []:
            lo, hi = run["phys"], run["phys"] + run["pages"] * PAGE
            if in_aperture(run) and not run["bounced"]:
                out["remapped"].append(box(lo, hi) + (lane,))
                out["aperheld" if r.get("strategy") == "coherent" else "aperslot"].append(
                    box(run["dma"], run["dma"] + run["pages"] * PAGE) + (lane,))
            elif run["reserved"]:
                out["alias"].append(box(lo, hi) + (lane,))
                out["target"].append(box(run["dma"], run["dma"] + run["pages"] * PAGE) + (lane,))
            elif run["in_pool"]:
                out["pool"].append(box(lo, hi) + (lane,))
            elif run["dma"] is None:
                out["unmapped"].append(box(lo, hi) + (lane,))
            elif run["bounced"]:
                out["bounced"].append(box(lo, hi) + (lane,))
                out["slot"].append(box(run["dma"], run["dma"] + run["pages"] * PAGE) + (lane,))
            elif reach and run["dma"] + run["pages"] * PAGE > reach:
                out["unreachable"].append(box(lo, hi) + (lane,))
            else:
                out["direct"].append(box(lo, hi) + (lane,))
    return out


def lane_note(r):
    if not r["guest_ok"]:
        return "guest failed"
    if r.get("runs") is None:
        return "no address runs"
    bounced = sum(1 for x in r["runs"] if x["bounced"])
    n = len(r["runs"])
    return "%d run%s, %d pages%s%s" % (
        n, "" if n == 1 else "s", sum(x["pages"] for x in r["runs"]),
        ", %d bounced" % bounced if bounced else "",
        ", %d dropped" % r["runs_dropped"] if r.get("runs_dropped") else "")


def boot_run(name, r):
    """The boot a repeated row's lane comes from (its median boot), or None
    when its boot ran once."""
    k = r.get("median_boot")
    if (r.get("repeats") or 1) < 2 or not k:
        return None
    return "boot %s (median of %d)" % (name if k == 1 else "%s~%d" % (name, k), r["repeats"])


def reach_text(dev):
    if not dev:
        return "device reach unknown"
    d, g = dev.get("dma_bits"), dev.get("ring_bits")
    return "device reaches %s (data), %s (ring)" % (
        "below %s" % human(1 << d) if d and d < 64 else "everything",
        "below %s" % human(1 << g) if g and g < 64 else "everything")


def gp_str(s):
    return "'%s'" % str(s).replace("'", "''")


def gp_lines(*lines):
    """A double-quoted gnuplot string of several lines."""
    return '"%s"' % "\\n".join(str(x).replace("\\", "\\\\").replace('"', '\\"') for x in lines)


def ram_holes(ram, top):
    """[(lo, hi)] without RAM, from the boot's "System RAM" ranges (none
    when the results have no /proc/iomem); holes under 1 MiB are left out."""
    if not ram:
        return []
    out, at = [], 0
    for lo, hi in sorted((r["start"], r["end"] + 1) for r in ram):
        if lo - at >= 1 << 20:
            out.append((at, lo))
        at = max(at, hi)
    if top - at >= 1 << 20:
        out.append((at, top))
    return out


def tics(top):
    """Tic marks: every 4 MiB in the magnified part, then every GiB (2 GiB
    above 8 GiB)."""
    out = [(human(m << 20) if m else "0", m << 20) for m in (0, 4, 8)]
    step = 1 << 30 if top <= 8 << 30 else 2 << 30
    out += [("16M", ZOOM_END)] + [(human(g), g) for g in range(step, top + 1, step)]
    return ", ".join("'%s' %d" % t for t in out)


def draw_boot(name, boot, recs, report):
    """Write memmap-NAME.png (or .svg) for one boot: (file, None) or (None, why)."""
    spans = zone_spans(boot.get("zones"))
    if not spans:
        return None, "no zone layout (guest failed)"
    if not any(r.get("runs") is not None for r in recs):
        return None, "no address runs in the results"
    top = max(e for _, _, e in spans)
    axis = Axis(top)
    dev = boot.get("device") or {}
    reach_bytes = 1 << dev["dma_bits"] if (dev.get("dma_bits") or 64) < 64 else None
    ap = boot.get("gart_aperture") or {}
    aperture = {"start": ap["start"], "end": ap["end"]} if "start" in ap else None
    stem = "memmap-" + name
    plots = write_series(os.path.join(report, stem + ".dat"), series(recs, axis, reach_bytes, aperture), True)
    # The swiotlb pool and the GART aperture: (lo, hi, colour, label)
    bands = []
    pool = boot.get("swiotlb_pool")
    if pool:
        bands.append((pool["start"], pool["end"], POOL_COLOUR, "#54278f",
                      "swiotlb pool (%d MiB)" % ((pool["end"] - pool["start"]) >> 20)))
    if aperture:
        bands.append((aperture["start"], aperture["end"], APERTURE_COLOUR, "#8c510a",
                      "GART aperture (%d MiB)" % ((aperture["end"] - aperture["start"]) >> 20)))
    # An inset for a band too narrow to see on the whole axis
    narrow = [b for b in bands if axis.fwd(b[1]) - axis.fwd(b[0]) < INSET_SHARE * axis.fwd(top)]
    inset = None
    if narrow:
        lo, hi = min(b[0] for b in narrow), max(b[1] for b in narrow)
        pad = max((hi - lo) // 4, 1 << 20)
        inset = Inset(max(0, lo - pad), min(top, hi + pad))
        inset_plots = write_series(os.path.join(report, stem + "-inset.dat"),
                                   series(recs, inset, reach_bytes, aperture), False)
    n = len(recs)
    # The key in two columns under the axis label, in a band of its own
    # (KEY_ROW px a row), so that it neither squeezes the lanes nor
    # overlaps the label: the graph's bottom edge and the key's top are
    # placed in pixels, not left to gnuplot's estimate of the text
    key_rows = (len(plots) + 1) // 2
    main_h = 210 + 70 * n + KEY_ROW * key_rows
    inset_h = 110 + 45 * n if inset else 0
    term, out = terminal(1200, main_h + inset_h, stem)
    for old in (stem + ".png", stem + ".svg"):
        if os.path.exists(os.path.join(report, old)):
            os.remove(os.path.join(report, old))
    args = " ".join(x for x in (boot.get("kernel_args"), boot.get("device_props"), boot.get("qemu_args")) if x)
    if boot.get("numa"):
        args += "%snodes %s, device on node %s" % ("; " if args else "", boot["numa"], boot.get("device_node"))
    if boot.get("swap"):
        args += "%s%d MiB swap" % ("; " if args else "", boot["swap"])
    # the boot's settings wrapped to the figure's width
    title = (["boot %s: where each scenario's buffers and ring were" % name]
             + textwrap.wrap("-M %s -m %s%s" % (boot.get("machine"), boot.get("mem"), "; " + args if args else ""),
                             110)
             + [reach_text(dev)])
    if any(boot_run(name, r) for r in recs):
        title.append("ran %d times: zones, RAM and pool from boot %s, each lane from its row's median boot" % (
            max(r.get("repeats") or 1 for r in recs), name))
    gp = [
        "set terminal %s" % term,
        "set output %s" % gp_str(os.path.join(report, out)),
        "set multiplot",
        "set origin 0,%r" % (inset_h / float(main_h + inset_h)),
        "set size 1,%r" % (main_h / float(main_h + inset_h)),
        # a line above the zone names over the graph
        "set title %s offset 0,1" % gp_lines(*title),
        axis.gnuplot(),
        "set xrange [0:%d]" % top,
        "set xtics (%s) nomirror font ',9'" % tics(top),
        "set xlabel 'physical address (0-16 MiB magnified %.0fx, the rest to scale)'" % axis.k,
        "set yrange [-0.65:%g]" % (n - 0.3),
        "set ytics (%s) nomirror" % ", ".join(
            "%s %d" % (gp_lines(r["name"], "%s %s %sx%d" % (r["strategy"], r["op"], human(r["size"]), r["count"]),
                                lane_note(r), *[x for x in [boot_run(name, r)] if x]), n - 1 - i)
            for i, r in enumerate(recs)),
        "set lmargin 34",
        "set tmargin %d" % (len(title) + 3),
        "set bmargin at screen %r" % ((inset_h + KEY_ROW * key_rows + AXIS_BELOW + 14) / float(main_h + inset_h)),
        "set key at screen 0.5, screen %r center top vertical maxrows %d width -4 font ',9'" % (
            (inset_h + KEY_ROW * key_rows + 10) / float(main_h + inset_h), max(key_rows, 1)),
        "set style fill solid 0.9 noborder",
    ]
    k = 0
    for z, lo, hi in spans:
        k += 1
        gp.append("set object %d rect from %d, graph 0 to %d, graph 1 fc rgb '%s' fs solid 0.5 noborder behind" % (
            k, lo, hi, ZONE_COLOURS[z]))
        # over the plot's top border, a character's height above it at any
        # figure height, so that the border clips no letter
        gp.append("set label %s at %d, graph 1 center offset 0,0.8 font ',9'" % (
            gp_str("ZONE_" + z.upper()), axis.inv((axis.fwd(lo) + axis.fwd(hi)) / 2)))
    # Where there is no RAM (from /proc/iomem): the PCI hole below 4 GiB
    for lo, hi in ram_holes(boot.get("ram"), top):
        k += 1
        gp.append("set object %d rect from %d, graph 0 to %d, graph 1 fc rgb '#bbbbbb' fs pattern 4 noborder behind" % (
            k, lo, hi))
    # The change of scale
    gp.append("set arrow from %d, graph 0 to %d, graph 1 nohead lw 1 dt 3 lc rgb '#555555' back" % (
        ZOOM_END, ZOOM_END))
    for blo, bhi, colour, text, label in bands:
        k += 1
        lo, hi = axis.box(blo, bhi)
        gp.append("set object %d rect from %d, graph 0 to %d, graph 1 fc rgb '%s' fs solid 0.6 noborder behind" % (
            k, lo, hi, colour))
        gp.append("set label %s at %d, graph 0.03 left rotate by 90 offset -0.4,0 font ',8' tc rgb '%s' front" % (
            # a narrow band's label says where to look, short enough for the plot's height
            gp_str(label.split()[0] + " (inset)" if inset and (blo, bhi) in [(b[0], b[1]) for b in narrow]
                   else label),
            blo, text))
    reach = {dev.get("dma_bits"), dev.get("ring_bits")}
    for bits in (31, 32):
        heavy = bits in reach
        colour = "#b30000" if heavy else "#333333"
        gp.append("set arrow from %d, graph 0 to %d, graph 1 nohead lw %g dt %s lc rgb '%s' back" % (
            1 << bits, 1 << bits, 2.5 if heavy else 1.2, "1" if heavy else "2", colour))
        gp.append("set label %s at %d, graph 0.94 right offset -0.3,0 font ',8' tc rgb '%s' front" % (
            gp_str("%d GiB%s" % (1 << (bits - 30), ": device reach" if heavy else "")), 1 << bits, colour))
    # NUMA nodes: where each begins, and its name over its range
    node_ranges = boot.get("node_ranges") or {}
    if len(node_ranges) > 1:
        first = min(rs[0][0] for rs in node_ranges.values())
        for node, rs in sorted(node_ranges.items()):
            lo, hi = rs[0][0] * PAGE, min(rs[-1][1] * PAGE, top)
            if rs[0][0] > first:
                gp.append("set arrow from %d, graph 0 to %d, graph 1 nohead lw 2.5 dt 4 lc rgb '%s' back" % (
                    lo, lo, NODE_COLOUR))
            gp.append("set label %s at %d, graph 0.5 center font ',10' tc rgb '%s' front" % (
                gp_str("node %s: %s" % (node, ", ".join(
                    z for z in ("DMA", "DMA32", "Normal")
                    if (((boot.get("nodes") or {}).get(node) or {}).get(z) or {}).get("present")))),
                axis.inv((axis.fwd(max(lo, ZOOM_END)) + axis.fwd(hi)) / 2), NODE_COLOUR))
    gp.append("plot " + ", ".join(plots) if plots else "plot NaN notitle")
    if inset:
        gp += inset_commands(name, inset, narrow, recs, inset_plots, main_h, inset_h)
    gp.append("unset multiplot")
    res = subprocess.run(["gnuplot"], input="\n".join(gp) + "\n", capture_output=True, text=True)
    if res.returncode != 0 or not os.path.exists(os.path.join(report, out)):
        lines = res.stderr.strip().splitlines()
        return None, "gnuplot failed: " + lines[-1] if lines else "gnuplot failed"
    return out, None


def write_series(dat, data, titled):
    """Write the runs of each series to DAT, one block per series; the
    gnuplot plot clauses that draw them (with legend titles if TITLED)."""
    plots, block = [], 0
    with open(dat, "w") as f:
        f.write("# x_lo x_hi lane, one block per series: %s\n" % ", ".join(
            k for k, *_ in STYLES if data[k]))
        for key, title, colour, off, half in STYLES:
            if not data[key]:
                continue
            for lo, hi, lane in data[key]:
                f.write("%d %d %d\n" % (lo, hi, lane))
            f.write("\n\n")
            plots.append("%s index %d using (($1+$2)/2):($3+%g):1:2:($3+%g):($3+%g) with boxxyerror "
                         "fs solid 0.9 noborder lc rgb '%s' %s" % (
                             gp_str(dat), block, off, off - half, off + half, colour,
                             "title %s" % gp_str(title) if titled else "notitle"))
            block += 1
    return plots


def inset_commands(name, inset, narrow, recs, plots, main_h, inset_h):
    """gnuplot commands for the inset under the main figure: [inset.lo,
    inset.hi) to scale, the narrow bands in it, the same lanes."""
    n = len(recs)
    span = inset.hi - inset.lo
    step = max(1 << 20, (span // 6) >> 20 << 20)
    tics = ", ".join("'%s' %d" % ("%dM" % (x >> 20), x)
                     for x in range((inset.lo + step - 1) // step * step, inset.hi + 1, step))
    gp = ["unset object", "unset label", "unset arrow", "unset nonlinear x", "set origin 0,0",
          "set size 1,%r" % (inset_h / float(main_h + inset_h)),
          "set title %s offset 0,0" % gp_str("boot %s, inset: %s, to scale" % (name, ", ".join(b[4] for b in narrow))),
          "set xrange [%d:%d]" % (inset.lo, inset.hi),
          "set xtics (%s) nomirror font ',9'" % tics,
          "set xlabel 'physical address, MiB'", "set tmargin 2", "set bmargin 3", "unset key",
          "set style textbox opaque noborder",
          "set ytics (%s) nomirror font ',8'" % ", ".join(
              "%s %d" % (gp_str(r["name"]), n - 1 - i) for i, r in enumerate(recs))]
    for k, (lo, hi, colour, text, label) in enumerate(narrow, 1):
        gp.append("set object %d rect from %d, graph 0 to %d, graph 1 fc rgb '%s' fs solid 0.6 noborder behind" % (
            k, lo, hi, colour))
        # on an opaque box: the lanes' runs pass under it
        gp.append("set label %d %s at %d, graph 0.9 left offset 0.4,0 font ',8' tc rgb '%s' front boxed" % (
            k, gp_str(label), lo, text))
    gp.append("plot " + ", ".join(plots) if plots else "plot NaN notitle")
    return gp


def draw(results, report):
    """One figure per boot: {boot: (file, None) or (None, why)}."""
    for f in os.listdir(report):
        if f.startswith("memmap-") and f.endswith((".png", ".svg", ".dat")):
            os.remove(os.path.join(report, f))
    out = {}
    for name, boot in results["boots"].items():
        recs = [r for r in results["scenarios"] if r["boot"] == name]
        if not shutil.which("gnuplot"):
            out[name] = (None, "gnuplot not found")
        else:
            out[name] = draw_boot(name, boot, recs, report)
    return out
