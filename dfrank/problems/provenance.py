"""What reproduces a bench, recorded in its file: the versions of dfrank, Python, numpy,
numba and the packages its solvers come from, the date and the machine
(:func:`provenance`), and each run's seed as its solver received it (:func:`seeds_of`)."""

import os
import platform
import sys
import time

__all__ = ["provenance", "seeds_of", "provenance_lines", "seed_rows"]

# the distribution behind each package prefix of an external solver's name
PACKAGES = {"cma": ("cma",), "nevergrad": ("nevergrad",), "optuna": ("optuna", "cmaes"),
            "scipy": ("scipy",)}


def _version(dist):
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return None


def _cpu():
    """The CPU's model name as the system reports it (None where it does not)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def provenance(solvers):
    """The versions, date and machine of a bench session running ``solvers`` (their
    labels): a JSON-able dict."""
    import dfrank

    versions = {"dfrank": dfrank.__version__, "python": platform.python_version(),
                "numpy": _version("numpy"), "numba": _version("numba")}
    for label in solvers:
        prefix = str(label).split(":", 1)[0]
        for dist in PACKAGES.get(prefix, ()):
            versions[dist] = _version(dist)
        module = sys.modules.get(prefix) if ":" in str(label) else None
        if prefix not in PACKAGES and getattr(module, "__version__", None):
            versions[prefix] = str(module.__version__)
    return {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "versions": versions,
            "machine": {"cpu": _cpu(), "cores": os.cpu_count(),
                        "platform": platform.platform()}}


def seeds_of(restarts=None, argument=None):
    """Each seed a run's solver received: per restart of dfrank's strategies, the
    SeedSequence its generator was made from and, for an adapter of another package, the
    seed that package was given; for a function ``fn(problem, seed)``, ``argument``."""
    if restarts is None:
        return [{"argument": argument}]
    out = []
    for r in restarts:
        got = {"restart": int(r.index), "seed_sequence": r.seed}
        if "seed" in (r.info or {}):
            got["package_seed"] = int(r.info["seed"])
        out.append(got)
    return out


def provenance_lines(sessions):
    """A line per session of a bench (its header's provenance, then each continuation's)."""
    lines = []
    for i, p in enumerate(sessions):
        if not p:
            lines.append(f"session {i + 1}: versions, date and machine not recorded (a bench "
                         "file of an older dfrank)")
            continue
        v, m = p.get("versions") or {}, p.get("machine") or {}
        lines.append(f"session {i + 1}: {p.get('date')}, "
                     + ", ".join(f"{k} {x}" for k, x in v.items() if x is not None)
                     + f"; {m.get('cpu')} ({m.get('cores')} cores), {m.get('platform')}")
    return lines


def seed_rows(runs):
    """Rows ``(solver, seed, what it received, runs)``: the runs of one solver and seed
    grouped by the seeds their solver received (the same on every problem, unless a
    solver draws them from the problem)."""
    groups = {}
    for r in runs:
        got = r.get("seeds_received")
        key = (r["solver"], r["seed"], _received(got))
        groups[key] = groups.get(key, 0) + 1
    return [(s, seed, got, n) for (s, seed, got), n in sorted(
        groups.items(), key=lambda kv: (str(kv[0][0]), kv[0][1], kv[0][2]))]


def _received(got):
    """The seeds a run's solver received, as text: ``SeedSequence(E).spawn(N)`` for the
    restarts' generators (children 0..N-1 of the run's seed), then each package's seed."""
    if not got:
        return "not recorded"
    if "argument" in got[0]:
        return f"fn(problem, {got[0]['argument']})"
    ss = [g.get("seed_sequence") or {} for g in got]
    entropy = {repr(s.get("entropy")) for s in ss}
    if len(entropy) == 1 and [s.get("spawn_key") for s in ss] == [[i] for i in range(len(ss))]:
        text = f"SeedSequence({entropy.pop()}).spawn({len(ss)})"
    else:
        text = "; ".join(f"SeedSequence({s.get('entropy')!r}, spawn_key="
                         f"{s.get('spawn_key')!r})" for s in ss)
    package = [str(g["package_seed"]) for g in got if "package_seed" in g]
    return text + (f" -> seed {', '.join(package)}" if package else "")
