"""Plain-text tables, the one layout every printed table of dfrank uses (CLI, comparison
summaries, examples, benchmarks): first column left-aligned, the others right-aligned,
a dashed rule under the headers; and counts of things as printed ("1 query", "2 queries")."""

__all__ = ["format_table", "counted"]


def counted(n, one, many):
    """``n`` and the noun in its number: ``counted(1, "query", "queries")`` is "1 query"."""
    return f"{n} {one if n == 1 else many}"


def format_table(rows, headers):
    """``rows`` (lists of cells, any type) under ``headers`` as one string."""
    cells = [[str(c) for c in r] for r in [headers, *rows]]
    widths = [max(len(r[j]) for r in cells) for j in range(len(headers))]

    def line(r):
        return "  ".join(c.rjust(w) if j else c.ljust(w)
                         for j, (c, w) in enumerate(zip(r, widths)))
    return "\n".join([line(cells[0]), "  ".join("-" * w for w in widths)]
                     + [line(r) for r in cells[1:]])
