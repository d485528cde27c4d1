"""What a profiling child uses to capture a run, below both the modes and the child's entry points:
the timer (:mod:`.timer`), the capture context and plan runner (:mod:`.context`), stage recording
for commands and Kineto traces (:mod:`.recording`), the profile directory's artifacts
(:mod:`.artifacts`) and the correctness check (:mod:`.correctness`). Nothing here imports a mode
or the child."""
