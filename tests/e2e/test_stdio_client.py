"""The real server over stdio, driven by the MCP SDK's own client."""

import json
import shutil
import subprocess
import sys

import anyio
import pytest
from conftest import server_env
from mcp import Client, StdioServerParameters


def _server(workspace, *flags):
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "kprof_mcp.server", "--workspace", str(workspace), *flags],
        env=server_env(),
    )


def test_full_agent_workflow_over_stdio(workspace):
    async def main():
        async with Client(_server(workspace)) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert set(tools) == {
                "list_kernels",
                "profile_kernel",
                "read_params",
                "classify_bottleneck",
                "update_devlog",
                "device_info",
                "get_profile",
                "cancel_profile",
                "compare_versions",
                "sweep",
                "measure_noise",
            }  # profile_command: --allow-commands
            for t in tools.values():
                assert t.description and len(t.description) > 80, t.name
                a = t.annotations
                assert None not in (
                    a.read_only_hint,
                    a.destructive_hint,
                    a.idempotent_hint,
                    a.open_world_hint,
                )
            assert tools["profile_kernel"].output_schema["properties"]["profile_dir"]
            assert "description" in tools["profile_kernel"].input_schema["properties"]["params"]

            lk = await c.call_tool("list_kernels", {})
            names = [k["name"] for k in lk.structured_content["kernels"]]
            assert {"vector_add", "matmul"} <= set(names)

            progress = []

            async def on_progress(p, total, msg):
                progress.append((p, msg))

            r1 = await c.call_tool(
                "profile_kernel",
                {"kernel": "vector_add", "version": "v0", "params": {"n": 4096}, "mode": "event"},
                progress_callback=on_progress,
            )
            assert not r1.is_error, r1.content[0].text
            text = r1.content[0].text
            assert text.startswith("## Profile: vector_add v0\n")  # the contract itself, not JSON
            with pytest.raises(json.JSONDecodeError):
                json.loads(text)
            s1 = r1.structured_content
            assert s1["device_kind"] == "cpu" and s1["stages"][0]["name"] == "add"
            assert progress and progress[-1][0] >= 0.9

            rp = await c.call_tool("read_params", {"profile_dir": s1["profile_dir"]})
            assert rp.structured_content["params"]["n"] == 4096

            r2 = await c.call_tool(
                "profile_kernel",
                {
                    "kernel": "vector_add",
                    "version": "v1",
                    "params": {"n": 4096},
                    "mode": "event",
                    "baseline": s1["profile_dir"],
                },
            )
            assert not r2.is_error, r2.content[0].text
            assert "| Duration (us) |" in r2.content[0].text.split("### vs Baseline")[1]

            dl = await c.call_tool(
                "update_devlog",
                {
                    "kernel": "vector_add",
                    "profile_dir": r2.structured_content["profile_dir"],
                    "issues": ["none"],
                    "insights": ["v1 autotunes the block size"],
                },
            )
            assert not dl.is_error
            assert (workspace / "docs/kernels/vector_add.md").read_text().count("**Performance**") == 1

            cb = await c.call_tool("classify_bottleneck", {"tc_pct": 0, "dram_pct": 20, "compute_pct": 85})
            assert cb.structured_content["bottleneck"] == "Compute-bound"
            assert cb.structured_content["compute_source"] == "compute_pct"

            di = await c.call_tool("device_info", {})
            assert di.structured_content["info"]["modes"]["event"]["built"] is True

    anyio.run(main)


def test_bad_input_gets_tool_errors_and_the_server_keeps_answering(workspace, tmp_path):
    async def main():
        async with Client(_server(workspace)) as c:
            bad = [
                (
                    "profile_kernel",
                    {"kernel": "nope"},
                    "valid names: ['matmul', 'mla_decode', 'softmax', 'tiny_chain', 'two_streams', 'vector_add']",
                ),
                ("profile_kernel", {"kernel": "vector_add", "version": "v7"}, "valid: ['v0', 'v1']"),
                ("profile_kernel", {"kernel": "vector_add", "mode": "warp"}, "unknown mode 'warp'"),
                ("profile_kernel", {"kernel": "vector_add", "params": {"n": 0}}, "below its minimum 1"),
                (
                    "profile_kernel",
                    {"kernel": "vector_add", "params": {"n": 1 << 32}, "mode": "event"},
                    "choose smaller sizes",
                ),
                ("profile_kernel", {"kernel": "../../../etc"}, "outside the allowed roots"),
                ("read_params", {"profile_dir": "/etc"}, "outside the workspace"),
                ("read_params", {"profile_dir": "../.."}, "outside the workspace"),
                ("update_devlog", {"kernel": "../x", "profile_dir": "out"}, "must be a plain name"),
                ("classify_bottleneck", {"tc_pct": -3, "dram_pct": 5}, "outside 0..100"),
            ]
            if not shutil.which("nvidia-smi"):
                # The default mode reads GPU counters: without a GPU the error says what works instead.
                bad.append(("profile_kernel", {"kernel": "vector_add"}, "mode='event' works without a GPU"))
            for tool, args, needle in bad:
                r = await c.call_tool(tool, args)
                assert r.is_error, (tool, args)
                assert needle in r.content[0].text, (needle, r.content[0].text)
            ok = await c.call_tool("classify_bottleneck", {"tc_pct": 80, "dram_pct": 10})
            assert not ok.is_error and ok.structured_content["bottleneck"] == "Compute-bound"
            # A streaming kernel: low L2 hit, but DRAM bytes match the model -> no locality advice.
            st = await c.call_tool(
                "classify_bottleneck",
                {
                    "tc_pct": 0,
                    "compute_pct": 6,
                    "dram_pct": 87,
                    "l2_hit_pct": 35,
                    "dram_bytes_over_model": 0.91,
                },
            )
            names = [o["name"] for o in st.structured_content["opportunities"]]
            assert st.structured_content["bottleneck"] == "Memory-bound" and not any("L2" in n for n in names)

    anyio.run(main)


def test_server_start_imports_neither_torch_nor_triton():
    code = (
        "import sys, kprof_mcp.server as s; s.build_server(); "
        "bad = [m for m in ('torch', 'triton', 'pandas') if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)"
    )
    cp = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert cp.returncode == 0, cp.stdout + cp.stderr


def test_compare_versions_over_stdio(workspace):
    async def main():
        async with Client(_server(workspace)) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert tools["compare_versions"].output_schema["properties"]["comparisons"]
            args = {
                "kernel": "vector_add",
                "versions": ["v0", "v1"],
                "params": {"n": 4096},
                "budget_ms": 300,
                "rounds": 3,
            }
            r = await c.call_tool("compare_versions", args)
            assert not r.is_error, r.content[0].text
            assert r.content[0].text.startswith("## Compare: vector_add v0 vs v1")
            s = r.structured_content
            (cmp_,) = s["comparisons"]
            assert s["status"] == "done" and cmp_["baseline"] == "v0" and cmp_["version"] == "v1"
            assert (
                cmp_["ci_low"] <= cmp_["speedup"] <= cmp_["ci_high"] and cmp_["sentence"] in r.content[0].text
            )
            assert [v["version"] for v in s["versions"]] == ["v0", "v1"] and s["rounds"] >= 3
            # Asked to answer at once: a job id, and get_profile brings the verdict later.
            q = await c.call_tool("compare_versions", {**args, "wait_s": 0})
            assert not q.is_error and q.structured_content["job_id"], q.content[0].text
            if q.structured_content["status"] != "done":
                g = await c.call_tool("get_profile", {"job_id": q.structured_content["job_id"], "wait_s": 50})
                assert not g.is_error, g.content[0].text
                assert g.content[0].text.startswith("## Compare: vector_add v0 vs v1")
                assert g.structured_content["profile_dir"] and "v1" in g.structured_content["message"]
            bad = await c.call_tool("compare_versions", {"kernel": "vector_add", "versions": ["v0", "v7"]})
            assert bad.is_error and "valid" in bad.content[0].text
            # One version at two parameter sets.
            ps = await c.call_tool(
                "compare_versions",
                {
                    "kernel": "vector_add",
                    "versions": ["v1"],
                    "budget_ms": 200,
                    "rounds": 3,
                    "param_sets": [{"n": 4096}, {"n": 8192}],
                },
            )
            assert not ps.is_error, ps.content[0].text
            assert [v["version"] for v in ps.structured_content["versions"]] == ["v1 [n=4096]", "v1 [n=8192]"]

    anyio.run(main)


def test_measure_noise_over_stdio(workspace, tmp_path):
    """measure_noise through the SDK's client: A/A profiles (interpreter timing here), the series
    in the structured part, stored in the cache the server was given; bad input is a tool error;
    wait_s=0 gives a job that get_profile finishes."""
    env = {**server_env(), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "kprof_mcp.server", "--workspace", str(workspace)], env=env
    )

    async def main():
        async with Client(params) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert tools["measure_noise"].output_schema["properties"]["series"]
            case = {"kernel": "vector_add", "version": "v1", "params": {"n": 4096}}
            r = await c.call_tool("measure_noise", {"cases": [case], "rounds": 2, "wait_s": 55})
            assert not r.is_error, r.content[0].text
            if r.structured_content["status"] != "done":
                r = await c.call_tool("get_profile", {"job_id": r.structured_content["job_id"], "wait_s": 50})
                assert not r.is_error and r.structured_content["status"] == "done", r.content[0].text
            else:
                (series,) = r.structured_content["series"]
                assert series["profiles"] == 2 and len(series["times_us"]) == 2 and series["median_us"] > 0
                assert r.structured_content["stored"].startswith(str(tmp_path / "cache"))
            assert (
                "| vector_add v1 {'n': 4096} |" in r.content[0].text
                and "compare_versions" in r.content[0].text
            )
            assert list((tmp_path / "cache" / "kprof-mcp" / "noise").glob("*.json"))
            for bad, want in [
                ({"rounds": 1}, "rounds"),
                ({"cases": [{**case, "version": "v9"}]}, "v9"),
                ({"clock_control": "turbo"}, "clock_control"),
            ]:
                e = await c.call_tool("measure_noise", {**bad, "wait_s": 0})
                assert e.is_error and want in e.content[0].text, (bad, e.content[0].text)
            q = await c.call_tool("measure_noise", {"cases": [case], "rounds": 2, "wait_s": 0})
            assert not q.is_error and q.structured_content["job_id"]
            g = await c.call_tool("get_profile", {"job_id": q.structured_content["job_id"], "wait_s": 50})
            assert not g.is_error and "noise floor stored in" in g.structured_content["message"], g.content[
                0
            ].text

    anyio.run(main)


def test_launcher_starts_warm_workers_and_each_profile_has_one_of_its_own(workspace):
    """``python -m kprof_mcp`` (the ``kprof-mcp`` entry point) starts the warm workers before the
    server's imports; each profile runs in a worker started ahead of it and ended with its job (one job
    per confined worker, issue 38's fifth probe), the next one warming meanwhile, listed by device_info."""
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "kprof_mcp", "--workspace", str(workspace)], env=server_env()
    )

    async def main():
        async with Client(server) as c:
            args = {"kernel": "vector_add", "version": "v0", "params": {"n": 4096}, "mode": "event"}
            for _ in range(2):
                r = await c.call_tool("profile_kernel", args)
                assert not r.is_error and r.structured_content["profile_dir"], r.content[0].text[:500]
            info = (await c.call_tool("device_info", {})).structured_content["info"]["warm_workers"]
            gpu = [w for w in info["workers"] if w["key"] != "describe"]
            assert len(gpu) == 1 and gpu[0]["served"] == 0 and gpu[0]["alive"]  # the next job's, warming
            ran = [r for r in info["retired"] if r["key"] != "describe"]
            assert len(ran) == 2 and all(r["served"] == 1 and "one job" in r["why"] for r in ran)
            for _ in range(300):  # it gets warm (the first two did: their jobs ran in them)
                info = (await c.call_tool("device_info", {})).structured_content["info"]["warm_workers"]
                (w,) = [w for w in info["workers"] if w["key"] != "describe"]
                if w["ready"]:
                    break
                await anyio.sleep(0.2)
            assert w["ready"] and "import_torch" in w["steps_s"]
            (desc,) = [w for w in info["workers"] if w["key"] == "describe"]
            assert "import_torch" not in desc["steps_s"]  # describing a package needs no torch

    anyio.run(main)


def test_profile_command_over_stdio(workspace):
    """A user's script with kprof.range regions, profiled by the real server (CPU: Kineto ranges)."""
    script = workspace / "step.py"
    script.write_text(
        "import torch, kprof\n"
        "x = torch.randn(256, 256)\n"
        "for _ in range(4):\n"
        "    with kprof.range('mm'):\n"
        "        y = x @ x\n"
        "    with kprof.range('act'):\n"
        "        z = torch.relu(y)\n"
        "print('done', float(z.sum()) > 0)\n"
    )

    async def main():
        async with Client(_server(workspace, "--allow-commands")) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            a = tools["profile_command"].annotations
            assert a.destructive_hint and a.open_world_hint and not a.read_only_hint
            assert tools["profile_command"].description.startswith("EXECUTES CODE")
            r = await c.call_tool(
                "profile_command", {"command": ["python", "step.py"], "mode": "event", "wait_s": 55}
            )
            assert not r.is_error, r.content[0].text
            assert "| mm |" in r.content[0].text and "| act |" in r.content[0].text
            report = (workspace / r.structured_content["profile_dir"] / "report.md").read_text()
            assert "## Command" in report and "done True" in report
            for args, needle in [
                ({"command": "python step.py"}, "list"),
                ({"command": ["bash", "-c", "ls"]}, "must start with python"),
                ({"command": ["python", "/etc/passwd"]}, "outside the workspace"),
                ({"command": ["python", "step.py"], "include": ["nothing*"]}, "no range matched"),
            ]:
                bad = await c.call_tool("profile_command", dict(args, wait_s=55))
                assert bad.is_error and needle in bad.content[0].text, (needle, bad.content[0].text)

    anyio.run(main)
