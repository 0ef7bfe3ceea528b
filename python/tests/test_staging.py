"""The staging a Spark load's tasks write into is removed only once no task writes into it
(``hfkit.spark._task_in``, ``_remove_staging``): a failed job leaves tasks running, whose
Python workers write on after Spark has ended the job. Threads stand for those workers here,
so that the interleavings are forced rather than hoped for."""

import threading
import time
from pathlib import Path

import pytest

import hfkit
from hfkit.spark import (ABANDONED, RUNNING_DIR, _join, _open_staging, _remove_staging,
                         _task_in)


def _write(staging, name, data=b"x"):
    if staging.startswith("s3://"):
        hfkit.put_object(_join(staging, name), data)
    else:
        p = Path(staging, name)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)


def _left(staging):
    if staging.startswith("s3://"):
        return [u for u, _ in hfkit.list_objects(staging)]
    return [str(p) for p in Path(staging).rglob("*")] if Path(staging).exists() else []


@pytest.fixture(params=["local", "s3"])
def staging(request, tmp_path):
    if request.param == "local":
        return str(tmp_path / "_staging")
    s3 = request.getfixturevalue("s3")
    return s3.url(f"staging-{request.node.name}")


def test_the_driver_waits_for_a_task_still_writing_then_removes_everything(staging):
    _open_staging(staging)
    entered, wrote = threading.Event(), []

    def late_task():
        with _task_in(staging):
            entered.set()
            time.sleep(1.0)
            # Written after the driver decided to remove the staging.
            _write(staging, "s1/0-7/f/hfile")
            wrote.append(True)

    t = threading.Thread(target=late_task)
    t.start()
    assert entered.wait(10)
    started = time.monotonic()
    _remove_staging(staging)
    waited = time.monotonic() - started
    t.join()
    assert wrote and waited >= 0.5
    assert _left(staging) == []


def test_a_task_starting_after_the_load_ended_writes_nothing(tmp_path):
    # Locally only: its marker has no directory to go in. On object storage nothing stops a
    # task that starts only after the whole removal (formats/python.md, "Staging removal").
    staging = str(tmp_path / "_staging")
    _open_staging(staging)
    _write(staging, "s1/0-1/f/hfile")
    _remove_staging(staging)
    assert _left(staging) == []
    ran = []
    with pytest.raises(RuntimeError, match="the load has ended"):
        with _task_in(staging):
            ran.append(True)
    assert not ran and _left(staging) == []


def test_a_task_seeing_the_abandoned_record_writes_nothing(staging):
    _open_staging(staging)
    _write(staging, ABANDONED, b"")
    ran = []
    with pytest.raises(RuntimeError, match="the load has ended"):
        with _task_in(staging):
            ran.append(True)
    assert not ran
    # Its marker is gone with it: the driver does not wait for it.
    assert not [u for u in _left(staging) if f"/{RUNNING_DIR}/" in u]
    _remove_staging(staging, wait=0)
    assert _left(staging) == []


def test_a_dead_workers_marker_is_waited_for_only_until_it_goes_stale(staging, monkeypatch):
    import hfkit.spark as sp
    monkeypatch.setattr(sp, "STALE_SECONDS", 1.0)
    _open_staging(staging)
    # A marker no task rewrites (its worker was killed inside `_task_in`).
    _write(staging, f"{RUNNING_DIR}/dead", b"1")
    _write(staging, "s1/0-3/f/hfile")
    started = time.monotonic()
    _remove_staging(staging, wait=60)
    assert 0.9 <= time.monotonic() - started < 30
    assert _left(staging) == []


def test_a_live_tasks_marker_keeps_changing(staging, monkeypatch):
    import hfkit.spark as sp
    monkeypatch.setattr(sp, "HEARTBEAT_SECONDS", 0.05)
    _open_staging(staging)
    seen = set()
    with _task_in(staging):
        deadline = time.monotonic() + 10
        while len(seen) < 3 and time.monotonic() < deadline:
            seen.update(held for _, held in sp._running(staging))
            time.sleep(0.02)
    assert len(seen) >= 3
    assert sp._running(staging) == []
