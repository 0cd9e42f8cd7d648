"""How fast the machine ran around a benchmark, so that a run's figures can be read against its conditions.

The project's machine has 2 cores shared with other tenants of its host, and its speed drifts by up to 2x
within minutes (docs/benchmarks.md). Two readings, printed with a benchmark's table:

* a fixed pure-Python workload (integer arithmetic, a dict and string formatting: the kind of work a Django
  request does), timed before and after the run, best of a few tries; on a slowed machine its wall time
  grows, and its CPU time grows too when the slowdown is inside the core (a neighbour sharing caches or
  lowering the clock), not only time taken away;
* the CPU time the kernel counted during the run as busy (user, system, interrupts) and as *stolen* (the
  hypervisor ran another guest while this one wanted the core), from ``/proc/stat`` over all cores.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

PROC_STAT = Path("/proc/stat")
WORKLOAD_SIZE = 200_000


def _workload(size: int) -> int:
    table: dict[int, str] = {}
    total = 0
    for index in range(size):
        total += (index * index) % 7
        table[index % 1024] = f"{index}:{total}"
    return total + len(table)


@dataclass(frozen=True)
class WorkloadTime:
    wall_ms: float
    cpu_ms: float

    def text(self) -> str:
        return f"{self.wall_ms:.1f} ms wall / {self.cpu_ms:.1f} ms CPU"


def time_workload(tries: int = 5, size: int = WORKLOAD_SIZE) -> WorkloadTime:
    """The fixed workload's fastest wall time over ``tries`` runs, with that run's CPU time."""
    best: WorkloadTime | None = None
    for _ in range(tries):
        wall, cpu = time.perf_counter(), time.process_time()
        _workload(size)
        measured = WorkloadTime(
            wall_ms=1000 * (time.perf_counter() - wall), cpu_ms=1000 * (time.process_time() - cpu)
        )
        if best is None or measured.wall_ms < best.wall_ms:
            best = measured
    assert best is not None
    return best


@dataclass(frozen=True)
class CpuTicks:
    """The first ``cpu`` line of /proc/stat: all cores' ticks since boot."""

    busy: int  # user + nice + system + irq + softirq
    idle: int  # idle + iowait
    steal: int

    @property
    def total(self) -> int:
        return self.busy + self.idle + self.steal


def parse_cpu_line(line: str) -> CpuTicks:
    """Ticks from ``cpu  user nice system idle iowait irq softirq steal [guest guest_nice]``; guest time is
    already counted in user, so it is not added again."""
    fields = line.split()
    if not fields or fields[0] != "cpu" or len(fields) < 9:
        raise ValueError(f"not the aggregate cpu line of /proc/stat: {line!r}")
    user, nice, system, idle, iowait, irq, softirq, steal = (int(value) for value in fields[1:9])
    return CpuTicks(busy=user + nice + system + irq + softirq, idle=idle + iowait, steal=steal)


def read_cpu_ticks() -> CpuTicks | None:
    """The machine's CPU ticks now; None where /proc/stat cannot be read (not Linux)."""
    try:
        first = PROC_STAT.read_text().splitlines()[0]
    except (OSError, IndexError):
        return None
    return parse_cpu_line(first)


@dataclass(frozen=True)
class CpuShares:
    busy: float  # percent of all cores' time over the interval
    steal: float

    def text(self) -> str:
        return f"busy {self.busy:.0f}%, stolen by the host {self.steal:.1f}% (all cores)"


def cpu_shares(before: CpuTicks, after: CpuTicks) -> CpuShares | None:
    """Busy and stolen shares of the cores' time between two readings (None if no tick passed)."""
    total = after.total - before.total
    if total <= 0:
        return None
    return CpuShares(
        busy=100 * (after.busy - before.busy) / total, steal=100 * (after.steal - before.steal) / total
    )
