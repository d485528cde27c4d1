"""The diagnosis, computed once: per-stage bottleneck classification and opportunities
(:mod:`.diagnosis`), timeline questions (:mod:`.timeline`), and the :class:`.assessment.Assessment`
of a whole profile that every renderer reads. Pure functions of numbers: nothing here reads a
device, runs a program or formats units."""
