"""The objectives strategies climb: a function of a point of a space, counted and budgeted
(:mod:`.objective`: linear rankers on data with the exact line search, a scorer of a few
parameters, any function), and the smoothed surrogates of rank metrics (:mod:`.surrogates`)."""
