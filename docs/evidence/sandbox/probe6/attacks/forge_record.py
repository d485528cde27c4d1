# P6-7: the job's own record (its --result file in the jobs directory, which the child writes at its end)
# replaced by a well-formed error record whose "detail" is no object: runner builds
# WorkerError(kind, message, dict(record.get("detail") or {}, log=...)) -> TypeError.
import json, pathlib
_orig = pathlib.Path.write_text


def _forge(self, data, *a, **kw):
    if self.name == "result.json" and "kprof-kernels-" in str(self):
        pathlib.Path.write_text = _orig
        data = json.dumps({"status": "error", "kind": "crash", "message": "forged", "detail": 5})
    return _orig(self, data, *a, **kw)


pathlib.Path.write_text = _forge
print("record forger installed", file=log, flush=True)
