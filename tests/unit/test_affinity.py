"""What the operating system says of a process's threads: the CPUs each may run on, the CPU it last
ran on, its CPU time, and the core of each CPU."""

from __future__ import annotations

import os
import threading
import time

from snnbench.machine import affinity


def test_cpu_lists_as_the_kernel_writes_them():
    assert affinity.parse_cpu_list("0-3,8,10-11\n") == [0, 1, 2, 3, 8, 10, 11]
    assert affinity.parse_cpu_list("5") == [5]


def test_cores_from_sysfs_or_each_cpu_its_own(tmp_path):
    for cpu, core in ((0, 0), (1, 0), (2, 1)):
        (tmp_path / f"cpu{cpu}" / "topology").mkdir(parents=True)
        (tmp_path / f"cpu{cpu}" / "topology" / "core_id").write_text(f"{core}\n")
        (tmp_path / f"cpu{cpu}" / "topology" / "physical_package_id").write_text("0\n")
    assert affinity.cores([2, 0, 1, 3], tmp_path) == {0: "0:0", 1: "0:0", 2: "0:1", 3: "cpu3"}


def test_a_threads_cpus_and_work_as_the_kernel_sees_them():
    cpu = min(os.sched_getaffinity(0))
    # The worker works until it has 50 ms of CPU and the snapshot is taken, however loaded the machine
    # (a deadline in wall time let it end before the snapshot under a loaded make test).
    worked, measured = threading.Event(), threading.Event()

    def busy():
        os.sched_setaffinity(0, {cpu})  # this thread only
        while not measured.is_set():
            if time.thread_time() >= 0.05:
                worked.set()

    before = affinity.threads()
    worker = threading.Thread(target=busy)
    worker.start()
    assert worked.wait(timeout=60)
    during = affinity.ran_between(before, affinity.threads())
    measured.set()
    worker.join()
    [mine] = [t for t in during if t["tid"] == worker.native_id]
    assert mine["cpus"] == [cpu] and mine["last_cpu"] == cpu and mine["cpu_s"] > 0
    main = next(t for t in during if t["tid"] == os.getpid())
    assert main["cpus"] == sorted(os.sched_getaffinity(0))
