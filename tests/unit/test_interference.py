"""Who else used a point's CPUs (snnbench.machine.interference): the kernel's counters read from a /proc laid out
by the test, the rule `disturbed`, and a real busy loop pinned beside a real busy loop on one CPU."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from snnbench.machine import interference

STAT = "cpu  1 2 3 4 5 6 7 8 9 10\ncpu0 {u0} 0 {s0} 900 0 0 0 {st0} 0 0\ncpu1 {u1} 0 0 900 0 0 0 0 0 0\nintr 1\n"


def lay_out(proc, u0=0, s0=0, st0=0, u1=0, some_us=0):
    (proc / "pressure").mkdir(parents=True, exist_ok=True)
    (proc / "stat").write_text(STAT.format(u0=u0, s0=s0, st0=st0, u1=u1))
    (proc / "pressure" / "cpu").write_text(f"some avg10=0.00 avg60=0.00 avg300=0.00 total={some_us}\n")


def test_others_are_the_busy_time_of_the_points_cpus_less_its_own(tmp_path):
    ticks = interference.TICKS
    lay_out(tmp_path)
    window = interference.Window([0, 1], proc=tmp_path)
    lay_out(tmp_path, u0=3 * ticks, s0=ticks, st0=ticks // 2, u1=5 * ticks, some_us=2_000_000)
    found = window.close(own_cpu_s=1.5, used=[0])  # the point's threads ran on CPU 0 only
    assert found["cpus"] == [0] and found["busy_s"] == 4.0 and found["others_cpu_s"] == 2.5
    assert found["steal_s"] == 0.5 and found["pressure_s"] == 2.0
    assert interference.others_fraction([("n1", {**found, "window_s": 10.0})]) == pytest.approx(0.3)


def test_ranks_left_unbound_on_one_node_share_their_cpus_and_are_not_each_others_others():
    shared = {"measured": True, "cpus": [0, 1], "window_s": 10.0, "busy_s": 20.0, "steal_s": 0.0}
    windows = [("n1", {**shared, "own_cpu_s": 10.0}), ("n1", {**shared, "own_cpu_s": 10.0})]
    assert interference.others_fraction(windows) == 0.0
    assert interference.others_fraction([("n1", {"measured": False, "cpus": [0]})]) is None


def test_disturbed_is_judged_by_one_threshold_and_unmeasured_says_so():
    assert interference.disturbed(interference.DISTURBED_ABOVE * 2) is True
    assert interference.disturbed(0.0) is False and interference.disturbed(None) is None


BUSY = "import time\nend = time.perf_counter() + {s}\nwhile time.perf_counter() < end: pass\n"


@pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="no /proc/stat on this system")
def test_a_busy_loop_beside_another_on_its_cpu_is_seen_as_others_work():
    """A real CPU burner pinned to the measured process's CPU takes about half of it (the kernel shares the CPU
    between the two): well above the threshold, however loaded the machine is otherwise."""
    allowed = os.sched_getaffinity(0)
    cpu = min(allowed)
    burner = subprocess.Popen(
        [sys.executable, "-c", BUSY.format(s=6)], preexec_fn=lambda: os.sched_setaffinity(0, {cpu})
    )
    try:
        time.sleep(0.5)
        os.sched_setaffinity(0, {cpu})
        started, window = time.process_time(), interference.Window([cpu])
        exec(BUSY.format(s=3))  # noqa: S102 (the measured work: a busy loop of 3 s of wall time)
        found = window.close(time.process_time() - started)
    finally:
        os.sched_setaffinity(0, allowed)
        burner.kill()
    fraction = interference.others_fraction([("here", found)])
    assert fraction > interference.DISTURBED_ABOVE and interference.disturbed(fraction), found
