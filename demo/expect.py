"""What each row must show, as code: the check of every scenario in
table.py (each ex_* function: f(record, boot_info) -> (as_expected, what
it showed), failing on a row where its claim is false) and the helpers
the checks, the definitions and the claims share.

table.py says which row runs which check and imports every public name
here, so table.ex_direct and expect.ex_direct are the same function.
tests/host/checks.py finds the checks by name in this module.
"""

from . import nodes

GIB4 = 1 << 32


def fmt(v):
    return "n/a" if v is None else str(v)


def yes(ok):
    return "ok" if ok else "failed"


def zone(info, name):
    return ((info or {}).get("zones") or {}).get(name) or {}


def bounced(rec):
    """bounces: the kernel's counter when it exists, else the driver's"""
    return rec["swiotlb_bounced"] if rec["swiotlb_bounced"] is not None else rec["driver_bounced"]


# Expectations: check(rec, info) -> (as_expected, what it showed) ---------------

def ex_direct(rec, info):
    ok = rec["ok"] and bounced(rec) == 0 and rec["driver_bounced"] == 0
    return ok, "%s, %s bounced, %s ZONE_DMA pages" % (yes(rec["ok"]), bounced(rec), rec["zone_dma_pages_used"])


def ex_coherent_today(rec, info):
    ok, txt = ex_direct(rec, info)
    return ok and rec["zone_dma_pages_used"] == 0, txt


def ex_streaming(rec, info):
    above = rec["mappings_above_4g"]
    ok = rec["ok"] and (above or 0) > 0 and bounced(rec) == above and rec["driver_bounced"] == above
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
    """dma32=off, ordinary pages: something landed above 4 GiB and exactly
    the mappings above the device's reach bounced. How many pages land
    above 4 GiB depends on the shuffled free lists (a new order every
    boot): a boot that put every page below 4 GiB showed nothing and is
    skipped (None, with the reason); the row needs at least one boot that
    showed it (judge.combine). Fails if a mapping below 4 GiB bounced, one
    above did not, a count is missing, or ZONE_DMA32 is not empty."""
    above, pages_above = rec["mappings_above_4g"], rec["pages_above_4g"]
    txt = "%s bounced of %s mappings, %s of them above 4 GiB" % (fmt(bounced(rec)), rec["mappings"], fmt(above))
    if None in (above, pages_above, bounced(rec), rec["driver_bounced"]):
        return False, txt + "; a count is missing"
    if rec["ok"] and pages_above == 0 and bounced(rec) == 0:
        return None, txt + ("; skipped: this boot's shuffled free lists put every page below 4 GiB, nothing to"
                            " show (page_alloc.shuffle: %s)" % fmt((info or {}).get("page_alloc_shuffle")))
    ok = (rec["ok"] and above > 0 and bounced(rec) == above and rec["driver_bounced"] == above
          and zone(info, "DMA32").get("present") == 0)
    return ok, txt


def ex_nodma32_dma32(rec, info):
    """dma32=off: GFP_DMA32 pages come from ZONE_DMA. Fails on a page
    elsewhere, a bounce, a failure, or no pages (a missing count)."""
    ok = (rec["ok"] and bounced(rec) == 0 and bool(rec["pages"])
          and rec["zone_dma_pages_used"] == rec["pages"])
    return ok, "%s of %s pages from ZONE_DMA, %s bounced" % (
        rec["zone_dma_pages_used"], rec["pages"], fmt(bounced(rec)))


def ex_before_fresh(rec, info):
    """2.6.14's coherent allocator on a freshly booted machine: an ordinary
    page if the device reaches it, and a fresh buddy allocator hands out
    low pages first, so all 64 MiB come from below 4 GiB without ZONE_DMA
    or the pool. Fails on ZONE_DMA pages, pool bytes, pages above 4 GiB,
    a failure, or a ZONE_DMA32 that is not empty."""
    ok = (rec["ok"] and rec["zone_dma_pages_used"] == 0 and rec.get("coherent_swiotlb_bytes") == 0
          and rec["pages_above_4g"] == 0 and zone(info, "DMA32").get("present") == 0)
    return ok, "%s, %s ZONE_DMA pages, %s coherent bytes in the pool, %s of %s pages above 4 GiB" % (
        yes(rec["ok"]), rec["zone_dma_pages_used"], fmt(rec.get("coherent_swiotlb_bytes")),
        rec["pages_above_4g"], rec["pages"])


def ex_iommu(rec, info):
    groups = (info or {}).get("iommu_groups") or 0
    ok = rec["ok"] and bounced(rec) == 0 and (rec["pages_above_4g"] or 0) > 0 and groups > 0
    return ok, "%s IOMMU groups, %s pages above 4 GiB, %s bounced" % (
        groups, rec["pages_above_4g"], fmt(bounced(rec)))


def ex_bits31(rec, info):
    fb = rec["zone_dma_fallbacks"]
    used = rec["zone_dma_pages_used"] or 0
    ok = (rec["ok"] or rec["errno"] == "ENOMEM") and bounced(rec) == 0 and ((fb or 0) > 0 or used > 0)
    txt = ("%s coherent allocation(s) landed above 2 GiB, failed dma_coherent_ok and fell back to ZONE_DMA"
           " (%s ZONE_DMA pages)" % (fmt(fb), used))
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
    ok = rec["ok"] and bounced(rec) == 0 and fb == 0 and rec["zone_dma_pages_used"] == 0
    return ok, "%s fallbacks to ZONE_DMA, %s ZONE_DMA pages, %s DMA32 pages" % (
        fmt(fb), rec["zone_dma_pages_used"], (rec.get("zone_pages") or {}).get("DMA32"))


def zone_of(info, phys):
    """The zone (by the boot's /proc/zoneinfo spans) a physical address lies in, or None."""
    pfn = phys >> 12
    for z in ("DMA", "DMA32", "Normal"):
        d = zone(info, z)
        if d.get("spanned") and d.get("start_pfn") is not None and d["start_pfn"] <= pfn < d["start_pfn"] + d["spanned"]:
            return z
    return None


def ring_where(rec, info):
    """(physical address, zone) of the device's descriptor ring, from the
    driver's address runs (the first device's ring); (None, None) without."""
    rings = [x for x in rec.get("device_runs") or [] if x["kind"] == "ring"]
    if not rings:
        return None, None
    return rings[0]["phys"], zone_of(info, rings[0]["phys"])


def rings_where(rec, info):
    """[(physical address, zone, in the swiotlb pool)] of every bound
    device's descriptor ring, from the driver's address runs."""
    return [(x["phys"], zone_of(info, x["phys"]), bool(x["in_pool"]))
            for x in rec.get("device_runs") or [] if x["kind"] == "ring"]


def rings_text(rings):
    """Where the rings were, counted: 'N in ZONE_X, M in the swiotlb pool'."""
    where = {}
    for _, z, pool in rings:
        k = "the swiotlb pool" if pool else "ZONE_%s" % (z or "?")
        where[k] = where.get(k, 0) + 1
    return ", ".join("%d in %s" % (n, k) for k, n in sorted(where.items())) or "no ring runs"


def ex_ring32(rec, info):
    """With the zone, the 32-bit rings are coherent memory from ZONE_DMA32:
    above ZONE_DMA, below 4 GiB, on every device of the aged machine; the
    64-bit data pages above 4 GiB go straight to the device. Fails if a
    ring lands in ZONE_DMA, the pool or above 4 GiB, if no data page lies
    above 4 GiB (nothing shown), or a bounce."""
    rings = rings_where(rec, info)
    ok = (rec["ok"] and bounced(rec) == 0 and (rec["pages_above_4g"] or 0) > 0 and bool(rings)
          and all(p < GIB4 and z == "DMA32" and not pool for p, z, pool in rings))
    return ok, "rings: %s; %s data pages above 4 GiB, %s bounced" % (
        rings_text(rings), rec["pages_above_4g"], fmt(bounced(rec)))


def ex_ring_before(rec, info):
    """2.6.14's coherent allocator without the zone, on the aged machine
    with eight devices, each loading its 256 KiB ring, then its control
    buffers: the few ordinary pages left below 4 GiB go to the first
    comers, and the rings after them come from ZONE_DMA or, once that is
    short, the swiotlb pool. Expected: at least half the rings there, none
    above 4 GiB, ZONE_DMA32 empty, data pages above 4 GiB and no bounce.
    Fails if fewer rings are in ZONE_DMA or the pool (the machine was not
    aged), a ring lies above 4 GiB (the device could not reach it), or a
    ZONE_DMA32 is there, nothing above 4 GiB was shown or data bounced."""
    rings = rings_where(rec, info)
    scarce = sum(1 for _, z, pool in rings if z == "DMA" or pool)
    ok = (rec["ok"] and bounced(rec) == 0 and (rec["pages_above_4g"] or 0) > 0 and bool(rings)
          and 2 * scarce >= len(rings) and all(p < GIB4 for p, _, _ in rings)
          and zone(info, "DMA32").get("present") == 0)
    return ok, "rings: %s; %s data pages above 4 GiB, %s bounced" % (
        rings_text(rings), rec["pages_above_4g"], fmt(bounced(rec)))


def swiotlb_pool(info):
    return (info or {}).get("swiotlb_pool") or {}


def swiotlb_pool_mib(info):
    """The boot's default swiotlb pool in MiB, from its boot log (None
    when the log did not say)."""
    pool = swiotlb_pool(info)
    return (pool["end"] - pool["start"]) / 1048576.0 if pool else None


def refused_by(rec):
    """Who refused a request's streaming mappings: "swiotlb" when the pool
    itself said no (io_tlb_full, _too_big or _align_fail rose), "driver"
    when the driver's own pre-check refused (the pool lies beyond the
    device's mask, so no bounce slot could ever be reached; swiotlb is
    never asked), "gart" when the GART's aperture was full (aperture_full
    rose; there is no swiotlb on a GART boot), None when nothing was refused or the counters are missing."""
    if not rec.get("map_refused"):
        return None
    if gart(rec):
        return "gart" if rec.get("gart_full") else None
    pool = [rec.get(k) for k in ("swiotlb_full", "swiotlb_too_big", "swiotlb_align_fail")]
    if None in pool:
        return None
    return "swiotlb" if sum(pool) else "driver"


def pool_beyond_reach(rec, info, bits, device):
    """A BITS-bit device's ordinary pages under today's swiotlb placement:
    the pool lies beyond the device's reach, so no mapping it cannot reach
    can bounce. Expected: the pool ends above 2^BITS, the request fails
    with ENOMEM, nothing bounced, at least one mapping refused."""
    pool = swiotlb_pool(info)
    if not pool:
        return False, "no swiotlb pool address in the boot log"
    reach = 1 << bits
    ok = (pool["end"] > reach and not rec["ok"] and rec["errno"] == "ENOMEM" and bounced(rec) == 0
          and rec["driver_bounced"] == 0 and (rec["map_refused"] or 0) > 0)
    by = refused_by(rec)
    return ok, ("swiotlb pool at %#x-%#x (%s the %s's %s MiB reach): %s, %s bounced, %s mapping(s) "
                "refused%s" % (pool["start"], pool["end"], "above" if pool["end"] > reach else "within", device,
                               reach >> 20, rec["errno"] or "ok", fmt(bounced(rec)),
                               fmt(rec["map_refused"]),
                               {"driver": " by the driver's pre-check (the pool is beyond the mask: swiotlb"
                                          " was never asked, io_tlb_full 0)",
                                "swiotlb": " by swiotlb"}.get(by, "")))


def ex_bits31_swiotlb(rec, info):
    """31-bit device, ordinary pages, today's swiotlb placement: the kernel
    puts the pool at the top of the RAM below 4 GiB, above the device's
    2 GiB reach (pool_beyond_reach). Fails if the pool lies within reach
    (not today's placement), the request works, or something bounced."""
    return pool_beyond_reach(rec, info, 31, "31-bit device")


def ex_bits24_streaming(rec, info):
    """24-bit device (the ISA floppy and sound cards ZONE_DMA was kept
    for), ordinary pages: every pool lies above 16 MiB, so nothing it
    cannot reach can bounce (pool_beyond_reach). Fails if the pool lies
    within 16 MiB, the request works, or something bounced."""
    return pool_beyond_reach(rec, info, 24, "24-bit device")


def ex_bits24_coherent(rec, info):
    """24-bit device, coherent memory and ring: the only memory it reaches
    is ZONE_DMA, the 16 MiB zone Kleen's patch kept for such devices.
    Expected: the request works and verifies, every data page and the ring
    in ZONE_DMA, nothing bounced. Fails if a page lies outside ZONE_DMA
    (the mask was not honoured), the request fails, or something bounced."""
    zp, pages = rec["zone_pages"] or {}, rec["pages"] or 0
    phys, z = ring_where(rec, info)
    ok = (rec["ok"] and rec["buffers_verified"] == rec["count"] and pages > 0 and zp.get("DMA") == pages
          and bounced(rec) == 0 and z == "DMA")
    return ok, ("%s of %s buffers verified; %s of %s pages in ZONE_DMA (%s managed pages in all), ring at %s in"
                " ZONE_%s, %s bounced" % (rec["buffers_verified"], rec["count"], zp.get("DMA"), pages,
                                          fmt(rec["zone_dma_managed"]), hex(phys) if phys is not None else "?",
                                          z or "?", fmt(bounced(rec))))


def ex_bits31_swiotlb_low(rec, info):
    """31-bit device, ordinary pages, the pool placed low as 2.6.14 placed
    it: the mappings the device cannot reach bounce for real. Expected: the
    pool ends below 2 GiB, the request works and verifies, at least every
    mapping above 4 GiB bounced (those between 2 and 3 GiB bounce too).
    Fails if the pool lies out of reach (the option did nothing), the
    request fails, or fewer mappings bounced than lie above 4 GiB."""
    pool = swiotlb_pool(info)
    if not pool:
        return False, "no swiotlb pool address in the boot log"
    reach = 1 << 31
    above = rec["mappings_above_4g"]
    if None in (above, bounced(rec), rec["driver_bounced"]):
        return False, "a count is missing: %s bounced, driver bounced %s, %s mappings above 4 GiB" % (
            fmt(bounced(rec)), fmt(rec["driver_bounced"]), fmt(above))
    ok = (pool["end"] <= reach and rec["ok"] and rec["buffers_verified"] == rec["count"] and above > 0
          and bounced(rec) >= above and rec["driver_bounced"] >= above)
    return ok, ("swiotlb pool at %#x-%#x (%s the 31-bit device's 2 GiB reach): %s, %s of %s buffers verified,"
                " %s bounced, %s mappings above 4 GiB" % (
                    pool["start"], pool["end"], "within" if pool["end"] <= reach else "beyond",
                    "ok" if rec["ok"] else rec["errno"], rec["buffers_verified"], rec["count"],
                    fmt(bounced(rec)), above))


def zone_end(info, name):
    """The physical address where a zone's span ends, or None."""
    d = zone(info, name)
    return (d["start_pfn"] + d["spanned"]) << 12 if d.get("spanned") and d.get("start_pfn") is not None else None


def ex_dma32_2g_direct(rec, info):
    """Ordinary 32-bit device under dma32=2G: GFP_DMA32 pages now come from
    16 MiB..2 GiB; the 1 GiB between 2 and 3 GiB is ZONE_NORMAL. Fails if
    ZONE_DMA32 reaches past 2 GiB (the option did nothing), a page came
    from elsewhere, something bounced, or there are no pages."""
    zp = rec.get("zone_pages") or {}
    end = zone_end(info, "DMA32")
    ok = (rec["ok"] and bounced(rec) == 0 and bool(rec["pages"]) and zp.get("DMA32") == rec["pages"]
          and end is not None and end <= 1 << 31)
    return ok, "%s of %s pages from ZONE_DMA32 (16 MiB-2 GiB), %s bounced; ZONE_DMA32 manages %s pages" % (
        zp.get("DMA32"), rec["pages"], fmt(bounced(rec)), zone(info, "DMA32").get("managed"))


def ex_bounce_guarantee(rec, info):
    above = rec["mappings_above_4g"]
    ok = rec["ok"] and above is not None and bounced(rec) == above and rec["driver_bounced"] == above
    return ok, "%s bounced of %s mappings, %s of them above 4 GiB" % (fmt(bounced(rec)), rec["mappings"], above)


# The cost ex_many_before requires of the 2.6.14 model on the aged
# eight-device machine, as shares of what there is: the bound devices'
# coherent memory (rings and control buffers) holds at least half of
# ZONE_DMA's managed pages and at least a quarter of the swiotlb pool;
# else the streaming request must have been refused.
MANY_COST_ZONE_DMA_SHARE = 0.5
MANY_COST_POOL_SHARE = 0.25


def bound_holdings(rec, info):
    """What the bound devices' coherent memory (their rings and control
    buffers, from the driver's address runs) held while the request ran:
    (ZONE_DMA pages, swiotlb-pool bytes); (None, None) without runs. Not
    the request's own buffers: those are coherent_held and
    coherent_swiotlb_bytes of a coherent request."""
    runs = rec.get("device_runs")
    if runs is None:
        return None, None
    dma = sum(x["pages"] for x in runs if zone_of(info, x["phys"]) == "DMA")
    return dma, sum(x["pages"] << 12 for x in runs if x["in_pool"])


def refusals(rec):
    """[errno of each device whose request failed] and whether the DMA API refused a mapping."""
    failed = [p["errno"] for p in rec["per_device"] if not p["ok"]]
    return failed, bool(rec.get("map_refused"))


def many_cost(rec, info):
    """(cost shown, words): the 2.6.14 model's cost on the aged eight-device
    machine, by MANY_COST_*: the bound devices hold ZONE_DMA and the pool
    above the thresholds, or the request was refused. A missing figure is
    no cost."""
    dma, pool_bytes = bound_holdings(rec, info)
    managed, pool = zone(info, "DMA").get("managed"), swiotlb_pool(info)
    size = (pool["end"] - pool["start"]) if pool else None
    failed, refused = refusals(rec)
    if None in (dma, managed, size):
        return bool(failed or refused), "bound holdings unknown (no address runs, zone or pool size)"
    held = dma >= MANY_COST_ZONE_DMA_SHARE * managed and pool_bytes >= MANY_COST_POOL_SHARE * size
    return held or bool(failed or refused), (
        "the bound devices' rings and control buffers held %d of ZONE_DMA's %d pages and %.2f MiB of the %d MiB"
        " swiotlb pool (the cost: at least %d%% and %d%%, or a refusal)" % (
            dma, managed, pool_bytes / 1048576.0, size >> 20, MANY_COST_ZONE_DMA_SHARE * 100,
            MANY_COST_POOL_SHARE * 100))


def ex_many_before(rec, info):
    """2.6.14's allocator, no ZONE_DMA32, low memory taken: the control
    buffers that no ordinary page below 4 GiB could take sit in ZONE_DMA
    and then in the swiotlb pool. Expected: that cost (many_cost: ZONE_DMA
    and pool holdings above MANY_COST_*, or a refusal), and every device
    that failed failed for room (ENOMEM). Fails if the bound devices hold
    less (the model or the aging is broken, or the zone is there) and
    nothing was refused, or a device failed for another reason."""
    cost, cost_txt = many_cost(rec, info)
    failed, _ = refusals(rec)
    ok = cost and all(e == "ENOMEM" for e in failed)
    txt = "%d of %s devices bound; %s; streaming at once: %s bounced, %s mappings refused, %d of %d devices failed" \
        " (%s)" % (len(rec["per_device"]), rec["devices"], cost_txt, fmt(bounced(rec)),
                   fmt(rec["map_refused"]), len(failed), len(rec["per_device"]),
                   ", ".join(sorted({e or "-" for e in failed})) or "none")
    return ok, txt


def zone_dma_left(info):
    """ZONE_DMA's free pages once the machine was aged and the devices
    bound (the zoneinfo read after the prepare step), or None."""
    return (((info or {}).get("zones_pressed") or {}).get("DMA") or {}).get("free")


def ex_many_before_dma32(rec, info):
    """The same machine, streaming-dma32: without ZONE_DMA32, GFP_DMA32
    means ZONE_DMA, which the bound devices' control buffers used up.
    Expected: the cost of ex_many_before, ZONE_DMA left with fewer free
    pages than one buffer needs, and devices failing, all with ENOMEM.
    Fails if ZONE_DMA had room for a buffer (not used up), no device
    failed, or one failed otherwise."""
    ok, txt = ex_many_before(rec, info)
    left, per_buffer = zone_dma_left(info), rec["size"] >> 12
    failed, _ = refusals(rec)
    used_up = left is not None and left < per_buffer
    return ok and used_up and bool(failed), "%s; ZONE_DMA had %s free pages left, a %d KiB buffer needs %d" % (
        txt, fmt(left), rec["size"] >> 10, per_buffer)


def ex_many_nozone(rec, info):
    """Control: today's allocator without ZONE_DMA32 (dma32=off alone) on
    the aged eight-device machine. Today's dma-direct asks for GFP_DMA32,
    which without the zone is the 16 MiB ZONE_DMA, and never takes
    coherent memory from the swiotlb pool: the control buffers fill
    ZONE_DMA and the devices that find no room there do not bind.
    Expected: no bound device's coherent memory in the pool, at least
    MANY_COST_ZONE_DMA_SHARE of ZONE_DMA held, fewer devices bound than
    the boot has, and the bound ones' streaming requests worked. Fails on
    pool holdings (the 2.6.14 model), ZONE_DMA left mostly free or every
    device bound (a ZONE_DMA32 there), or a failed request."""
    dma, pool_bytes = bound_holdings(rec, info)
    managed = zone(info, "DMA").get("managed")
    per = rec["per_device"]
    ok = (None not in (dma, pool_bytes, managed) and pool_bytes == 0 and dma >= MANY_COST_ZONE_DMA_SHARE * managed
          and len(per) < rec["devices"] and bool(per) and all(p["ok"] for p in per))
    return ok, "%d of %s devices bound; their rings and control buffers held %s of ZONE_DMA's %s pages and %s" \
        " bytes of the swiotlb pool; %d of %d requests worked" % (
            len(per), rec["devices"], fmt(dma), fmt(managed), fmt(pool_bytes), sum(1 for p in per if p["ok"]),
            len(per))


def ex_model_pool_full(rec, info):
    """2.6.14's allocator, low memory taken, more coherent memory than the
    swiotlb pool has left. 2.6.14's swiotlb_alloc_coherent() fell back to
    swiotlb_map_single(), which on a full pool called swiotlb_full() with
    do_panic set, and for more than io_tlb_overflow (32 KiB) in the
    device's direction that was panic("PCI-DMA: Memory would be
    corrupted") (2.6.14's arch/ia64/lib/swiotlb.c). The model returns NULL instead
    and counts it. Expected: ENOMEM, coherent bytes in the pool, at least
    one refusal counted as a would-be panic. Fails if the request fits (no
    edge reached), nothing sat in the pool, or the count is missing or 0."""
    panics = rec.get("coherent_would_panic")
    ok = (not rec["ok"] and rec["errno"] == "ENOMEM" and (rec["coherent_swiotlb_bytes"] or 0) > 0
          and (panics or 0) >= 1)
    return ok, ("%s after %s buffers (%s of %d MiB), %s MiB of the device's coherent memory in the swiotlb"
                " pool; %s refusal(s) counted that 2.6.14 met with panic(\"PCI-DMA: Memory would be corrupted\"),"
                " at the first" % (rec["errno"] or "ok", fmt(rec["buffers"]), request_mib(rec),
                                   rec["size"] * rec["count"] >> 20, mib_of(rec["coherent_swiotlb_bytes"]),
                                   fmt(panics)))


def mib_of(n):
    """Bytes as MiB with one decimal, n/a for a missing figure."""
    return "n/a" if n is None else "%.1f" % (n / 1048576.0)


def request_mib(rec):
    """What a request's own buffers came to in MiB (buffers x size): not
    the device's ring or control buffers, which coherent_held counts too."""
    return "n/a" if rec["buffers"] is None else mib_of(rec["buffers"] * rec["size"])


def iommu(rec):
    return "intel-iommu" in (rec.get("qemu_args") or "")


def ex_many_after(rec, info):
    """The same devices with ZONE_DMA32 (or an IOMMU): nothing in the pool,
    every device works, nothing refused. Through dma-direct, streaming
    bounces exactly its mappings above 4 GiB and streaming-dma32 none;
    behind the IOMMU nothing bounces. Fails on any coherent byte in the
    pool, a failed device, a refused mapping or a bounce count off that."""
    per = rec["per_device"]
    if rec["strategy"] == "streaming" and not iommu(rec):
        bounce_ok = bounced(rec) == rec["driver_bounced"] == rec["mappings_above_4g"] and bounced(rec) > 0
    else:
        bounce_ok = bounced(rec) == 0
    ok = (rec["ok"] and len(per) == rec["devices"] and rec["coherent_swiotlb_bytes"] == 0
          and rec["map_refused"] == 0 and bounce_ok)
    return ok, "%d of %s devices worked; %s coherent bytes in the swiotlb pool, %s bounced, %s mappings refused" % (
        sum(1 for p in per if p["ok"]), rec["devices"], fmt(rec["coherent_swiotlb_bytes"]), fmt(bounced(rec)),
        fmt(rec["map_refused"]))


def gart(rec):
    """A row on a boot with the K8 GART (its aperture in MiB, else 0)."""
    return rec.get("gart") or 0


def gart_aperture(info):
    """The boot's aperture as the kernel took it (judge.parse_gart): start,
    end, iommu_mb, in_use, aperture_pages; {} without the GART."""
    return (info or {}).get("gart_aperture") or {}


def pages_remapped(rec, info):
    """Buffer pages above 4 GiB whose DMA address lies in the aperture
    (remapped by the GART, not copied); None without runs or aperture."""
    ap = gart_aperture(info)
    if "start" not in ap or rec.get("runs") is None:
        return None
    return sum(x["pages"] for x in rec["runs"] if x["phys"] is not None and x["phys"] >= GIB4
               and x["dma"] is not None and ap["start"] <= x["dma"] and x["dma"] + x["pages"] * 4096 <= ap["end"])


def _gart_common(rec, info):
    """What every GART row needs: the kernel's GART driver in use, its
    counters present, swiotlb gone (its counters null, not 0), nothing
    bounced by the driver's count. (ok, words)"""
    ap = gart_aperture(info)
    ok = (bool(ap.get("in_use")) and rec.get("gart_coherent") is not None and rec.get("gart_full") is not None
          and rec.get("swiotlb_bounced") is None and rec.get("driver_bounced") == 0)
    return ok, "%s MiB aperture (%s pages), swiotlb %s, driver bounced %s" % (
        fmt(gart(rec)), fmt(ap.get("aperture_pages")),
        "absent" if rec.get("swiotlb_bounced") is None else "present", fmt(rec.get("driver_bounced")))


def ex_gart_before(rec, info):
    """The 2.6.14 model on a K8 GART machine with low memory taken: every
    control buffer that is no ordinary page below 4 GiB is remapped
    through the aperture and holds its pages while the device is bound
    (2.6.14's pci-gart.c dma_alloc_coherent), so streaming from all eight
    at once finds the aperture short. Expected: the GART in use and
    swiotlb gone, aperture pages held by coherent memory (gart_coherent
    > 0, no more than the aperture has), at least one mapping refused for
    lack of aperture space (gart_full > 0), every device that failed
    failed with ENOMEM, nothing bounced. Fails if nothing is held (the
    model or the aging is broken), nothing was refused (the aperture was
    not short), a device failed otherwise, or swiotlb is there."""
    base, txt = _gart_common(rec, info)
    per = rec["per_device"]
    failed = [p for p in per if not p["ok"]]
    held, full = rec.get("gart_coherent") or 0, rec.get("gart_full") or 0
    pages = gart_aperture(info).get("aperture_pages")
    ok = (base and held > 0 and pages is not None and held <= pages and full > 0
          and all(p["errno"] == "ENOMEM" for p in failed))
    return ok, ("%s; %d of %s devices bound, their coherent memory held %s of %s aperture pages (%.1f MiB);"
                " streaming at once: %s mappings refused for lack of aperture space, %d of %d devices failed (%s)" % (
                    txt, len(per), rec["devices"], held, fmt(pages), held * 4096 / 1048576.0, fmt(rec.get("gart_full")),
                    len(failed), len(per), ", ".join(sorted({p["errno"] or "-" for p in failed})) or "none"))


def ex_gart_small(rec, info):
    """The same with a 32 MiB aperture: the eight devices' 48 MiB of
    control buffers cannot all be remapped, so some devices do not bind
    at all. Expected: the GART in use, fewer devices bound than the boot
    has, the bound ones' coherent memory holding aperture pages, the
    streaming refused for lack of space (gart_full > 0), failures ENOMEM.
    Fails if every device bound (the aperture was not 32 MiB, or the
    coherent memory did not go through it), nothing is held or refused."""
    base, txt = _gart_common(rec, info)
    ok, txt2 = ex_gart_before(rec, info)
    return ok and base and len(rec["per_device"]) < rec["devices"], txt2


def ex_gart_nozone(rec, info):
    """Control: today's allocator without ZONE_DMA32 on the GART machine.
    Today's gart_alloc_coherent() takes dma-direct's pages and remaps them
    only with iommu=force, so the control buffers come from ZONE_DMA
    (GFP_DMA32 without the zone) and hold no aperture page; devices that
    find no room there do not bind. Expected: the GART in use, no aperture
    page held by coherent memory, at least MANY_COST_ZONE_DMA_SHARE of
    ZONE_DMA held, fewer devices bound than the boot has, the bound ones'
    requests worked, nothing refused. Fails on aperture pages held (the
    2.6.14 model), every device bound or ZONE_DMA mostly free (a
    ZONE_DMA32 there), a refusal or a failed request."""
    base, txt = _gart_common(rec, info)
    dma, _ = bound_holdings(rec, info)
    managed = zone(info, "DMA").get("managed")
    per = rec["per_device"]
    ok = (base and rec.get("gart_coherent") == 0 and rec.get("gart_full") == 0 and None not in (dma, managed)
          and dma >= MANY_COST_ZONE_DMA_SHARE * managed and len(per) < rec["devices"] and bool(per)
          and all(p["ok"] for p in per))
    return ok, "%s; %d of %s devices bound, holding %s of ZONE_DMA's %s pages and %s aperture pages; %s mappings" \
        " refused, %d of %d requests worked" % (
            txt, len(per), rec["devices"], fmt(dma), fmt(managed), fmt(rec.get("gart_coherent")),
            fmt(rec.get("gart_full")), sum(1 for p in per if p["ok"]), len(per))


def ex_gart_after(rec, info):
    """The same eight devices and load on the GART machine with the zone:
    the control buffers come from ZONE_DMA32 and hold no aperture page;
    streaming pages above 4 GiB are remapped through the aperture, no
    copy. Expected: the GART in use and swiotlb gone, gart_coherent 0,
    gart_full 0, every device worked, pages above 4 GiB and each one's
    DMA address inside the aperture, 0 bounced. Fails on an aperture page
    held by coherent memory, a refusal, a failed device, a page above
    4 GiB handed over outside the aperture, or a bounce."""
    base, txt = _gart_common(rec, info)
    per = rec["per_device"]
    above, remapped = rec["pages_above_4g"] or 0, pages_remapped(rec, info)
    ok = (base and rec["ok"] and len(per) == rec["devices"] and rec.get("gart_coherent") == 0
          and rec.get("gart_full") == 0 and above > 0 and remapped == above)
    return ok, ("%s; %d of %s devices worked; coherent memory held %s aperture pages, %s mappings refused;"
                " %s of %s pages above 4 GiB remapped through the aperture" % (
                    txt, sum(1 for p in per if p["ok"]), rec["devices"], fmt(rec.get("gart_coherent")),
                    fmt(rec.get("gart_full")), fmt(remapped), above))


def blocks_at_least(info, zone_name, order):
    """Free blocks of ORDER or more in a zone under pressure, in units of ORDER."""
    counts = ((info or {}).get("buddyinfo_pressed") or {}).get(zone_name)
    if counts is None:
        return None
    return sum(c << (o - order) for o, c in enumerate(counts) if o >= order)


def ex_pressure_coherent(rec, info):
    """After aging, what a contiguous (coherent) request gets depends on free
    blocks, not on free pages. Fails if the aging left enough free 1 MiB
    blocks (nothing fragmented), the request worked anyway, or it got fewer
    buffers than there were free blocks."""
    pressed = (info or {}).get("zones_pressed") or {}
    free = (pressed.get("DMA32") or {}).get("free")
    blocks = blocks_at_least(info, "DMA32", 8)
    if free is None or blocks is None:
        return False, "no zone state under pressure (see the boot's output)"
    want = rec["count"]
    got = rec.get("buffers")
    if got is None:
        return False, "no buffer count for the request"
    # The aging must have left fewer free 1 MiB blocks than the request
    # wants (else it showed nothing); the request must then stop with
    # ENOMEM having got at least those blocks (ZONE_DMA may add a few).
    ok = rec["errno"] == "ENOMEM" and blocks < want and got >= blocks
    return ok, ("ZONE_DMA32 under pressure: %.0f MiB free but %d free 1 MiB blocks; %s after %d of %d buffers"
                " (%s ZONE_DMA pages)" % (free * 4096 / 1048576.0, blocks, rec["errno"] or "ok", got, want,
                                          fmt(rec["zone_dma_pages_used"])))


def ex_pressure_dma32(rec, info):
    """Page-sized buffers do not care about fragmentation: streaming-dma32
    still gets every page from ZONE_DMA32 with no bounce. Fails on a page
    elsewhere, a bounce, a failure, or no pages (a missing count)."""
    zp = rec.get("zone_pages") or {}
    ok = rec["ok"] and bounced(rec) == 0 and bool(rec["pages"]) and zp.get("DMA32") == rec["pages"]
    return ok, "%s, %s of %s pages from ZONE_DMA32, %s bounced" % (
        yes(rec["ok"]), zp.get("DMA32"), rec["pages"], fmt(bounced(rec)))


def ex_truncation(rec, info):
    ok = (rec["ok"] and rec["buffers_verified"] == 1 and rec["alias_canary_errors"] == 0
          and rec["device_faults"] == 0)
    return ok, ("%s bytes sent to %s landed at its low alias %s; %s other bytes of either window changed" % (
        rec["bytes"], hex(rec["alias_high"] or 0), hex((rec["alias_high"] or 0) & (GIB4 - 1)),
        fmt(rec["alias_canary_errors"])))


# Reclaim and swap ---------------------------------------------------------------
# The request's /proc/vmstat deltas (@@snap around it, on a boot with swap).
# 6.x counts reclaim per node (pgscan, pgsteal, pswpout), not per zone.
def reclaimed(rec):
    """(pages swapped out, pages stolen by kswapd and direct reclaim) across
    the request; (None, None) without the snapshots."""
    v = rec.get("vmstat_delta")
    if not v:
        return None, None
    return v.get("pswpout"), (v.get("pgsteal_kswapd") or 0) + (v.get("pgsteal_direct") or 0)


def ex_pressure_swap(rec, info):
    """With swap, on the aged, fragmented machine, the 64 MiB coherent
    request (1 MiB buffers: order 8) still ends ENOMEM: direct reclaim runs
    for it (pgscan_direct grew: it scans the anonymous pages it could swap
    out) but frees no 1 MiB block, since the guest kernel has no compaction
    and a page swapped out of an order-6 hole's neighbour rarely completes
    an order-8 block. Fails on a boot without swap (nothing to scan), no
    direct reclaim, success, or a page outside ZONE_DMA32 and the ZONE_DMA
    fallback."""
    zp = rec.get("zone_pages") or {}
    v = rec.get("vmstat_delta") or {}
    swap = bool((info or {}).get("swaps"))
    ok = (swap and not rec["ok"] and rec["errno"] == "ENOMEM" and (v.get("pgscan_direct") or 0) > 0
          and bool(zp.get("DMA32")) and (zp.get("DMA32") or 0) + (zp.get("DMA") or 0) == rec.get("pages"))
    out, stolen = reclaimed(rec)
    return ok, "swap %s; %s after %s of %s buffers, %s of %s pages from ZONE_DMA32 (%s from ZONE_DMA, the" \
        " fallback); across the request direct reclaim scanned %s LRU entries (allocstall_dma32 +%s), %s pages" \
        " reclaimed, %s swapped out" % (
            "on" if swap else "off", rec["errno"] or "ok", fmt(rec.get("buffers")), rec["count"],
            fmt(zp.get("DMA32")), fmt(rec.get("pages")), fmt(zp.get("DMA")), fmt(v.get("pgscan_direct")),
            fmt(v.get("allocstall_dma32")), fmt(stolen), fmt(out))


def scanned(rec):
    """LRU entries kswapd and direct reclaim scanned across the request
    (6.x's per-node LRU: a scan for ZONE_DMA32 counts the higher zones'
    pages it skips); None without the snapshots."""
    v = rec.get("vmstat_delta")
    return None if not v else (v.get("pgscan_kswapd") or 0) + (v.get("pgscan_direct") or 0)


def ex_swap_reclaim(rec, info):
    """With swap, ZONE_DMA32 at its watermarks (aged, not fragmented): a
    GFP_DMA32 request larger than the zone's free pages makes kswapd and
    direct reclaim scan, but they free fewer pages than the request
    lacks, and it ends ENOMEM (the OOM killer does not run for a request
    below ZONE_NORMAL). Fails on a boot without swap, no reclaim scan, a
    request that succeeded, or reclaim that freed what it lacked."""
    out, stolen = reclaimed(rec)
    # a missing page count is a failed check, never 0 pages
    got = rec.get("pages")
    lacked = (rec["size"] * rec["count"] >> 12) - got if got is not None else None
    n = scanned(rec)
    ok = (bool((info or {}).get("swaps")) and not rec["ok"] and rec["errno"] == "ENOMEM" and bool(n)
          and stolen is not None and lacked is not None and stolen < lacked)
    zp = rec.get("zone_pages") or {}
    return ok, "%s after %s of %s buffers (%s pages from ZONE_DMA32, %s from ZONE_DMA); across the request" \
        " reclaim scanned %s LRU entries, reclaimed %s pages, swapped out %s; %s pages short" % (
            rec["errno"] or "ok", fmt(rec.get("buffers")), rec["count"], fmt(zp.get("DMA32")), fmt(zp.get("DMA")),
            fmt(n), fmt(stolen), fmt(out), fmt(lacked))


def ex_page_cache_reclaim(rec, info):
    """ZONE_DMA32 full of clean page cache (read on node 0's CPU): a
    GFP_DMA32 request larger than the zone's free pages succeeds, every page
    from ZONE_DMA32 or ZONE_DMA, because reclaim frees page cache there: the
    zone's LRU pages (/proc/zoneinfo, right before and after the request)
    fell by at least 90% of what the request took beyond its free pages (the
    rest: slab and other pages freed meanwhile), and kswapd reclaimed
    (pgsteal_kswapd grew). Fails on a request that failed, a page from
    elsewhere, a request the free pages covered, no fall of the LRU
    pages (a boot without the page cache) or no kswapd reclaim."""
    zp = rec.get("zone_pages") or {}
    got32, got16 = zp.get("DMA32") or 0, zp.get("DMA") or 0
    lru = (rec.get("zone_lru") or {}).get("DMA32")
    v = rec.get("vmstat_delta") or {}
    steal = v.get("pgsteal_kswapd")
    beyond = got32 - lru["free_before"] if lru else None
    fell = lru["lru_before"] - lru["lru_after"] if lru else None
    ok = (bool(rec["ok"]) and rec.get("pages") is not None and rec["pages"] == rec["size"] * rec["count"] >> 12
          and got32 + got16 == rec["pages"] and beyond is not None and beyond > 0
          and fell * 10 >= beyond * 9 and bool(steal))
    return ok, "%s, %s of %s buffers: %s pages from ZONE_DMA32, %s from ZONE_DMA; ZONE_DMA32 had %s free, its" \
        " LRU pages fell by %s for the %s it gave beyond them; kswapd reclaimed %s pages, direct reclaim %s" % (
            rec["errno"] or "ok", fmt(rec.get("buffers")), rec["count"], fmt(zp.get("DMA32")), fmt(zp.get("DMA")),
            fmt(lru and lru["free_before"]), fmt(fell), fmt(beyond), fmt(steal), fmt(v.get("pgsteal_direct")))


def ex_pressure_swap_nodma32(rec, info):
    """dma32=off with swap: reclaim can free ZONE_DMA's pages, but 64 MiB
    does not fit in a 16 MiB zone: ENOMEM after ZONE_DMA's pages, none from
    elsewhere. Fails on success, on pages outside ZONE_DMA, on none in it,
    or without the request's reclaim snapshots (no swap boot)."""
    zp = rec.get("zone_pages") or {}
    out, stolen = reclaimed(rec)
    dma = zp.get("DMA") or 0
    ok = (not rec["ok"] and rec["errno"] == "ENOMEM" and dma > 0 and rec.get("pages") == dma
          and zone(info, "DMA32").get("present") == 0 and out is not None)
    return ok, "%s after %s of %s buffers, %s ZONE_DMA pages (ZONE_DMA manages %s); across the request %s pages" \
        " swapped out, %s reclaimed" % (rec["errno"] or "ok", fmt(rec.get("buffers")), rec["count"], fmt(dma),
                                        fmt(zone(info, "DMA").get("managed")), fmt(out), fmt(stolen))


# NUMA ----------------------------------------------------------------------------
def node_zones_text(info):
    """Each node's zones from /proc/zoneinfo: start_pfn+spanned (present)."""
    out = []
    for node, zs in sorted(((info or {}).get("nodes") or {}).items()):
        out.append("node %s: %s" % (node, ", ".join(
            "%s %s+%s (%s present)" % (z, fmt((zs.get(z) or {}).get("start_pfn")), fmt((zs.get(z) or {}).get("spanned")),
                                        fmt((zs.get(z) or {}).get("present"))) for z in nodes.ZONES)))
    return "; ".join(out) or "no zoneinfo"


def node_zone_mismatches(info):
    """Where /proc/zoneinfo's per-node zones differ from size_zones() of the
    node's page range: [text]; None without node ranges or zones."""
    ranges, got = (info or {}).get("node_ranges"), (info or {}).get("nodes")
    if not ranges or not got:
        return None
    out = []
    for node, rs in sorted(ranges.items()):
        for z, want in nodes.formula(rs).items():
            have = (got.get(node) or {}).get(z) or {}
            keys = ("start_pfn", "spanned", "present") if want["spanned"] else ("spanned", "present")
            out += ["node %s %s %s: zoneinfo %s, formula %s" % (node, z, k, fmt(have.get(k)), want[k])
                    for k in keys if (have.get(k) or 0) != want[k]]
    return out


def ex_node_zones(rec, info):
    """Per-node zones: on a machine of two or more nodes, one of them wholly
    above 4 GiB (no ZONE_DMA32), each node's zones (start_pfn, spanned,
    present) are what the patch's size_zones() gives for its page range,
    holes counted in each zone's own range. Fails on any difference, on a
    machine of one node, or without a node lacking ZONE_DMA32."""
    ranges = (info or {}).get("node_ranges") or {}
    bad = node_zone_mismatches(info)
    if len(ranges) < 2:
        return False, "not a machine of two or more nodes (%d node ranges in the boot log)" % len(ranges)
    high = [n for n, zs in ((info or {}).get("nodes") or {}).items()
            if not (zs.get("DMA32") or {}).get("spanned") and (zs.get("Normal") or {}).get("present")]
    ok = bad == [] and bool(high)
    return ok, "%s; %s; node(s) without ZONE_DMA32: %s" % (
        "every zone as size_zones() computes it" if bad == [] else "differs: " + "; ".join(bad or ["no zoneinfo"]),
        node_zones_text(info), ", ".join(sorted(high)) or "none")


def device_nodes(info):
    """The NUMA node of each bound dma32-demo function (sysfs numa_node)."""
    return [d["node"] for d in (info or {}).get("device_nodes") or []]


def numa_allocations(rec):
    """The page allocator's allocations a request made: one per coherent
    buffer (one high-order allocation each), one per page for the
    page-by-page strategies. The NUMA counters count allocations."""
    return rec.get("buffers") if rec["strategy"] == "coherent" else rec.get("pages")


def numastat(rec, node, key):
    return ((rec.get("numastat") or {}).get(node) or {}).get(key)


def _numa_common(rec, info):
    """(device on node NUMA_DEVICE_NODE, pages from that node, text)."""
    devs = device_nodes(info)
    nz = rec.get("node_zone_pages") or {}
    on_dev = sum(v for k, v in nz.items() if k.startswith("node %d " % nodes.NUMA_DEVICE_NODE))
    ok = bool(devs) and all(d == nodes.NUMA_DEVICE_NODE for d in devs)
    return ok, on_dev, "device on node %s; pages by node and zone: %s" % (
        ", ".join(str(d) for d in devs) or "?", ", ".join("%s %d" % kv for kv in sorted(nz.items())) or "none")


def ex_numa_today(rec, info):
    """A 32-bit device on the node without ZONE_DMA32 (NUMA_DEVICE_NODE):
    the device reports that node; every page of the request comes from
    node 0's ZONE_DMA32 (none from ZONE_DMA, none from the device's node);
    node 0's NUMA counters count the request's allocations as hits
    (the preferred zone is the first eligible one of node 1's zonelist,
    node 0's ZONE_DMA32) and as other_node (the request ran on a CPU of
    node 1), not as misses. Fails on any of these."""
    dev_ok, _, txt = _numa_common(rec, info)
    nz = rec.get("node_zone_pages") or {}
    n = numa_allocations(rec) or 0
    hit, other, miss = (numastat(rec, "0", k) for k in ("numa_hit", "other_node", "numa_miss"))
    ok = (dev_ok and rec["ok"] and bool(rec.get("pages")) and nz == {"node 0 DMA32": rec["pages"]}
          and None not in (hit, other, miss) and hit >= n and other >= n and miss < n and n > 0)
    return ok, "%s, %s; %s allocations: node 0 numa_hit +%s, other_node +%s, numa_miss +%s" % (
        yes(rec["ok"]), txt, fmt(n), fmt(hit), fmt(other), fmt(miss))


def ex_numa_before(rec, info):
    """2.6.14's model, device on node 1: its ordinary pages (node 1, above
    4 GiB) are beyond reach, so the buffers come from ZONE_DMA (node 0),
    then from the swiotlb pool (in node 0's memory below 4 GiB), which
    holds no buffer larger than a segment (256 KiB): a 1 MiB request ends
    ENOMEM once ZONE_DMA is used up, where 2.6.14 panicked. Fails if the
    device is not on node 1, the request did not end ENOMEM, a page came
    from node 1, no page from ZONE_DMA, or a page from neither ZONE_DMA
    nor the pool."""
    dev_ok, on_dev, txt = _numa_common(rec, info)
    runs = rec.get("runs") or []
    dma = (rec.get("zone_pages") or {}).get("DMA") or 0
    outside = sum(r["pages"] for r in runs if not r["in_pool"] and zone_of(info, r["phys"]) != "DMA")
    ok = (dev_ok and not rec["ok"] and rec["errno"] == "ENOMEM" and on_dev == 0 and dma > 0 and outside == 0
          and bool(runs))
    return ok, "%s after %s of %s buffers, %s; %s ZONE_DMA pages, %s MiB in the swiotlb pool, %d pages elsewhere;" \
        " pool refusals %s, of which 2.6.14 would have panicked on %s" % (
            rec["errno"] or "ok", fmt(rec.get("buffers")), rec["count"], txt, dma,
            mib_of(rec.get("coherent_swiotlb_bytes")), outside, fmt(rec.get("swiotlb_coherent_full")),
            fmt(rec.get("coherent_would_panic")))


def ex_numa_nozone(rec, info):
    """No ZONE_DMA32 (dma32=off), device on node 1: GFP_DMA32 from node 1
    falls back to node 0's ZONE_DMA: every page from there; the request
    works or stops with ENOMEM when ZONE_DMA is used up. Fails on a page
    elsewhere, none at all, or the device not on node 1."""
    dev_ok, _, txt = _numa_common(rec, info)
    nz = rec.get("node_zone_pages") or {}
    ok = (dev_ok and bool(rec.get("pages")) and nz == {"node 0 DMA": rec["pages"]}
          and (rec["ok"] or rec["errno"] == "ENOMEM"))
    return ok, "%s, %s" % (rec["errno"] or "ok", txt)
