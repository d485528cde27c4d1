"""Each mode's options model, the request's discriminated union of them, and the request's flat
form (what result.json's ``request``, the child's and a cluster worker's request file hold)."""

import json

import pytest
from pydantic import ValidationError

from kprof_mcp.models import (
    OPTIONS_BY_MODE,
    EventOptions,
    NsightOptions,
    NsysOptions,
    ProfileRequest,
    validation_message,
)
from kprof_mcp.models.request import FLAT_ORDER
from kprof_mcp.modes import MODES

BASE = dict(kernel="k", kernel_source="/k", version="v0", params={}, out_root="/o")


def test_every_mode_names_the_options_model_that_serves_it():
    assert set(OPTIONS_BY_MODE) == set(MODES)
    for name, mode in MODES.items():
        assert OPTIONS_BY_MODE[name] is mode.options_model and mode.profilers


@pytest.mark.parametrize(
    "flat, options",
    [
        ({}, EventOptions()),
        (
            {"mode": "ncu", "ncu_launches": 3, "ncu_path": "/n"},
            NsightOptions(mode="ncu", ncu_launches=3, ncu_path="/n"),
        ),
        (
            {"mode": "nsys", "timeline_iters": 2, "timeline_engine": "kineto"},
            NsysOptions(timeline_iters=2, timeline_engine="kineto"),
        ),
    ],
)
def test_the_flat_form_and_the_nested_one_are_one_request_and_round_trip(flat, options):
    a = ProfileRequest(**BASE, **flat)
    b = ProfileRequest(**BASE, options=options)
    assert a == b and a.mode == options.mode
    text = a.model_dump_json()
    assert list(json.loads(text)) == list(FLAT_ORDER)  # every mode's options, in the old order
    assert ProfileRequest.model_validate_json(text) == a
    assert ProfileRequest(**a.model_dump()) == a


def test_another_modes_options_are_checked_then_left_out():
    r = ProfileRequest(**BASE, mode="event", ncu_launches=3, timeline_iters=7)
    assert r.options == EventOptions() and r.model_dump()["ncu_launches"] == 1 and r.ncu_launches == 1
    assert ProfileRequest(**BASE, mode="ncu", ncu_path="/n").ncu_path == "/n"  # the flat form, read
    with pytest.raises(AttributeError):
        getattr(r, "no_such_field")  # noqa: B009
    with pytest.raises(ValidationError) as e:
        ProfileRequest(**BASE, mode="event", ncu_launches=0)
    assert validation_message(e.value) == "ncu_launches=0: give an integer from 1 to 20"


def test_with_options_adds_what_a_preflight_found_and_checks_it():
    r = ProfileRequest(**BASE, mode="nsys")
    assert r.with_options() is r
    assert r.with_options(nsys_path="/x").options.nsys_path == "/x"
    with pytest.raises(ValueError, match="timeline_iters=0"):
        r.with_options(timeline_iters=0)


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"mode": "nsys", "timeline_iters": True}, "timeline_iters=True: give an integer from 1 to 50"),
        ({"mode": "annotation", "max_kernels": 2.0}, "max_kernels=2.0: give an integer from 1 to 5000"),
        ({"mode": "nsys", "timeline_engine": "x"}, "timeline_engine='x': 'auto' (Nsight Systems when"),
        (
            {"mode": "nsys", "timeline_engine": "x", "command": ["python", "a.py"]},
            "timeline_engine='x': 'auto', 'nsys' or 'kineto'",
        ),
        ({"clock_control": "turbo"}, "clock_control='turbo': 'base' (default: the SM clock locked"),
        (
            {"clock_control": "turbo", "command": ["python", "a.py"]},
            "clock_control='turbo': 'base' or 'none'",
        ),
        ({"warmup_occurrences": -1}, "warmup_occurrences=-1: an integer from 0 to 100"),
        ({"options": {"mode": "ncu", "ncu_launches": 21}}, "ncu_launches=21: give an integer from 1 to 20"),
        ({"mode": "warp"}, "unknown mode 'warp'"),
    ],
)
def test_bad_options_say_what_is_valid(kw, message):
    with pytest.raises(ValidationError) as e:
        ProfileRequest(**BASE, **kw)
    assert validation_message(e.value).startswith(message)
