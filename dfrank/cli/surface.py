"""``dfrank grid``: the metric over every grid point of the simplex of a few features
(Metzler's Figure 1)."""

import time

import numpy as np

from . import options as o

DESCRIPTION = ("Evaluate every grid point of the simplex of the chosen features (resolution "
               "K: points k/K) and report the best; with three features, --plot draws the "
               "surface over their non-negative weights as a ternary heat map.")
EPILOG = """\
example:
  dfrank grid Fold1/train.txt.gz --features 1,10,25 --resolution 50 --metric map \\
      --plot surface.png"""


def add_arguments(p):
    p.add_argument("train", help="LETOR/SVMlight file")
    p.add_argument("--features", required=True, help="comma-separated feature ids (1-based)")
    p.add_argument("--resolution", type=o.positive_int, default=30,
                   help="grid resolution K (default 30)")
    o.add_metric(p, "map", help="metric (default map)")
    p.add_argument("--max-points", type=o.positive_int, default=2_000_000,
                   help="refuse a grid larger than this (default 2,000,000)")
    o.add_reading(p, "TRAIN")
    p.add_argument("--plot", metavar="FILE", help="write the ternary surface (PNG) here")
    o.add_ties(p)
    o.add_quiet(p)


def run(args):
    from ..objectives.objective import LinearObjective
    from ..spaces import Simplex

    try:
        ids = [int(x) for x in args.features.split(",") if x.strip()]
    except ValueError:
        raise o.UsageError(f"--features expects comma-separated feature ids, got "
                           f"{args.features!r}") from None
    if len(ids) < 2 or len(set(ids)) != len(ids):
        raise o.UsageError("--features needs two or more distinct feature ids, e.g. 3,7,12")
    if args.plot and len(ids) != 3:
        raise o.UsageError("--plot draws the ternary surface of exactly three features")
    o.outputs_writable(args, "plot", inputs=[args.train, args.query_file])
    metric = o.metric_of(args)
    train = o.load(args.train, args).select_features(ids)
    obj = LinearObjective(train, metric, ties=args.ties)
    space = obj.space
    size = space.grid_size(args.resolution)
    if size > args.max_points:
        raise o.UsageError(f"resolution {args.resolution} over {len(ids)} features makes "
                           f"{size:,} grid points (more than --max-points "
                           f"{args.max_points:,})")
    clock = o.prepare(args, metric, None, args.ties)
    from tqdm.auto import tqdm

    pts, vals = [], []
    bar = tqdm(total=size, unit="pt", disable=not o.show_progress(args), leave=False)
    t0 = time.perf_counter()
    for chunk in space.grid(args.resolution, chunk_size=4096):
        pts.append(chunk)
        vals.append(obj.batch(chunk))
        bar.update(len(chunk))
    bar.close()
    pts = np.vstack(pts)
    vals = np.concatenate(vals)
    secs = time.perf_counter() - t0
    i = int(np.argmax(vals))
    w = Simplex(len(ids)).to_weights(pts[i])
    print(f"grid of {size:,} points (resolution {args.resolution}) over features "
          f"{ids} in {o.time_text(secs)}")
    compiled = clock.line()
    if compiled:
        print(compiled)
    print(f"best {obj.metric.name} = {vals[i]:.4f} at weights "
          + ", ".join(f"f{f}: {x:+.3f}" for f, x in zip(ids, w)))
    face = np.isclose(pts[:, -1], 0.0)  # non-negative weights: Metzler's Figure 1
    if len(ids) == 3:
        j = np.flatnonzero(face)[np.argmax(vals[face])]
        print(f"best with non-negative weights = {vals[j]:.4f} at "
              + ", ".join(f"f{f}: {x:.3f}" for f, x in zip(ids, pts[j, :3])))
    if args.plot:
        from ..plot import ternary_surface

        j = np.flatnonzero(face)[np.argmax(vals[face])]
        out = o.Outputs()

        def draw(path):
            ternary_surface(pts[face, :3], vals[face], path=path,
                            labels=[f"feature {f}" for f in ids], best=pts[j, :3],
                            title=f"{obj.metric.name} (non-negative weights)")

        if out.write(args.plot, draw, "plot", ".png"):
            print(f"surface written to {args.plot}")
        out.done()
    return 0
