"""Planning an evaluation: power, minimum detectable differences and design search.

:mod:`.power` holds the closed form, :mod:`.simulate` the simulation through
the resampling engine, :mod:`.estimate` the components estimated from
replicated scores, and :mod:`.plan` the analysis that combines them.
"""
