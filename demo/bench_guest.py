"""The guest side of `make bench` (scripts/bench), in the demo's format.

The guests print '@@KIND ARGS' sections (demo/collect.py explains them):
the driver's figures come from `dma32ctl run --json` with the demo's
counter list (collect.run_command), and each dma_map_benchmark run from
`demo-bench map` between two '@@counters' snapshots of the same list, so
bench and demo read the kernel's counters one way, and bench_report.py
parses them with the demo's own parser.

  python3 -m demo.bench_guest guests               NAME MEM per line
  python3 -m demo.bench_guest command SECONDS      the guests' command
  python3 -m demo.bench_guest ab SECONDS THREADS   one A/B boot's command
"""
import shlex
import sys
from typing import List

from . import collect, table

# The two guests, by what happens to a 32-bit device's streaming pages:
# at 6 GiB (q35) they lie above 4 GiB and bounce; at 2 GiB all memory is
# below 4 GiB, x86 sets up no swiotlb pool and nothing can bounce.
GUESTS = {"bounce": "6G", "nobounce": "2G"}
# The driver's own figures: 4 MiB per request, in these mapping sizes.
DRIVER_SIZES = (4096, 65536)
DRIVER_BYTES = 4 << 20
DRIVER_STRATEGIES = ("streaming", "streaming-dma32")
# dma_map_benchmark's masks and granules (pages per mapping)
MAP_BITS = (32, 64)
MAP_GRANULES = (1, 16)


def counter_snapshot(when: str, name: str) -> str:
    paths = " ".join(shlex.quote(p) for p in table.COUNTERS.values())
    return ("echo '@@counters %s %s'; for f in %s; do echo \"$f $(cat $f 2>/dev/null)\"; done"
            % (when, name, paths))


def map_command(bits: int, granule: int, seconds: int, threads: int) -> str:
    """One dma_map_benchmark run between two counter snapshots."""
    name = "map-%d-%d-%d" % (bits, granule, threads)
    return "; ".join([counter_snapshot("before", name),
                      "echo '@@bench %s'; demo-bench map %d %d %d %d" % (name, bits, granule, seconds, threads),
                      counter_snapshot("after", name)])


def driver_run_name(strategy: str, size: int) -> str:
    return "drv-%s-%d" % (strategy, size)


def command(seconds: int) -> str:
    """The bounce and nobounce guests' command: the driver's figures,
    then the device handed to dma_map_benchmark."""
    cmd: List[str] = ["echo '@@file /proc/version'; cat /proc/version", collect.run_command("info", "info")]
    for size in DRIVER_SIZES:
        for s in DRIVER_STRATEGIES:
            args = "run --strategy %s --op fill --size %d --count %d --runs 0 %s" % (
                s, size, DRIVER_BYTES // size, collect.counter_args())
            cmd.append(collect.run_command(args, "run " + driver_run_name(s, size)))
    cmd.append("echo '@@bench bind'; demo-bench bind")
    for bits in MAP_BITS:
        for g in MAP_GRANULES:
            cmd.append(map_command(bits, g, seconds, 1))
    cmd.append("echo '@@done'")
    return "; ".join(cmd)


def ab_command(seconds: int, threads: List[int]) -> str:
    """One boot of the counters' A/B: 32-bit mask, 4 KiB, bouncing."""
    cmd = ["echo '@@bench bind'; demo-bench bind"]
    cmd += [map_command(32, 1, seconds, t) for t in threads]
    cmd.append("echo '@@done'")
    return "; ".join(cmd)


def main(argv: List[str]) -> int:
    if argv[:1] == ["guests"] and len(argv) == 1:
        for name, mem in GUESTS.items():
            print(name, mem)
        return 0
    if argv[:1] == ["command"] and len(argv) == 2 and argv[1].isdigit():
        print(command(int(argv[1])))
        return 0
    if argv[:1] == ["ab"] and len(argv) == 3 and argv[1].isdigit() and all(t.isdigit() for t in argv[2].split()):
        print(ab_command(int(argv[1]), [int(t) for t in argv[2].split()]))
        return 0
    sys.stderr.write("usage: python3 -m demo.bench_guest guests | command SECONDS | ab SECONDS 'THREADS'\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
