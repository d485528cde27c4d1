# ruff: noqa: F821
"""Control for holdlife: the job only sleeps (no lifeline reopened)."""

import time

print("CHECK sleeponly: INFO", file=log, flush=True)
time.sleep(40)
