"""Readers and writers of ranking data files."""

from .binary import load_data, save_data
from .svmlight import load_svmlight, read_query_file, save_svmlight
from .trec import Qrels, Run, load_qrels, load_run, write_run

__all__ = ["load_svmlight", "save_svmlight", "load_data", "save_data", "read_query_file",
           "load_qrels", "load_run", "write_run", "Qrels", "Run"]
