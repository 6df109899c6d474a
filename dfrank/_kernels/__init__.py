"""Private kernels shared by the layers above: sorting (``sort``), per-thread scratch
buffers kept between calls (``scratch``), the scoring of linear rankers (``scoring``), and
numba's threads: how many a section runs on (``chunks``) and their defaults, chosen before
numba's pool starts (``threads``)."""
