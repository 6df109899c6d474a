"""dfrank/files.py: atomic writes whose leftovers are removed only when their writer is
certainly gone, whoever else shares the folder."""

import os
import subprocess
import sys
import time

import pytest

from dfrank import files
from dfrank.result import LinearRanker


def _dead_pid():
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    return dead.pid


def _aged(path, seconds=2 * files.STALE_AFTER):
    path.write_text("")
    t = time.time() - seconds
    os.utime(path, (t, t))
    return path


def _host_ns():
    host, ns, _ = files.owner().split("-")
    return host, ns


def test_a_dead_writers_old_temporary_on_this_host_is_removed(tmp_path):
    host, ns = _host_ns()
    stale = _aged(tmp_path / f".dfrank-{host}-{ns}-{_dead_pid()}-x1y2.tmp")
    LinearRanker([1.0]).save(tmp_path / "m.json")
    assert not stale.exists()


def test_a_temporary_another_writer_may_still_be_writing_is_kept(tmp_path):
    """In a folder shared between containers or hosts (NFS, a bind mount), a PID that is
    not visible here was once taken for a dead writer, and its file in progress deleted."""
    host, ns = _host_ns()
    dead = _dead_pid()
    kept = [_aged(tmp_path / f".dfrank-{'0' * 12}-{ns}-{dead}-a.tmp"),     # another host
            _aged(tmp_path / f".dfrank-{host}-{int(ns) + 1}-{dead}-b.tmp"),  # another ns
            _aged(tmp_path / f".dfrank-{host}-{ns}-{os.getppid()}-c.tmp"),   # alive
            _aged(tmp_path / f".dfrank-{host}-{ns}-{dead}-d.tmp", 60),       # young
            _aged(tmp_path / f".dfrank-{dead}-e.tmp")]                       # former names
    LinearRanker([1.0]).save(tmp_path / "m.json")
    assert all(p.exists() for p in kept)


def test_a_temporary_named_with_an_impossible_pid_breaks_no_write(tmp_path):
    """A PID beyond the machine's range in a temporary's name made every write exit 3
    with OverflowError: the model was neither written nor printed."""
    host, ns = _host_ns()
    odd = [_aged(tmp_path / ".dfrank-99999999999999999999-x.tmp"),
           _aged(tmp_path / f".dfrank-{host}-{ns}-9999999999-x.tmp"),
           _aged(tmp_path / f".dfrank-{host}-99999999999999999999-1-x.tmp")]
    LinearRanker([1.0]).save(tmp_path / "m.json")
    assert LinearRanker.load(tmp_path / "m.json").weights.tolist() == [1.0]
    assert all(p.exists() for p in odd)
    assert files.process_gone(10 ** 20) is False and files.process_gone("x") is False


def test_a_write_names_its_temporary_by_host_namespace_and_pid(tmp_path, monkeypatch):
    seen = []
    real = os.replace
    monkeypatch.setattr(os, "replace", lambda a, b: seen.append(a) or real(a, b))
    files.write_text_atomic(tmp_path / "t.txt", "x")
    name = os.path.basename(seen[0])
    assert name.startswith(f".dfrank-{files.owner()}-") and name.endswith(".tmp")


@pytest.mark.parametrize("alive", [False, True])
def test_the_folders_of_tunes_engine_runs_are_swept_only_when_certainly_dead(tmp_path,
                                                                            alive):
    from dfrank.engine_command import sweep_stale_folders

    host, ns = _host_ns()
    pid = os.getppid() if alive else _dead_pid()
    folder = tmp_path / f"dfrank-tune-{host}-{ns}-{pid}-abc"
    folder.mkdir()
    young = tmp_path / f"dfrank-tune-{host}-{ns}-{_dead_pid()}-young"
    young.mkdir()
    t = time.time() - 2 * files.STALE_AFTER
    os.utime(folder, (t, t))
    sweep_stale_folders(str(tmp_path))
    assert folder.exists() == alive and young.exists()



def test_a_second_writer_of_one_file_is_refused_naming_the_first(tmp_path):
    """Two benches (or two runs checkpointing) on one file, on one host or on hosts sharing
    the folder, interleaved or lost each other's records (issue #62): the second is
    refused, naming the first; the marker goes when the first ends."""
    out = tmp_path / "bench.jsonl"
    with files.sole_writer(out, "bench file"):
        marker = tmp_path / ("bench.jsonl" + files.WRITER)
        assert marker.read_text().startswith(files.owner() + " ")
        with pytest.raises(files.OutputError, match="being written by process"):
            with files.sole_writer(out, "bench file"):
                pass
    assert not marker.exists()
    # a live process of this host (another writer): refused
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        host, ns = _host_ns()
        marker.write_text(f"{host}-{ns}-{alive.pid} 1700000000\n")
        with pytest.raises(files.OutputError, match=f"process {alive.pid} of this host"):
            with files.sole_writer(out, "bench file"):
                pass
    finally:
        alive.kill()
        alive.wait()
    # another host's writer, or a marker it cannot read: never taken over
    marker.write_text(f"0123456789ab-1-{os.getpid()} 1700000000\n")
    with pytest.raises(files.OutputError, match="of another host .0123456789ab."):
        with files.sole_writer(out, "bench file"):
            pass
    marker.write_text("garbage")
    with pytest.raises(files.OutputError, match="remove .*bench.jsonl.writer"):
        with files.sole_writer(out, "bench file"):
            pass


def test_the_marker_of_a_writer_gone_from_this_host_is_taken_over(tmp_path):
    out = tmp_path / "c.json"
    host, ns = _host_ns()
    marker = tmp_path / ("c.json" + files.WRITER)
    marker.write_text(f"{host}-{ns}-{_dead_pid()} 1700000000\n")
    with files.sole_writer(out, "checkpoint"):
        assert marker.read_text().startswith(files.owner())
    assert not marker.exists()
