"""The driver: ``maximize`` and the evaluation entry points (:mod:`.api`), a run's state and
observers (:mod:`.observers`), seeds and parallel restarts (:mod:`.parallel`), results and
linear rankers (:mod:`.result`), checkpoints (:mod:`.checkpoint`), the query-level
cross-validation (:mod:`.crossval`) and ready-made callbacks (:mod:`.callbacks`)."""
