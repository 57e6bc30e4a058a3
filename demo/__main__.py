"""The reviewer's demo: python3 -m demo COMMAND (run from the project root).

  collect [--only REGEX] [--no-sweep] [--kernel F] [--initramfs F] [--kernel-version V]
          boot the guests, write build/report/raw/ (V: the demo's kernel,
          default DMA32_KERNEL, else the first of scripts/kernel-versions)
  judge [--kernel-version V]
          raw/ -> results.json, with the table of the run's kernel
          (refused when V is given and the run was collected for another)
  render  results.json -> table.txt, report.md, the plot, the memory maps
  verdict print the table and the summary from results.json
  run     all four (`make demo` runs collect, then `make report`, then verdict)

Exit status: 0 when every scenario is as expected; 1 when a guest failed or
a scenario was not as expected (everything is printed first); 2 for bad
usage.
"""
import argparse
import json
import os
import re
import sys

from . import collect, judge, render, table

TOP = os.environ.get("DMA32_TOP") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("DMA32_BUILD") or os.path.join(TOP, "build")


def rel(p):
    return os.path.relpath(p, TOP)


def paths(args):
    report = args.report or os.path.join(BUILD, "report")
    return report, os.path.join(report, "raw"), os.path.join(report, "results.json")


def collect_kernel(args):
    """The demo's kernel of a run about to be collected."""
    kernel = args.kernel_version or os.environ.get("DMA32_KERNEL") or table.DEFAULT_KERNEL
    if kernel not in table.KERNELS:
        sys.exit("demo: error: kernel %s is not one of %s (scripts/kernel-versions)" % (
            kernel, " ".join(table.KERNELS)))
    return table.for_kernel(kernel)


def do_collect(args):
    report, raw, _ = paths(args)
    tbl = collect_kernel(args)
    chosen = [s for s in tbl.scenarios if not args.only or re.search(args.only, s.name)]
    if not chosen:
        sys.exit("demo: error: --only '%s' matches no scenario" % args.only)
    guest_opts = []
    for opt in ("kernel", "initramfs"):
        v = getattr(args, opt)
        if v:
            if not os.path.isfile(v):
                sys.exit("demo: error: --%s: file '%s' not found" % (opt, v))
            guest_opts += ["--" + opt, v]
    collect.remove_earlier_run(report, raw)
    done = [0]
    live = judge.judging_of(tbl)

    def progress(manifest, boot_name):
        boot = manifest["boots"][boot_name]
        first = boot["runs"][0]
        loaded = judge.load_boot(raw, first["name"], first["status"], manifest["counters"])
        for spec in [s for s in manifest["scenarios"] if s["boot"] == boot_name]:
            done[0] += 1
            rec = judge.make_record(spec, boot, live[spec["name"]], manifest, loaded)
            print(render.progress_line(done[0], len(chosen), rec), flush=True)

    print("==> demo: %d scenarios (guest logs: %s)" % (
        len(chosen), rel(os.environ.get("DMA32_LOGS") or os.path.join(BUILD, "logs"))), flush=True)
    collect.collect(raw, tbl, chosen, not args.no_sweep, guest_opts, TOP, BUILD, progress)


def do_judge(args):
    report, raw, results_json = paths(args)
    if not os.path.exists(os.path.join(raw, "manifest.json")):
        sys.exit("demo: error: %s has no guest results: run 'make demo' (or python3 -m demo collect)" % rel(raw))
    try:
        results = judge.judge(raw, expect_kernel=args.kernel_version)
    except judge.Refused as e:
        sys.exit("demo: error: judge refuses %s: %s" % (rel(raw), e))
    tmp = results_json + ".tmp"
    with open(tmp, "w") as f:
        json.dump(results, f, indent=1)
        f.write("\n")
    os.replace(tmp, results_json)


def load_results(args):
    report, _, results_json = paths(args)
    try:
        with open(results_json) as f:
            return json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        sys.exit("demo: error: cannot read %s (run 'make demo'): %s" % (rel(results_json), e))


def do_render(args):
    report = paths(args)[0]
    img, img_err, bench_left_out = render.render(load_results(args), report)
    if img_err:
        print("demo: no plot: %s" % img_err, file=sys.stderr)
    if bench_left_out:
        print("demo: %s" % bench_left_out, file=sys.stderr)


def do_verdict(args):
    report, _, results_json = paths(args)
    results = load_results(args)
    print()
    print(render.text_table(results["scenarios"]))
    print()
    for line in render.summary_lines(results):
        print(line)
    img = [f for f in ("throughput.png", "throughput.svg") if os.path.exists(os.path.join(report, f))]
    maps = sorted(f for f in os.listdir(report) if f.startswith("memmap-") and f.endswith((".png", ".svg")))
    if maps:
        img.append("memmap-{%s}%s" % (",".join(os.path.splitext(f)[0][7:] for f in maps),
                                      os.path.splitext(maps[0])[1]))
    print("Report: %s, %s%s" % (rel(os.path.join(report, "report.md")), rel(results_json),
                                "".join(", " + rel(os.path.join(report, f)) for f in img)))
    s = results["summary"]
    return 1 if s["guest_failures"] or s["not_as_expected"] else 0


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m demo", description=__doc__.split("\n")[0])
    p.add_argument("command", choices=["collect", "judge", "render", "verdict", "run"])
    p.add_argument("--only", help="only the scenarios whose name matches this regex")
    p.add_argument("--no-sweep", action="store_true", help="skip the throughput sweep")
    p.add_argument("--kernel", help="guest kernel (default: run-guest's)")
    p.add_argument("--initramfs", help="guest initramfs (default: run-guest's)")
    p.add_argument("--kernel-version", help="collect: the demo's kernel (default DMA32_KERNEL); judge: the kernel"
                   " the run must have been collected for")
    p.add_argument("--report", help="report folder (default build/report)")
    args = p.parse_args(argv)
    if args.only:
        try:
            re.compile(args.only)
        except re.error as e:
            sys.exit("demo: error: --only '%s' is not a valid regular expression: %s" % (args.only, e))
    os.makedirs(paths(args)[1], exist_ok=True)
    if args.command in ("collect", "run"):
        do_collect(args)
    if args.command in ("judge", "run"):
        do_judge(args)
    if args.command in ("render", "run"):
        do_render(args)
    if args.command in ("verdict", "run"):
        return do_verdict(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
