"""A caption longer than the COMETKiwi encoder reads: its (caption, hypothesis) pairs are scored on
their beginning and flagged (`kiwi_v1__truncated`), counted per language in quality.json, the
metrics, the audit's captions section and the mt-captions card, and a threshold can drop them.

Real XTD captions, the stub translator (which copies and reverses its source, so every hypothesis of
the long caption is long too) and the tiny COMETKiwi, whose encoder reads 256 tokens.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import yaml

from babelforge.cli import main
from babelforge.core import shards
from babelforge.core.io import read_json, read_table

from .test_stages import run_chain, stub_for, write_params

N_SHORT = 6
LONG_ID = "long"


@pytest.fixture(scope="module")
def long_caption(xtd) -> str:
    """Twenty real XTD captions as one caption, far longer than the tiny Kiwi encoder's 256 tokens."""
    return " ".join(row["caption"] for row in xtd.captions[N_SHORT : N_SHORT + 20])


@pytest.fixture(scope="module")
def built(tmp_path_factory, xtd, tiny_kiwi_dir, long_caption):
    """translate -> tag -> select on 6 short XTD captions and the long one (module-scoped: run once)."""
    root = tmp_path_factory.mktemp("long")
    table = root / "captions.csv"
    with table.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "image", "caption"])
        for row in xtd.captions[:N_SHORT]:
            writer.writerow([row["caption_id"], row["image"], row["caption"]])
        writer.writerow([LONG_ID, "long.jpg", long_caption])
    params = write_params(root / "params.yaml", table, tiny_kiwi_dir, format="table", limit=None)
    data = root / "data"
    run_chain(params, data, stub_for(xtd), root / "metrics")
    return root, data, params


def test_the_long_captions_pairs_and_only_they_are_flagged(built, tiny_kiwi, long_caption):
    _, data, _ = built
    limit = tiny_kiwi.encoder.max_positions
    assert len(tiny_kiwi.encoder.tokenizer(long_caption)["input_ids"]) > limit  # the source alone is over it
    attributes = shards.read(data / "attributes").to_pandas()
    assert attributes["kiwi_v1__truncated"].dtype == bool
    flagged = attributes[attributes["kiwi_v1__truncated"]]
    assert set(flagged["caption_id"]) == {LONG_ID}
    assert len(flagged) == (attributes["caption_id"] == LONG_ID).sum()  # every hypothesis of it
    assert attributes["kiwi_v1__score"].notna().all()  # scored on its beginning, not left out


def test_quality_metrics_and_log_count_them_per_language(built, capsys):
    root, data, params = built
    hypotheses = shards.read(data / "hypotheses").to_pandas()
    long_per_language = hypotheses[hypotheses["caption_id"] == LONG_ID].groupby("lang").size().to_dict()
    selected = read_table(data / "selected.parquet")
    kept_long = selected[(selected["caption_id"] == LONG_ID) & selected["text"].notna()]
    quality = read_json(data / "quality.json")["languages"]
    assert {lang: figures["n_kiwi_truncated"] for lang, figures in quality.items()} == long_per_language
    assert {lang: figures["n_selected_kiwi_truncated"] for lang, figures in quality.items()} == {
        lang: int(lang in set(kept_long["lang"])) for lang in quality
    }
    metrics = read_json(root / "metrics" / "captions.json")
    assert metrics["kiwi_truncated"] == sum(long_per_language.values()) == len(hypotheses) // (N_SHORT + 1)
    # the tag stage says it too, with the model's limit (a rerun finds every shard current)
    assert main(["captions_tag", "--params", str(params), "--out", str(data)]) == 0
    err = capsys.readouterr().err
    assert f"{metrics['kiwi_truncated']} (caption, hypothesis) pairs longer than the COMETKiwi encoder's 256" in err
    assert "deu_Latn 4, fra_Latn 4" in err


def test_a_threshold_on_the_flag_drops_them(built, tmp_path):
    root, data, params = built
    values = yaml.safe_load(params.read_text(encoding="utf-8"))
    values["captions"]["select"]["default"]["truncated"]["kiwi_v1__truncated"] = {"equals": False}
    strict = tmp_path / "params.yaml"
    strict.write_text(yaml.safe_dump(values, sort_keys=False), encoding="utf-8")
    copy = tmp_path / "data"
    for name in ("source", "references", "hypotheses", "attributes", "quarantine"):
        shards_dir = data / name
        (copy / name).mkdir(parents=True)
        for path in shards_dir.iterdir():
            (copy / name / path.name).write_bytes(path.read_bytes())
    (copy / "input.json").write_bytes((data / "input.json").read_bytes())
    assert main(["captions_select", "--params", str(strict), "--out", str(copy), "--metrics", str(tmp_path)]) == 0
    selected = read_table(copy / "selected.parquet")
    long_rows = selected[selected["caption_id"] == LONG_ID]
    assert long_rows["text"].isna().all()
    assert long_rows["reason"].str.contains(r"truncated=\d").all()
    # the other captions keep the same choice (their percentiles move: the long ones left the ranks)
    choice = ["caption_id", "lang", "text", "hyp_rank", "kiwi_score", "reason"]
    before = read_table(data / "selected.parquet")
    short = selected[selected["caption_id"] != LONG_ID][choice].reset_index(drop=True)
    assert short.equals(before[before["caption_id"] != LONG_ID][choice].reset_index(drop=True))


def test_the_audit_and_the_card_state_the_counts(built):
    from babelforge.captions.audit_section import captions
    from babelforge.captions.dataset import input_notes

    _, data, _ = built
    quality = read_json(data / "quality.json")
    section = captions(data / "selected.parquet")
    overview = section.overview()
    total = sum(figures["n_kiwi_truncated"] for figures in quality["languages"].values())
    kept = sum(figures["n_selected_kiwi_truncated"] for figures in quality["languages"].values())
    assert overview == {
        "status": "built",
        "input": read_json(data / "input.json"),
        "kiwi_truncated": {"hypotheses": total, "selected": kept},
    }
    assert section.language("deu_Latn")["kiwi_truncated"] == {
        "hypotheses": quality["languages"]["deu_Latn"]["n_kiwi_truncated"],
        "selected": quality["languages"]["deu_Latn"]["n_selected_kiwi_truncated"],
    }
    notes = input_notes({"overview": overview})
    assert notes[0] == (
        f"Input: {N_SHORT + 1} caption rows read, {N_SHORT + 1} kept, 0 quarantined as bad rows (none; kept aside "
        "with file, line and reason in the build's `quarantine/`)."
    )
    assert notes[1].startswith("0 captions were longer than the translator's input limit")
    assert notes[2].startswith(f"{total} (caption, hypothesis) pairs were longer than the COMETKiwi encoder reads")
    assert f"; {kept} of the kept translations carry such a score." in notes[2]
    # no quality.json beside selected.parquet: the overview and the card say the counts are unknown
    lonely = Path(data.parent / "lonely")
    lonely.mkdir()
    (lonely / "selected.parquet").write_bytes((data / "selected.parquet").read_bytes())
    missing = captions(lonely / "selected.parquet").overview()
    assert missing["status"].startswith("no quality.json beside selected.parquet")
    assert input_notes({"overview": missing})[0].startswith("The input's row counts are not known to this card")
