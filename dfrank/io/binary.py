"""RankingData's binary cache as functions beside the text readers: :func:`save_data` and
:func:`load_data` (see :meth:`dfrank.data.ranking.RankingData.save`)."""

from ..data.ranking import RankingData

__all__ = ["save_data", "load_data"]


def save_data(data, path):
    """``data.save(path)``: RankingData's binary cache (see :meth:`RankingData.save`)."""
    return data.save(path)


def load_data(path, mmap=True):
    """``RankingData.load(path, mmap)``: read a binary cache written by :func:`save_data`."""
    return RankingData.load(path, mmap=mmap)
