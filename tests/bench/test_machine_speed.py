"""The machine-speed readings printed beside benchmark tables (bench/machine_speed.py)."""

from __future__ import annotations

import pytest

from bench.machine_speed import CpuTicks, cpu_shares, parse_cpu_line, read_cpu_ticks, time_workload


def test_the_aggregate_cpu_line_splits_into_busy_idle_and_stolen_ticks() -> None:
    ticks = parse_cpu_line("cpu  4820728 285126 451751 7355705 34863 7 31912 20402 11 0")
    assert ticks == CpuTicks(busy=4820728 + 285126 + 451751 + 7 + 31912, idle=7355705 + 34863, steal=20402)
    assert ticks.total == ticks.busy + ticks.idle + ticks.steal


@pytest.mark.parametrize("line", ["cpu0 1 2 3 4 5 6 7 8", "cpu 1 2 3", "intr 1 2 3 4 5 6 7 8 9", ""])
def test_a_line_that_is_not_the_aggregate_cpu_line_is_refused(line: str) -> None:
    with pytest.raises(ValueError, match="aggregate cpu line"):
        parse_cpu_line(line)


def test_shares_are_percentages_of_the_ticks_between_two_readings() -> None:
    before = CpuTicks(busy=1000, idle=5000, steal=10)
    after = CpuTicks(busy=1300, idle=5660, steal=50)  # 1,000 ticks: 300 busy, 660 idle, 40 stolen
    shares = cpu_shares(before, after)
    assert shares is not None
    assert shares.busy == pytest.approx(30.0)
    assert shares.steal == pytest.approx(4.0)
    assert "busy 30%" in shares.text()
    assert "4.0%" in shares.text()
    assert cpu_shares(before, before) is None


def test_this_machines_readings_are_sane() -> None:
    ticks = read_cpu_ticks()
    if ticks is None:
        pytest.skip("no /proc/stat on this system")
    assert ticks.total > 0
    assert ticks.busy > 0
    timed = time_workload(tries=2, size=20_000)
    assert timed.wall_ms > 0
    assert timed.cpu_ms >= 0
