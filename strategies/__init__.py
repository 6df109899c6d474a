"""Built-in strategies, installed as ``dfrank.strategies``."""
