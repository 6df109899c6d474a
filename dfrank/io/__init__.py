"""Readers and writers of ranking data files."""

from .svmlight import load_svmlight, read_query_file
from .trec import Qrels, Run, load_qrels, load_run, write_run

__all__ = ["load_svmlight", "read_query_file", "load_qrels", "load_run", "write_run",
           "Qrels", "Run"]
