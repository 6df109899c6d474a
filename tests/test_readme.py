"""The README's Python blocks run as written and print what the README shows."""

import contextlib
import io
import os
import re

import numpy as np
import pytest

README = os.path.join(os.path.dirname(__file__), "..", "README.md")
NUMBER = re.compile(r"-?\d+\.\d+(?:e-?\d+)?")


def blocks():
    text = open(README).read()
    found = re.findall(r"```(\w+)\n(.*?)```", text, flags=re.S)
    out = []
    for i, (lang, code) in enumerate(found):
        if lang == "python":
            expected = found[i + 1][1] if i + 1 < len(found) and found[i + 1][0] == "text" \
                else None
            out.append((code, expected))
    return out


def same_output(got, want):
    """Equal text, numbers equal to 1e-9 relative (last-digit noise across CPUs)."""
    if NUMBER.sub("#", got) != NUMBER.sub("#", want):
        return False
    a = np.array([float(x) for x in NUMBER.findall(got)])
    b = np.array([float(x) for x in NUMBER.findall(want)])
    return a.shape == b.shape and np.allclose(a, b, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("code,expected", blocks())
def test_readme_python_block(code, expected, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(code, "README.md", "exec"), {"__name__": "__main__"})
    if expected is not None:
        assert same_output(buf.getvalue().strip(), expected.strip()), buf.getvalue()


def test_readme_shows_install_and_test_commands():
    text = open(README).read()
    assert 'pip install -e ".[dev]"' in text and "python -m pytest" in text
    ci = open(os.path.join(os.path.dirname(__file__), "..", ".ci", "run")).read()
    assert 'pip install -e ".[dev]"' in ci and "python -m pytest" in ci


def test_readme_tuning_commands_run_as_written(tmp_path, monkeypatch):
    """The command lines of "Tuning a retrieval system" run on the files its Python block
    writes (the second one runs 'dfrank search' once per point, as an external engine)."""
    import shlex

    from dfrank import cli

    text = open(README).read()
    section = text[text.index("## Tuning a retrieval system"):]
    section = section[:section.index("\n## ", 3)]
    python = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    commands = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    assert python and commands
    monkeypatch.chdir(tmp_path)
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(python[0], "README.md", "exec"), {"__name__": "__main__"})
    lines = " ".join(commands).replace("\\\n", " ").splitlines()
    ran = 0
    for line in lines:
        if line.startswith("dfrank "):
            with contextlib.redirect_stdout(io.StringIO()):
                argv = shlex.split(line)[1:]
                assert cli.main(argv[:1] + ["--quiet"] + argv[1:]) == 0, line
            ran += 1
    assert ran == 2
    assert os.path.exists("tune.json") and os.path.exists("tune.jsonl")
