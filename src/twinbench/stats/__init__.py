"""Statistics: cluster bootstrap intervals, paired sign-flip tests, Holm correction.

Every function takes an explicit `numpy.random.Generator` (never the global RNG), and every
result states its method, resample count and seed so an output can say how it was made.
"""
