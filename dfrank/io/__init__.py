"""Readers and writers of ranking data files."""

from ..data import RankingData
from .svmlight import load_svmlight, read_query_file, save_svmlight
from .trec import Qrels, Run, load_qrels, load_run, write_run

__all__ = ["load_svmlight", "save_svmlight", "load_data", "save_data", "read_query_file",
           "load_qrels", "load_run", "write_run", "Qrels", "Run"]


def save_data(data, path):
    """``data.save(path)``: RankingData's binary cache (see :meth:`RankingData.save`)."""
    return data.save(path)


def load_data(path, mmap=True):
    """``RankingData.load(path, mmap)``: read a binary cache written by :func:`save_data`."""
    return RankingData.load(path, mmap=mmap)
