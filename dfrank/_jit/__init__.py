"""The compile lifecycle of dfrank's numba kernels, in one package: the argument types each
module of kernels declares (:mod:`.examples`), compiling them ahead on every core
(:mod:`.warm`: the install's build and ``dfrank warmup``), what the build ships
(:mod:`.build`, :mod:`.manifest`), where numba caches the kernels and how the shipped ones
get there (:mod:`.store`, whose :func:`~.store.njit` every kernel module uses), the
compiles in helper processes (:mod:`.helpers`, :mod:`.background`, :mod:`.ahead`), the
messages while compiling (:mod:`.progress`), and whether dfrank runs from an install or from
a source folder no install maps (:mod:`.layout`)."""
