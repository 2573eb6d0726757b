"""The audit's index says which build profile the labels come from; a sample build stands out."""

import json

import pytest

from babelforge.audit.audit_stage import build_audit
from babelforge.core.io import read_table, write_table
from babelforge.core.languages import read_registry
from babelforge.core.provenance import SAMPLE_MODELS, provenance
from tests.audit.conftest import audit_config, stub_rank


def audit_labels_of(folder, params):
    """Rewrite labels.parquet with the provenance `params` record, run the audit; (summary, index.html)."""
    labels = read_table(folder / "labels.parquet")
    write_table(labels, folder / "labels.parquet", provenance=provenance("labels", params))
    summary = build_audit(audit_config(folder), read_registry(folder / "languages.tsv"), rank=stub_rank)
    out = folder / "reports" / "audit"
    assert json.loads((out / "summary.json").read_text())["profile"] == summary["profile"]
    return summary, (out / "index.html").read_text(encoding="utf-8")


def test_a_sample_build_is_named_at_the_top_of_the_index(label_inputs):
    summary, index = audit_labels_of(label_inputs, {"profile": "sample"})
    assert summary["profile"] == "sample"
    note = index[index.index("</h1>") :].split("</p>")[0]  # the first paragraph under the title
    assert "Build profile: sample" in note and SAMPLE_MODELS in note and "not the benchmark" in note


@pytest.mark.parametrize(("params", "shown"), [({"profile": "full"}, "Build profile: full."), ({}, "not recorded")])
def test_a_full_or_unrecorded_build_is_named_without_the_warning(label_inputs, params, shown):
    summary, index = audit_labels_of(label_inputs, params)
    assert summary["profile"] == params.get("profile")
    assert shown in index and "SAMPLE" not in index
