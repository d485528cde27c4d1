"""The contract's cause vocabulary (kprof_mcp/models/causes.py): every cause the diagnosis can name is in it with
its meaning, nothing else is, the MCP summary's and the result's field descriptions carry it, and docs/tools.md
lists it."""

import re
from pathlib import Path

from kprof_mcp.models import OpportunityModel
from kprof_mcp.models.causes import CAUSES
from kprof_mcp.render.diagnosis.words import WORDS
from kprof_mcp.render.summary import OpportunitySummary

DOC = Path(__file__).resolve().parents[2] / "docs" / "tools.md"


def test_every_worded_cause_is_in_the_vocabulary_and_nothing_else():
    assert set(WORDS) == set(CAUSES)
    assert all(len(v) > 20 for v in CAUSES.values())


def test_the_field_descriptions_carry_every_key_and_meaning():
    for model in (OpportunityModel, OpportunitySummary):
        text = model.model_fields["cause"].description
        for key, meaning in CAUSES.items():
            assert f"{key}: {meaning}" in text


def test_docs_list_the_vocabulary():
    doc = DOC.read_text()
    rows = dict(re.findall(r"^\| `([a-z_0-9]+)` \| (.+?) \|$", doc, re.M))
    assert {k: rows.get(k) for k in CAUSES} == CAUSES
