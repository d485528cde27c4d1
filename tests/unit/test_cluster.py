"""Profiling jobs on a Dask cluster: a local cluster of 3 worker processes, each advertising one
``GPU`` resource, running event-mode profiles on the CPU through the real JobManager and engine."""

import json
import os
import signal
import time
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")

from kprof_mcp.cluster import ClusterError, ClusterRunner, check_address, connect, pack, unpack  # noqa: E402
from kprof_mcp.engine import Config, Engine, KprofError  # noqa: E402
from kprof_mcp.jobs import CANCELLED, DONE, FAILED, JobManager  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    os.environ["KPROF_FORCE_CPU"] = "1"
    cl = distributed.LocalCluster(
        n_workers=3, threads_per_worker=1, processes=True, resources={"GPU": 1}, dashboard_address=":0"
    )
    yield cl
    cl.close()


@pytest.fixture
def setup(cluster, tmp_path):
    cfg = Config.from_options(str(tmp_path), force_cpu=True)
    cfg.warm = False
    engine = Engine(cfg)
    connect(engine, cluster.scheduler_address)  # as the server does: its job queue runs engine.execute
    runner = engine.remote
    jobs = JobManager(engine.execute, slots=runner.slots())
    yield engine, runner, jobs
    jobs.shutdown()
    engine.close()


def _wait(job, s=240):
    assert job.done.wait(s), (job.status, job.message)
    return job


def test_jobs_spread_over_workers_one_at_a_time_each_and_come_back(setup, tmp_path):
    engine, runner, jobs = setup
    assert len(jobs.slots) == 3
    specs = [engine.check_profile("vector_add", "v0", {"n": 1024 * (i + 1)}, "event") for i in range(4)]
    js = [jobs.submit(s, f"job {i}") for i, s in enumerate(specs)]
    for j in js:
        _wait(j)
        assert j.status == DONE, j.error
        d = j.outcome.profile_dir
        assert (
            d.is_dir()
            and tmp_path in d.parents
            and (d / "result.json").is_file()
            and (d / "report.md").is_file()
        )
        assert j.outcome.result.profiler["cluster"]["worker"].startswith("tcp://")
    assert len({r["worker"] for r in runner.ran}) >= 2  # spread over the workers
    by_worker = {}
    for r in runner.ran:
        by_worker.setdefault(r["worker"], []).append((r["started"], r["finished"]))
    for spans in by_worker.values():  # never two at once on one worker (its one GPU resource)
        spans.sort()
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
    # The same result as a local run of the same request: same kernel, params, stages.
    local = engine.profile("vector_add", "v0", {"n": 1024}, "event")
    assert [s.name for s in local.result.stages] == [s.name for s in js[0].outcome.result.stages]
    assert local.result.params == js[0].outcome.result.params


def test_a_worker_engine_renders_nothing_and_the_server_renders_once(setup, tmp_path):
    """The worker's engine (render_profiles off) writes no contract or report; what the server
    brings back it renders once, against its own baseline and siblings."""
    cfg = Config.from_options(str(tmp_path / "worker"), force_cpu=True)
    cfg.warm, cfg.render_profiles = False, False
    worker = Engine(cfg)
    try:
        o = worker.profile("vector_add", "v0", {"n": 1024}, "event")
    finally:
        worker.close()
    assert o.contract == "" and o.assessment is None and (o.profile_dir / "result.json").is_file()
    assert not (o.profile_dir / "report.md").exists() and not (o.profile_dir / "contract.md").exists()
    engine, runner, jobs = setup
    j = _wait(jobs.submit(engine.check_profile("vector_add", "v0", {"n": 2048}, "event"), "one"))
    assert j.status == DONE, j.error
    contract = (j.outcome.profile_dir / "contract.md").read_text()
    assert contract == j.outcome.contract and contract.startswith("## Profile: vector_add v0")


def test_compare_and_sweep_run_on_the_cluster_too(setup, tmp_path):
    engine, runner, jobs = setup
    cmp_ = jobs.submit(
        engine.check_compare("vector_add", ["v0", "v1"], {"n": 4096}, budget_ms=150, rounds=4), "compare"
    )
    sw = jobs.submit(engine.check_sweep("vector_add", "n", [1024, 4096], ["v0"], None, budget_ms=60), "sweep")
    for j in (cmp_, sw):
        _wait(j)
        assert j.status == DONE, j.error
    c = cmp_.outcome
    assert (
        c.compare_dir.is_dir()
        and tmp_path in c.compare_dir.parents
        and (c.compare_dir / "compare.md").is_file()
    )
    assert str(tmp_path) in (c.compare_dir / "compare.json").read_text()  # paths rewritten to the server's
    assert [v.version for v in c.result.versions] == ["v0", "v1"] and c.result.comparisons
    s = sw.outcome
    assert s.sweep_dir.is_dir() and (s.sweep_dir / "sweep.csv").is_file() and s.png and len(s.rows) == 2


def test_cancelling_a_running_cluster_job_kills_it(setup):
    engine, runner, jobs = setup
    spec = engine.check_profile("vector_add", "v1", {"n": 1 << 20}, "event")
    job = jobs.submit(spec, "to cancel")
    t0 = time.monotonic()
    while job.status != "running" or job.progress < 0.25:  # timing: its .partial directory exists
        assert time.monotonic() - t0 < 120, job.message
        time.sleep(0.1)
    jobs.cancel(job.id, wait_s=60)
    _wait(job, 90)
    assert job.status == CANCELLED and "cancelled" in (job.error or "")

    def leftovers():
        from kprof_mcp.cluster import job as cl

        return [str(d) for e in cl._ENGINES.values() for d in e.config.out_root.rglob("*.partial")]

    assert not any(runner.client.run(leftovers).values())  # the worker keeps nothing of the cancelled run


def test_the_time_limit_holds_on_the_worker_and_kills_the_remote_process_tree(setup, tmp_path):
    """A one-file kernel package that hangs: the worker's engine enforces the job's time limit,
    as locally, and the job fails with the local message."""
    engine, runner, jobs = setup
    src = Path(__file__).resolve().parents[1] / "fixtures" / "user_kernels" / "scale.py"
    (tmp_path / "mykernels").mkdir()
    (tmp_path / "mykernels" / "scale_hang.py").write_text(
        src.read_text().replace('MODE = "ok"', 'MODE = "hang"')
    )
    spec = engine.check_profile("mykernels/scale_hang.py", None, {"n": 256}, "event", timeout_s=20)
    job = _wait(jobs.submit(spec, "hangs"), 180)
    assert job.status == FAILED
    assert "did not finish within 20 s; the kernel process tree was killed" in job.error, job.error


def test_a_worker_killed_mid_job_fails_or_reschedules_and_never_hangs(setup, cluster):
    engine, runner, jobs = setup
    spec = engine.check_profile("vector_add", "v1", {"n": 1 << 20}, "event")
    job = jobs.submit(spec, "worker dies")
    t0 = time.monotonic()
    while "started on Dask worker" not in job.message and job.progress < 0.02:
        assert time.monotonic() - t0 < 120, job.message
        time.sleep(0.1)
    addr = next(w for w, st in runner.client.processing().items() if st)
    pid = runner.client.run(os.getpid, workers=[addr])[addr]
    os.kill(pid, signal.SIGKILL)
    _wait(job, 300)
    assert job.status in (DONE, FAILED)
    if job.status == FAILED:
        assert "worker" in job.error.lower(), job.error
    else:  # rescheduled by Dask: the result says which worker was lost and where it ran again
        r = job.outcome.result
        assert r.profiler["cluster"]["rescheduled_after"] == [addr], r.profiler["cluster"]
        assert r.profiler["cluster"]["worker"] != addr
        assert any("rescheduled" in w.message and addr in w.message for w in r.warnings), r.warnings
        assert "rescheduled" in (job.outcome.profile_dir / "result.json").read_text()


def test_a_lost_worker_past_dasks_allowed_failures_fails_the_job_saying_so(tmp_path):
    import dask

    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cl = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, resources={"GPU": 1}, dashboard_address=":0"
        )
    cfg = Config.from_options(str(tmp_path), force_cpu=True)
    cfg.warm = False
    engine = Engine(cfg)
    runner = ClusterRunner(cl.scheduler_address, engine)
    jobs = JobManager(runner.run, slots=runner.slots())
    try:
        job = jobs.submit(engine.check_profile("vector_add", "v1", {"n": 1 << 20}, "event"), "worker dies")
        t0 = time.monotonic()
        while "started on Dask worker" not in job.message:
            assert time.monotonic() - t0 < 120, job.message
            time.sleep(0.1)
        addr = next(w for w, st in runner.client.processing().items() if st)
        os.kill(runner.client.run(os.getpid, workers=[addr])[addr], signal.SIGKILL)
        _wait(job, 120)
        assert job.status == FAILED, job.status
        assert "workers running this job died" in job.error and "allowed-failures" in job.error, job.error
    finally:
        jobs.shutdown()
        runner.close()
        cl.close()


def test_workers_that_join_after_the_server_started_add_slots(tmp_path):
    cl = distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, resources={"GPU": 1}, dashboard_address=":0"
    )
    cfg = Config.from_options(str(tmp_path), force_cpu=True)
    cfg.warm = False
    engine = Engine(cfg)
    connect(engine, cl.scheduler_address)
    jobs = JobManager(engine.execute, slots=engine.remote.slots(), more_slots=engine.remote.slots)
    try:
        assert len(jobs.slots) == 1
        cl.scale(3)
        engine.remote.client.wait_for_workers(3, timeout=120)
        js = [
            jobs.submit(engine.check_profile("vector_add", "v0", {"n": 1024}, "event"), f"j{i}")
            for i in range(3)
        ]
        assert len(jobs.slots) == 3
        for j in js:
            assert _wait(j).status == DONE, j.error
        assert len({r["worker"] for r in engine.remote.ran}) >= 2
    finally:
        jobs.shutdown()
        engine.close()
        cl.close()


def test_a_tls_cluster_runs_jobs_for_a_client_with_certificates_and_refuses_one_without(tmp_path):
    """Mutual TLS end to end on one host (Dask's temporary certificates): the scheduler and
    workers require it, the server's runner presents its certificate, a client without is refused."""
    from distributed.security import Security

    sec = Security.temporary()
    cl = distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=True,
        resources={"GPU": 1},
        dashboard_address=":0",
        protocol="tls://",
        security=sec,
    )
    try:
        assert cl.scheduler_address.startswith("tls://")
        cfg = Config.from_options(str(tmp_path), force_cpu=True)
        cfg.warm = False
        engine = Engine(cfg)
        with pytest.raises(KprofError, match="speaks TLS: give the certificates"):
            connect(engine, cl.scheduler_address)  # no certificate
        # A client whose certificate the cluster's CA did not sign is refused by the scheduler.
        other = Security.temporary()
        with pytest.raises(KprofError, match="cannot reach the Dask scheduler"):
            engine.remote = None
            connect(engine, cl.scheduler_address, other)
        connect(engine, cl.scheduler_address, sec)
        try:
            out = engine.profile("vector_add", "v0", {"n": 1024}, "event")
            assert out.result.profiler["cluster"]["worker"].startswith("tls://")
            assert tmp_path in out.profile_dir.parents
        finally:
            engine.close()
    finally:
        cl.close()


def test_kprof_worker_and_the_cli_speak_tls_with_certificate_files(tmp_path):
    """The command-line path of TLS: certificate files for `kprof worker` (passed to dask worker)
    and for `kprof --cluster tls://... --tls-ca/--tls-cert/--tls-key profile`."""
    import json
    import subprocess
    import sys

    from conftest import server_env
    from distributed.security import Security

    from kprof_mcp.cluster import security_from

    tmp = Security.temporary()  # one self-signed certificate: it is its own CA
    ca, cert, key = tmp_path / "ca.pem", tmp_path / "cert.pem", tmp_path / "key.pem"
    ca.write_text(tmp.tls_ca_file)
    cert.write_text(tmp.tls_client_cert)
    key.write_text(tmp.tls_client_key)
    sec = security_from(str(ca), str(cert), str(key))
    cl = distributed.LocalCluster(n_workers=0, dashboard_address=":0", protocol="tls://", security=sec)
    env = dict(server_env(), KPROF_FORCE_CPU="1")
    tls = ["--tls-ca", str(ca), "--tls-cert", str(cert), "--tls-key", str(key)]
    w = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kprof_mcp.cli",
            "worker",
            "--scheduler",
            cl.scheduler_address,
            "--gpus",
            "cpu",
            *tls,
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with distributed.Client(cl.scheduler_address, security=sec, set_as_default=False) as c:
            c.wait_for_workers(1, timeout=120)
            (info,) = c.scheduler_info()["workers"].values()
            assert info["resources"] == {"GPU": 1} and info["id"].startswith("kprof-")
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "kprof_mcp.cli",
                "--workspace",
                str(tmp_path),
                "--cluster",
                cl.scheduler_address,
                *tls,
                "profile",
                "vector_add",
                "--version",
                "v0",
                "--mode",
                "event",
                "--n",
                "1024",
                "--json",
                "--quiet",
            ],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
        )
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)  # --json: stdout is the one document
        assert out["result"]["profiler"]["cluster"]["worker"].startswith("tls://")
    finally:
        w.terminate()
        w.wait(30)
        cl.close()


def test_addresses_off_loopback_need_tls_and_packages_have_limits(tmp_path):
    check_address("tcp://127.0.0.1:8786", None)
    with pytest.raises(ClusterError, match="TLS"):
        check_address("tcp://10.1.2.3:8786", None)
    with pytest.raises(ClusterError, match="tcp://"):
        check_address("http://127.0.0.1:8786", None)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "big.bin").write_bytes(os.urandom(2 << 20))
    with pytest.raises(ClusterError, match="over the 1 MiB limit"):
        pack(tmp_path / "pkg", 1 << 20, "kernel package pkg")
    data = pack(tmp_path / "pkg", 8 << 20, "kernel package pkg")
    unpack(data, tmp_path / "out")
    assert (tmp_path / "out" / "pkg" / "big.bin").stat().st_size == 2 << 20


def test_an_unchanged_package_lands_at_the_same_path_on_a_worker_and_an_edited_one_does_not(
    tmp_path, monkeypatch
):
    import shutil

    from kprof_mcp.cluster import job as cl

    src = tmp_path / "src" / "mykernel"
    shutil.copytree(
        Path(__file__).resolve().parents[2] / "kernels" / "vector_add",
        src,
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    ws = tmp_path / "ws"
    first = cl._package_here(ws, pack(src, 1 << 20, "p"), "mykernel")
    (src / "__pycache__").mkdir(exist_ok=True)
    (src / "__pycache__" / "x.pyc").write_bytes(b"junk")  # not shipped, so not a change
    again = cl._package_here(ws, pack(src, 1 << 20, "p"), "mykernel")
    assert again == first and (first / "__init__.py").is_file()
    (src / "__init__.py").write_text((src / "__init__.py").read_text() + "\n# edited\n")
    edited = cl._package_here(ws, pack(src, 1 << 20, "p"), "mykernel")
    assert edited != first and "# edited" in (edited / "__init__.py").read_text()
    monkeypatch.setattr(cl, "KEEP_PACKAGES", 2)
    for i in range(3):
        (src / "extra.py").write_text(f"X = {i}\n")
        cl._package_here(ws, pack(src, 1 << 20, "p"), "mykernel")
    assert len([d for d in (ws / "pkgs").iterdir()]) == 2  # the least recently used went


def test_the_mcp_server_with_cluster_runs_profiles_on_the_workers(cluster, tmp_path):
    """The real server, started with --cluster, driven by the MCP SDK's client over stdio."""
    import sys

    import anyio
    from conftest import server_env
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kprof_mcp", "--workspace", str(tmp_path), "--cluster", cluster.scheduler_address],
        env=dict(server_env(), KPROF_FORCE_CPU="1"),
    )

    async def main():
        async with Client(params) as c:
            r = await c.call_tool(
                "profile_kernel",
                {
                    "kernel": "vector_add",
                    "version": "v0",
                    "params": {"n": 2048},
                    "mode": "event",
                    "wait_s": 55,
                },
            )
            if r.structured_content.get("status") != "done":
                r = await c.call_tool("get_profile", {"job_id": r.structured_content["job_id"], "wait_s": 55})
            assert not r.is_error, r.content[0].text
            assert r.content[0].text.startswith("## Profile: vector_add v0")
            d = Path(r.structured_content["profile_dir"])
            assert tmp_path in d.parents and (d / "result.json").is_file()
            assert "cluster" in (d / "result.json").read_text()
            bad = await c.call_tool("profile_command", {"command": ["python", "x.py"], "wait_s": 5})
            assert bad.is_error

    anyio.run(main)


def test_the_cli_and_the_python_api_run_on_the_cluster_too(cluster, tmp_path):
    import json
    import subprocess
    import sys

    from conftest import server_env

    env = dict(server_env(), KPROF_FORCE_CPU="1")
    base = [
        sys.executable,
        "-m",
        "kprof_mcp.cli",
        "--workspace",
        str(tmp_path),
        "--cluster",
        cluster.scheduler_address,
    ]
    r = subprocess.run(
        base
        + ["profile", "vector_add", "--version", "v0", "--mode", "event", "--n", "2048", "--json", "--quiet"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)  # --json: stdout is the one document
    assert out["result"]["profiler"]["cluster"]["worker"].startswith("tcp://")
    assert tmp_path in Path(out["profile_dir"]).parents and Path(out["profile_dir"], "report.md").is_file()
    bad = subprocess.run(
        base + ["run", "--", "python", "x.py"], capture_output=True, text=True, timeout=120, env=env
    )
    assert bad.returncode == 2 and "--cluster applies to profile, compare and sweep" in bad.stderr, bad.stderr
    # The Python API: cluster.connect(engine, address), then the engine's usual methods.
    cfg = Config.from_options(str(tmp_path / "api"), force_cpu=True)
    cfg.warm = False
    engine = Engine(cfg)
    connect(engine, cluster.scheduler_address)
    try:
        c = engine.compare("vector_add", ["v0", "v1"], {"n": 2048}, budget_ms=100, rounds=3)
        assert c.compare_dir.is_dir() and (tmp_path / "api") in c.compare_dir.parents
        assert [v.version for v in c.result.versions] == ["v0", "v1"]
    finally:
        engine.close()


def test_kprof_worker_starts_one_dask_worker_per_gpu_with_the_resource(cluster):
    import subprocess
    import sys

    from distributed import Client

    bad = subprocess.run(
        [sys.executable, "-m", "kprof_mcp.cli", "worker", "--scheduler", "tcp://10.0.0.1:8786"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "TLS" in bad.stderr
    with Client(cluster.scheduler_address, set_as_default=False) as c:
        before = len(c.scheduler_info()["workers"])
        p = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kprof_mcp.cli",
                "worker",
                "--scheduler",
                cluster.scheduler_address,
                "--gpus",
                "cpu,cpu",
                "--json",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            said = json.loads(p.stdout.readline())  # --json: one document once the workers are started
            assert said["scheduler"] == cluster.scheduler_address and [w["gpu"] for w in said["workers"]] == [
                "cpu",
                "cpu",
            ]
            t0 = time.monotonic()
            while len(c.scheduler_info()["workers"]) < before + 2:
                assert time.monotonic() - t0 < 90 and p.poll() is None
                time.sleep(0.5)
            new = [w for w in c.scheduler_info()["workers"].values() if "kprof-" in str(w.get("name"))]
            assert len(new) == 2 and all(w["resources"] == {"GPU": 1} for w in new)
            assert sorted(w["name"] for w in new) == sorted(w["name"] for w in said["workers"])
        finally:
            p.terminate()
            p.wait(30)
        assert p.stdout.read() == ""  # nothing else on stdout: the Dask workers' own output went to stderr
        t0 = time.monotonic()
        while len(c.scheduler_info()["workers"]) > before:
            assert time.monotonic() - t0 < 60
            time.sleep(0.5)


def test_requests_are_checked_on_the_worker_that_runs_them(cluster, tmp_path):
    """A cluster server does not check a request against its own machine (it may have no GPU while
    the workers do): the worker runs the mode's preflight, and its refusal reaches the job."""
    cfg = Config.from_options(str(tmp_path))
    cfg.warm, cfg.force_cpu, cfg.remote_gpus = False, False, True
    engine = Engine(cfg)
    spec = engine.check_profile("vector_add", "v0", {"n": 1024}, "annotation")  # no GPU here: not refused
    assert spec.req.ncu_path is None and not spec.cpu
    runner = ClusterRunner(cluster.scheduler_address, engine)
    jobs = JobManager(runner.run, slots=runner.slots())
    try:
        job = _wait(jobs.submit(spec, "annotation on a CPU worker"))
        assert job.status == FAILED
        assert "on Dask worker tcp://" in job.error and "Nsight Compute" in job.error, job.error
    finally:
        jobs.shutdown()
        runner.close()


def test_a_command_runs_on_the_cluster_in_its_shipped_working_directory(setup, tmp_path):
    """profile_command on a cluster: the command's working directory is packed and unpacked afresh on
    a worker, the command runs there (its ranges are the stages, a file it reads from its directory
    is found), the profile comes back under the server's out/, and the worker keeps nothing."""
    engine, runner, jobs = setup
    wd = tmp_path / "proj"
    wd.mkdir()
    (wd / "data.txt").write_text("3\n")
    (wd / "step.py").write_text(
        "import torch, kprof\n"
        "steps = int(open('data.txt').read())\n"
        "x = torch.ones(256)\n"
        "for _ in range(steps):\n"
        "    with kprof.range('work'):\n"
        "        x = (x * 1.0001).sin()\n"
        "print('ran', steps)\n"
    )
    j = jobs.submit(engine.check_command(["python", "step.py"], cwd="proj", mode="event"), "command")
    _wait(j)
    assert j.status == DONE, j.error
    o = j.outcome
    assert [s.name for s in o.result.stages] == ["work"] and o.result.stages[
        0
    ].timing.runs == 2  # 3 - 1 warm-up
    assert o.profile_dir.is_dir() and tmp_path in o.profile_dir.parents
    assert o.result.profiler["cluster"]["worker"].startswith("tcp://")
    assert (
        "ran 3" in o.result.command.get("output_tail", "")
        or "ran 3" in (o.profile_dir / "report.md").read_text()
    )
    # The working directory past the limit: refused with what to do.
    import kprof_mcp.cluster.runner as cl

    old = cl.MAX_COMMAND_DIR_BYTES
    cl.MAX_COMMAND_DIR_BYTES = 10
    try:
        j = jobs.submit(engine.check_command(["python", "step.py"], cwd="proj", mode="event"), "too big")
        _wait(j)
        assert j.status == FAILED and "working directory proj" in j.error and "without --cluster" in j.error
    finally:
        cl.MAX_COMMAND_DIR_BYTES = old
