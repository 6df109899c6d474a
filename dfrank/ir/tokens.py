"""Tokenization: lower-case alphanumeric tokens, English stopwords and one-letter tokens
dropped, a light plural stemmer."""

import re

__all__ = ["tokenize", "STOPWORDS"]

STOPWORDS = frozenset("""a about above after again against all am an and any are as at be
because been before being below between both but by can could did do does doing down during
each few for from further had has have having he her here hers herself him himself his how i
if in into is it its itself just me more most my myself no nor not now of off on once only or
other our ours ourselves out over own same she should so some such than that the their theirs
them themselves then there these they this those through to too under until up very was we
were what when where which while who whom why will with would you your yours yourself
yourselves also may must shall upon""".split())
_TOKEN = re.compile(r"[a-z0-9]+")


def tokenize(text):
    """Tokens of ``text``: plurals reduced (-ies -> -y; a final -s dropped unless the word
    ends in -ss, -us or -is)."""
    out = []
    for t in _TOKEN.findall(text.lower()):
        if len(t) < 2 or t in STOPWORDS:
            continue
        if len(t) > 4 and t.endswith("ies"):
            t = t[:-3] + "y"
        elif len(t) > 3 and t.endswith("s") and not t.endswith(("ss", "us", "is")):
            t = t[:-1]
        out.append(t)
    return out
