"""The compile lifecycle of dfrank's numba kernels, in one package: what the build compiles
and ships (:mod:`.build`, :mod:`.manifest`), where numba caches the kernels and how the
shipped ones get there (:mod:`.store`, whose :func:`~.store.njit` every kernel module
uses), the helper processes (:mod:`.helpers`), and the messages while compiling
(:mod:`.progress`)."""
