"""Private kernels shared by the layers above: sorting (``sort``), per-thread scratch
buffers kept between calls (``scratch``) and the scoring of linear rankers (``scoring``)."""
