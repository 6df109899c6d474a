"""dfrank/files.py: atomic writes whose leftovers are removed only when their writer is
certainly gone, whoever else shares the folder."""

import os
import subprocess
import sys
import time

import pytest

from dfrank import files
from dfrank.driver.result import LinearRanker


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
    from dfrank.tuning.command import sweep_stale_folders

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


@pytest.mark.parametrize("target", ["nowhere", "a file"])
def test_a_marker_that_is_a_link_is_refused_as_a_link_to_remove(tmp_path, target):
    """A dangling symbolic link as the marker was reported as a writer that "keeps coming
    back": dfrank never makes a link there, so it is named as one, to remove."""
    out = tmp_path / "ck.json"
    marker = tmp_path / ("ck.json" + files.WRITER)
    pointed = tmp_path / "elsewhere"
    if target == "a file":
        pointed.write_text("keep me")
    marker.symlink_to(pointed)
    with pytest.raises(files.UsageError, match="is a symbolic link to .*elsewhere.*remove it"):
        with files.sole_writer(out, "checkpoint"):
            pass
    assert marker.is_symlink() and (target != "a file" or pointed.read_text() == "keep me")


@pytest.mark.parametrize("locked", [True, False])
def test_a_take_over_never_removes_a_marker_made_since_it_was_read(tmp_path, monkeypatch,
                                                                    locked):
    """The take-over of a dead writer's marker read it, then removed the path: a marker that
    a racing writer made in between (it took the dead one over first) was removed, and two
    writers were inside at once. The racer is injected between the read and the removal;
    its marker stays, and this writer is refused. Without the folder's lock (a file system
    that has none), the marker put aside is put back."""
    import contextlib

    out = tmp_path / "b.jsonl"
    marker = tmp_path / ("b.jsonl" + files.WRITER)
    host, ns = _host_ns()
    marker.write_text(f"{host}-{ns}-{_dead_pid()} 1700000000\n")
    racer = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    real = files._read_marker

    def read_then_race(path):
        got = real(path)
        if not hasattr(read_then_race, "done"):   # the racer takes over, once
            read_then_race.done = True
            os.unlink(path)
            with open(path, "x") as f:
                f.write(f"{host}-{ns}-{racer.pid} 1700000001\n")
        return got

    monkeypatch.setattr(files, "_read_marker", read_then_race)
    if not locked:
        monkeypatch.setattr(files, "_one_take_over", lambda folder: contextlib.nullcontext())
    try:
        with pytest.raises(files.OutputError, match=f"process {racer.pid} of this host"):
            with files.sole_writer(out, "bench file"):
                pass
        assert marker.read_text().startswith(f"{host}-{ns}-{racer.pid} ")
        assert sorted(os.listdir(tmp_path)) == [marker.name]
    finally:
        racer.kill()
        racer.wait()


def _race(out, inside, barrier, seen):
    """One racer of the stress test: waits for the others, then tries to become the one
    writer of ``out``; inside, counts the writers inside with it."""
    barrier.wait()
    try:
        with files.sole_writer(out, "bench file"):
            mine = os.path.join(inside, str(os.getpid()))
            open(mine, "w").close()
            time.sleep(0.02)
            seen.put(len(os.listdir(inside)))
            os.unlink(mine)
    except files.OutputError:
        seen.put(0)


@pytest.mark.slow
def test_many_processes_racing_over_a_dead_writers_marker_let_one_in_at_a_time(tmp_path):
    """12 processes that find a dead writer's marker at once, 20 times: at most one writer
    is ever inside (before, two were in one trial of 20)."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    host, ns = _host_ns()
    for trial in range(20):
        inside = tmp_path / f"t{trial}" / "inside"
        inside.mkdir(parents=True)
        out = tmp_path / f"t{trial}" / "b.jsonl"
        (tmp_path / f"t{trial}" / ("b.jsonl" + files.WRITER)).write_text(
            f"{host}-{ns}-{_dead_pid()} 1700000000\n")
        barrier, seen = ctx.Barrier(12), ctx.Queue()
        procs = [ctx.Process(target=_race, args=(str(out), str(inside), barrier, seen))
                 for _ in range(12)]
        for p in procs:
            p.start()
        counts = [seen.get(timeout=60) for _ in procs]
        for p in procs:
            p.join(timeout=60)
        assert max(counts) == 1, (trial, counts)


def test_an_output_under_a_file_is_a_usage_error_naming_the_file(tmp_path):
    """``-o train.txt/m.json`` where train.txt is a file said "the folder ... does not
    exist"."""
    (tmp_path / "train.txt").write_text("0 qid:1 1:0\n")
    with pytest.raises(files.UsageError, match=r"train.txt is a file, not a folder"):
        files.check_writable(tmp_path / "train.txt" / "m.json", "model")
    with pytest.raises(files.UsageError, match=r"train.txt is a file, not a folder"):
        files.check_writable(tmp_path / "train.txt" / "deeper" / "m.json", "model")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        files.check_writable(tmp_path / "nothing" / "m.json", "model")
