"""Random search: uniform points of the space (Dirichlet(1, ..., 1) on the simplex),
evaluated in batches. The baseline every strategy must beat."""

from dfrank.registry import Strategy, register_strategy

from dfrank.hyperparams import Int


@register_strategy("random", aliases=("random_search",))
class RandomSearch(Strategy):
    """Uniform random samples.

    Parameters
    ----------
    n_samples : int, default 2000
        Points evaluated (a budget given to ``maximize`` stops it earlier).
    batch_size : int, default 256
    restarts : int, default 1
    """

    hyperparameters = {"n_samples": Int(1), "batch_size": Int(1)}

    def __init__(self, *, n_samples=2000, batch_size=256, restarts=1):
        self.n_samples = n_samples
        self.batch_size = batch_size
        self.restarts = restarts

    def run(self, objective, rng, *, restart=0):
        self.check(objective)
        done = 0
        while done < self.n_samples:
            n = min(self.batch_size, self.n_samples - done)
            objective.batch(objective.space.sample(rng, n))
            done += n
        return {"samples": done}
