"""Every failed tool call answers with a reason, and a bounded one (the server's last-resort net,
in process: the real SDK server and client, no subprocess). Bad inputs are meant to be refused
where they are checked, with a KprofError; these tests plant the failures that would otherwise
reach the caller as the SDK's bare "Error executing tool <name>"."""

import anyio
import pytest
from mcp import Client

from kprof_mcp.engine import Config, Engine, KprofError
from kprof_mcp.kernel.api import Param, ParamError
from kprof_mcp.server import MAX_ERROR_CHARS, build_server


@pytest.fixture
def server(tmp_path):
    (tmp_path / "ok.py").write_text("x = 1\n")
    return build_server(Config(workspace=tmp_path, force_cpu=True, warm=False), allow_commands=True)


def _call(server, tool, args):
    async def main():
        async with Client(server) as c:
            return await c.call_tool(tool, args)

    r = anyio.run(main)
    return r.is_error, (r.content[0].text if r.content else "")


def test_an_unexpected_exception_answers_its_type_and_message(server, monkeypatch, caplog):
    def crash(*a, **k):
        raise RuntimeError("planted " + "x" * 1000)

    monkeypatch.setattr(Engine, "classify", staticmethod(crash))
    is_error, text = _call(server, "classify_bottleneck", {"tc_pct": 70, "dram_pct": 10})
    assert is_error and "internal error in classify_bottleneck: RuntimeError: planted xxx" in text, text
    assert len(text) < 600  # the exception's message clipped to 300 characters
    assert any(
        "internal error in tool classify_bottleneck" in r.message and r.exc_info for r in caplog.records
    )


def test_an_os_error_is_named_without_its_file_name(server, monkeypatch):
    def crash(*a, **k):
        raise OSError(36, "File name too long", "/somewhere/outside/" + "a" * 300)

    monkeypatch.setattr(Engine, "classify", staticmethod(crash))
    is_error, text = _call(server, "classify_bottleneck", {"tc_pct": 70, "dram_pct": 10})
    assert is_error and "OSError: File name too long" in text and "/somewhere" not in text, text


def test_a_kprof_error_that_escapes_a_tool_keeps_its_message(server, monkeypatch):
    def refuse(*a, **k):
        raise KprofError("the reason, written for the caller")

    monkeypatch.setattr(Engine, "device_info", refuse)  # device_info has no except clause of its own
    is_error, text = _call(server, "device_info", {})
    assert is_error and text.endswith("the reason, written for the caller") and "internal" not in text, text


@pytest.mark.parametrize(
    "tool, args",
    [
        (
            "update_devlog",
            {"kernel": "k", "profile_dir": "p", "issues": list(range(10_000))},
        ),  # the SDK's 10,000 errors
        ("no_such_tool_" + "x" * 10_000, {}),  # "Unknown tool: <name>"
        ("get_profile", {"job_id": "j" * 100_000}),
    ],
)
def test_error_text_is_bounded_whatever_the_input(server, tool, args):
    is_error, text = _call(server, tool, args)
    assert is_error and 0 < len(text) <= MAX_ERROR_CHARS, (len(text), text[:200])


LONG = "a" * 300  # one path component over the file system's 255 bytes (ENAMETOOLONG)


@pytest.mark.parametrize(
    "tool, args",
    [
        ("profile_kernel", {"kernel": LONG, "wait_s": 0}),
        ("profile_kernel", {"kernel": "vector_add", "baseline": LONG, "wait_s": 0}),
        ("compare_versions", {"kernel": LONG, "versions": ["v0", "v1"], "wait_s": 0}),
        ("sweep", {"kernel": LONG, "param": "n", "values": [1], "wait_s": 0}),
        ("read_params", {"profile_dir": LONG}),
        ("update_devlog", {"kernel": "vector_add", "profile_dir": f"{LONG}/x"}),
        ("profile_command", {"command": ["python", LONG], "wait_s": 0}),
        ("profile_command", {"command": ["python", "ok.py"], "cwd": LONG, "wait_s": 0}),
        ("profile_command", {"command": ["python", "-m", LONG], "wait_s": 0}),
        ("profile_command", {"command": ["python", "-m", "pytest", f"{LONG}/test_x.py"], "wait_s": 0}),
    ],
)
def test_a_path_component_over_255_bytes_is_refused_in_words(server, tool, args):
    is_error, text = _call(server, tool, args)
    assert is_error and "longer than the file system allows" in text and len(text) < 1000, text


@pytest.mark.parametrize(
    "value, needle",
    [
        ("9" * 5000, "an integer of 5000 digits is too long (valid: [1, 100])"),  # past int max-str-digits
        ("x" * 5000, "must be an integer (valid: [1, 100])"),
        (10**300, "is above its maximum 100"),
    ],
)
def test_param_errors_quote_at_most_200_characters(value, needle):
    with pytest.raises(ParamError) as e:
        Param("n", 1, min=1, max=100).validate(value)
    assert needle in str(e.value) and len(str(e.value)) < 300, str(e.value)


@pytest.mark.parametrize(
    "tool, args, needles",
    [
        (
            "profile_command",
            {"command": "python ok.py"},
            ['command should be a list (e.g. ["python", "train.py"] for a command) (got \'python ok.py\')'],
        ),
        (
            "compare_versions",
            {"kernel": "vector_add", "versions": ["v0", "v1"], "budget_ms": 50, "rounds": 2},
            ["budget_ms should be greater than or equal to", "(got 50)", "rounds should be greater"],
        ),
        ("read_params", {}, ["profile_dir is required"]),
        ("classify_bottleneck", {"tc_pct": "lots"}, ["tc_pct should be a valid number", "(got 'lots')"]),
    ],
)
def test_arguments_that_do_not_fit_the_schema_are_answered_in_the_projects_words(server, tool, args, needles):
    """Issue 41: the SDK's argument check answered pydantic's dump with a link to errors.pydantic.dev."""
    is_error, text = _call(server, tool, args)
    assert is_error and text.startswith(f"{tool}: invalid arguments: "), text
    assert (
        "pydantic" not in text
        and "http" not in text
        and text.endswith("gives each argument's type and range.")
    )
    for n in needles:
        assert n in text, text
