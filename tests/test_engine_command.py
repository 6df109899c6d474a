"""dfrank.tuning.command: a search engine run as a shell command, its parameters, its cache and its
timeouts."""

import os

import pytest

from dfrank.tuning.command import CommandRun
from tests.inputs import wait_gone


def test_reserved_names_are_no_parameters():
    """A parameter named run or cwd replaced the command's own placeholders: refused."""
    from dfrank.tuning.command import CommandRun

    for name in ("run", "cwd"):
        with pytest.raises(ValueError, match=f"cannot be named '{name}'"):
            CommandRun(["engine", f"{{{name}}}", "{run}"], [name])


def test_a_command_cache_is_keyed_on_the_expanded_command(tmp_path):
    """The cache of a command-line engine was keyed by its unexpanded arguments, so two working
    directories shared one cache: it is keyed by the command as run ({cwd} expanded)."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    argv = ["./engine", "{cwd}/index", "{k1}", "{run}"]
    cwd = os.getcwd()
    try:
        os.chdir(a)
        in_a = CommandRun(argv, ["k1"]).describe()
        os.chdir(b)
        in_b = CommandRun(argv, ["k1"]).describe()
    finally:
        os.chdir(cwd)
    assert in_a != in_b and str(a) in in_a and "{k1}" in in_a and "{run}" in in_a


def test_a_timeout_ends_the_whole_process_group(tmp_path):
    """A timed-out engine's children (a shell's background job) outlived the timeout: the whole
    process group is ended."""
    pidfile = tmp_path / "child.pid"
    script = (f"sleep 300 & echo $! > {pidfile}; wait")
    runner = CommandRun(["bash", "-c", script, "{k}", "{run}"], ["k"], timeout=1.0)
    from dfrank.tuning.command import CommandError

    with pytest.raises(CommandError, match="ran longer than 1 s"):
        runner({"k": 1.0})
    wait_gone(int(pidfile.read_text()), "the grandchild outlived the timeout")


def test_the_former_module_name_is_gone():
    """dfrank.command stood beside dfrank.cli as if it were part of the command line: it is
    dfrank.tuning.command, and the former name of the unreleased version is gone."""
    import importlib

    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("dfrank.command")
    assert CommandRun.__module__ == "dfrank.tuning.command"
