"""Ranking data and what is derived from it: :class:`RankingData` (:mod:`.ranking`), its
binary cache (:mod:`.npy_cache`), the feature normalizations a model carries
(:mod:`.normalization`) and the bundled synthetic sets (:mod:`.datasets`)."""

from .ranking import RankingData, content_digest

__all__ = ["RankingData", "content_digest"]
