"""Readers and writers of ranking data files."""

from .svmlight import load_svmlight, read_query_file

__all__ = ["load_svmlight", "read_query_file"]
