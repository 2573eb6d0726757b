"""The audit stage end to end on crafted inputs: files written, escaping, optional inputs, determinism."""

import json

import pandas as pd
import pytest
import yaml

from babelforge.audit.audit_stage import build_audit
from babelforge.cli import main as cli
from babelforge.core.errors import BabelforgeError
from babelforge.core.languages import read_registry
from tests.audit.conftest import audit_config, audit_params, stub_rank


def run_audit(tmp, **overrides):
    return build_audit(audit_config(tmp, **overrides), read_registry(tmp / "languages.tsv"), rank=stub_rank)


def test_labels_alone_report_every_optional_input_not_built(label_inputs):
    summary = run_audit(label_inputs)
    out = label_inputs / "reports" / "audit"
    assert summary["inputs"]["prompts"] == "not built"
    assert summary["inputs"]["captions"] == "not built" and summary["inputs"]["mvl_sib"] == "not built"
    assert set(summary["languages"]) == {"eng_Latn", "fin_Latn", "rus_Cyrl", "jpn_Jpan", "kmr_Latn"}
    for lang in summary["languages"]:
        assert (out / f"{lang}.json").exists() and (out / f"{lang}.html").exists()
    assert {"index.html", "summary.json", "classes_per_language.png", "source_mix.png"} <= {
        p.name for p in out.iterdir()
    }
    assert not (out / "kiwi.png").exists()
    fin = json.loads((out / "fin_Latn.json").read_text())
    assert fin["prompts"] == {"status": "not built"}
    assert "not built" in (out / "fin_Latn.html").read_text()
    # errors: fin Cyrillic label + trailing space, rus Latin 'tench', kmr Arabic-script label
    assert summary["errors"] == 4
    rus = json.loads((out / "rus_Cyrl.json").read_text())
    assert {check for check, _ in rus["flags"]["3"]} == {"script_mismatch", "english_lookalike"}


def test_index_ranks_by_score_and_links_every_language(label_inputs):
    summary = run_audit(label_inputs)
    index = (label_inputs / "reports" / "audit" / "index.html").read_text()
    ranked = sorted(summary["languages"], key=lambda lang: -summary["languages"][lang]["quality_score"])
    positions = [index.index(f'href="{lang}.html"') for lang in ranked]
    assert positions == sorted(positions)
    assert "quality score = 100" in index


def test_labels_and_definitions_are_escaped(label_inputs):
    run_audit(label_inputs)
    page = (label_inputs / "reports" / "audit" / "fin_Latn.html").read_text()
    assert "<b>" not in page and "&lt;b&gt;&amp;amp;&lt;/b&gt;" in page
    assert "definition of tench &lt;&amp;&gt;" in page
    # flagged rows come before clean ones
    assert page.index('id="class-1"') < page.index('id="class-0"')
    assert 'class="flagged" id="class-1"' in page


def test_optional_inputs_are_summarised_when_built(label_inputs):
    tmp = label_inputs
    pd.DataFrame(
        [
            {
                "lang": "fin_Latn",
                "template_id": i,
                "text": f"kuva {{}} {i}",
                "strategy": "tag",
                "fallback": i == 0,
                "valid": True,
            }
            for i in range(4)
        ]
    ).to_parquet(tmp / "prompts.parquet")
    pd.DataFrame(
        [
            {
                "caption_id": i,
                "lang": lang,
                "text": "t",
                "kiwi_score": i / 10,
                "kiwi_percentile": i * 10.0,
                "chrf": 50.0 + i,
            }
            for i in range(10)
            for lang in ("fin_Latn", "rus_Cyrl")
        ]
    ).to_parquet(tmp / "selected.parquet")
    # captions_select's quality.json beside it: the input's counts and the Kiwi pairs cut
    quality = {
        "input": {
            "rows": 23,
            "kept": 20,
            "quarantined": 3,
            "reasons": {"empty_caption": 3},
            "excluded": {},
            "truncated": 1,
        },
        "languages": {
            "fin_Latn": {"n_kiwi_truncated": 5, "n_selected_kiwi_truncated": 1},
            "rus_Cyrl": {"n_kiwi_truncated": 2, "n_selected_kiwi_truncated": 0},
        },
    }
    (tmp / "quality.json").write_text(json.dumps(quality))
    for task in ("i2s_k1", "s2t"):
        (tmp / "mvl_sib" / task).mkdir(parents=True)
        for lang in ("fin_Latn", "jpn_Jpan"):
            pd.DataFrame({"label": [0, 1, 2, 3] * 3, "topic": ["a", "b", "c"] * 4}).to_parquet(
                tmp / "mvl_sib" / task / f"{lang}.parquet"
            )
    reference = {"FI": [[0, 7, 8, 500], ["suutari", "kukko", "Kana", "x"]], "eng_Latn": [[0], ["tench"]]}
    (tmp / "reference.json").write_text(json.dumps(reference, ensure_ascii=False))
    summary = run_audit(tmp, reference=str(tmp / "reference.json"))
    out = tmp / "reports" / "audit"
    fin = json.loads((out / "fin_Latn.json").read_text())
    assert fin["prompts"]["sets"]["all"]["fallback_share"] == 0.25
    assert fin["captions"]["kiwi_column"] == "kiwi_score"
    assert fin["captions"]["kiwi_percentiles"]["p50"] == pytest.approx(0.45)
    assert fin["mvl_sib"]["tasks"]["s2t"]["rows"] == 12
    assert fin["reference"]["common"] == 3 and fin["reference"]["exact_match"] == 2
    assert json.loads((out / "rus_Cyrl.json").read_text())["mvl_sib"] == {"status": "language not in MVL-SIB"}
    assert summary["mvl_sib"]["tasks"]["i2s_k1"] == {"languages": 2, "rows_min": 12, "rows_max": 12, "balanced": True}
    assert (out / "kiwi.png").exists() and "kiwi.png" in summary["plots"]
    assert fin["captions"]["kiwi_truncated"] == {"hypotheses": 5, "selected": 1}
    assert summary["captions"] == {
        "status": "built",
        "input": quality["input"],
        "kiwi_truncated": {"hypotheses": 7, "selected": 1},
    }
    index = (out / "index.html").read_text()
    start = index.index("<h2>MT captions: overview</h2>")
    overview = index[start : index.index("<h2>", start + 1)]  # the overviews follow the language ranking
    assert index.index("<h2>Languages</h2>") < start
    for measure, value in [("input.quarantined", 3), ("input.reasons.empty_caption", 3), ("input.truncated", 1)]:
        assert f'<td>{measure}</td><td class="num">{value}</td>' in overview
    assert "<td>input.excluded</td><td>none</td>" in overview
    assert '<td>kiwi_truncated.hypotheses</td><td class="num">7</td>' in overview
    slice_ = json.loads((out / "datasets" / "mt-captions.json").read_text())
    assert slice_["overview"] == summary["captions"]  # what the mt-captions card states


def test_two_runs_are_byte_identical_and_stale_pages_go(label_inputs):
    run_audit(label_inputs)
    out = label_inputs / "reports" / "audit"
    first = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    (out / "xxx_Latn.html").write_text("stale")
    run_audit(label_inputs)
    second = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert first == second


def test_cli_with_real_langid_and_missing_labels(label_inputs, capsys):
    params = label_inputs / "params.yaml"
    params.write_text(yaml.safe_dump(audit_params(label_inputs)))
    registry = str(label_inputs / "languages.tsv")
    assert cli(["audit", "--params", str(params), "--registry", registry]) == 0
    fin = json.loads((label_inputs / "reports" / "audit" / "fin_Latn.json").read_text())
    assert fin["langid"]["status"] == "checked" and fin["langid"]["code"] == "fi"
    kmr = json.loads((label_inputs / "reports" / "audit" / "kmr_Latn.json").read_text())
    assert kmr["langid"]["status"] == "not checked"  # the registry gives Kurmanji no langid code
    # --out names the report folder, like every stage's main output
    elsewhere = label_inputs / "elsewhere"
    assert cli(["audit", "--params", str(params), "--registry", registry, "--out", str(elsewhere)]) == 0
    assert (elsewhere / "index.html").is_file() and (elsewhere / "fin_Latn.json").read_bytes() == (
        label_inputs / "reports" / "audit" / "fin_Latn.json"
    ).read_bytes()
    (label_inputs / "labels.parquet").unlink()
    assert cli(["audit", "--params", str(params), "--registry", registry]) == 1
    assert "labels not built" in capsys.readouterr().err


def test_unknown_language_is_an_error(label_inputs):
    labels = pd.read_parquet(label_inputs / "labels.parquet")
    labels.loc[0, "lang"] = "xxx_Latn"
    labels.to_parquet(label_inputs / "labels.parquet")
    with pytest.raises(BabelforgeError, match="xxx_Latn"):
        run_audit(label_inputs)


def test_a_failed_run_leaves_the_previous_report_whole(label_inputs, monkeypatch):
    from babelforge.audit import report

    run_audit(label_inputs)
    out = label_inputs / "reports" / "audit"
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    labels = pd.read_parquet(label_inputs / "labels.parquet")
    labels.loc[labels["lang"] == "fin_Latn", "label"] = "muutettu"
    labels.to_parquet(label_inputs / "labels.parquet")

    def broken_index(summary):
        raise RuntimeError("killed while writing the index")

    monkeypatch.setattr(report, "render_index", broken_index)
    with pytest.raises(RuntimeError):
        run_audit(label_inputs)
    assert {
        p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()
    } == before  # no new fin_Latn page beside the old index
    assert sorted(p.name for p in out.parent.iterdir()) == ["audit"]  # no staging folder left


def test_dropped_senses_count_classes_the_filters_emptied(label_inputs):
    # labels.parquet has only classes that kept a label; languages.parquet counts every class
    languages = pd.read_parquet(label_inputs / "languages.parquet")
    languages["n_dropped_english"] = 40
    languages["n_dropped_mt"] = 7
    languages["n_dropped_low_precision"] = 2
    languages["n_classes_emptied"] = 25
    languages.to_parquet(label_inputs / "languages.parquet", index=False)
    run_audit(label_inputs)
    out = label_inputs / "reports" / "audit"
    fin = json.loads((out / "fin_Latn.json").read_text())
    assert fin["dropped"] == {"english": 40, "machine_translated": 7, "low_precision": 2, "classes_emptied": 25}
    assert "classes_emptied" in (out / "fin_Latn.html").read_text()


def test_prompt_failures_are_counted_per_check_name(label_inputs):
    """prompts.parquet joins a prompt's failed checks with commas; the audit counts check names
    (it used to count the characters of that text: `failed_checks.i`, `.t`, `.,`)."""
    from babelforge.babel_imagenet.prompts import PromptRow, rows_to_records
    from babelforge.babel_imagenet.prompts_stage import prompts_table
    from babelforge.core.io import write_table

    failed = [["script", "langid"], ["langid"], [], ["slot_count", "script", "length_ratio"]]
    rows = [
        PromptRow(
            "fin_Latn",
            "nllb",
            i,
            f"kuva {{}} {i}",
            "a photo of a {}.",
            "tag_noun",
            False,
            -0.1,
            failed=checks,
            valid=not checks,
        )
        for i, checks in enumerate(failed)
    ]
    write_table(
        prompts_table(rows_to_records(rows)),
        label_inputs / "prompts.parquet",
        sort_by=["lang", "prompt_set", "template_id"],
    )
    run_audit(label_inputs)
    fin = json.loads((label_inputs / "reports" / "audit" / "fin_Latn.json").read_text())
    assert fin["prompts"]["sets"]["nllb"]["failed_checks"] == {
        "script": 2,
        "langid": 2,
        "slot_count": 1,
        "length_ratio": 1,
    }
    page = (label_inputs / "reports" / "audit" / "fin_Latn.html").read_text()
    assert "failed_checks.i" not in page


def test_code_defaults_are_params_yaml(repo_root):
    from babelforge.audit.audit_stage import Config
    from babelforge.core.config import load_config
    from babelforge.core.params import load_params

    assert load_config(Config, load_params(repo_root / "params.yaml")) == Config()


def test_each_registered_dataset_gets_its_own_slice_that_other_datasets_leave_alone(label_inputs):
    from babelforge.core.datasets import names

    out = label_inputs / "reports" / "audit" / "datasets"
    run_audit(label_inputs)
    assert sorted(p.stem for p in out.iterdir()) == sorted(names())
    before = {p.stem: p.read_bytes() for p in out.iterdir()}
    labels = json.loads(before["babel-imagenet"])
    assert labels["audited"] and labels["errors"] == 4 and set(labels["languages"]) >= {"fin_Latn", "kmr_Latn"}
    assert json.loads(before["knowledge"]) == {"dataset": "knowledge", "audited": False}
    assert json.loads(before["babel-imagenet-prompts"])["status"] == "not built"
    # prompts appear: only the prompts' slice changes, so only the prompts card is rebuilt
    pd.DataFrame(
        [
            {
                "lang": "fin_Latn",
                "template_id": i,
                "text": f"kuva {{}} {i}",
                "strategy": "tag",
                "fallback": False,
                "valid": True,
            }
            for i in range(4)
        ]
    ).to_parquet(label_inputs / "prompts.parquet")
    run_audit(label_inputs)
    after = {p.stem: p.read_bytes() for p in out.iterdir()}
    assert [name for name in names() if after[name] != before[name]] == ["babel-imagenet-prompts"]
    prompts = json.loads(after["babel-imagenet-prompts"])
    assert prompts["status"] == "built" and prompts["languages"]["fin_Latn"]["prompts"] == 4


def test_a_labels_only_change_leaves_the_mvl_sib_and_caption_slices_byte_identical(label_inputs):
    """A slice lists the languages of its own dataset's input, not the labels': the labels losing
    and changing languages (as `-S labels.min_classes=20` does) rewrites the labels' slice only, so
    DVC skips the MVL-SIB and MT captions cards."""
    tmp = label_inputs
    pd.DataFrame(
        [
            {"caption_id": i, "lang": lang, "text": "t", "kiwi_score": i / 10, "chrf": 50.0 + i, "reason": None}
            for i in range(10)
            for lang in ("deu_Latn", "fin_Latn", "rus_Cyrl")  # deu_Latn: no labels
        ]
    ).to_parquet(tmp / "selected.parquet")
    for task in ("i2s_k1", "s2t"):
        (tmp / "mvl_sib" / task).mkdir(parents=True)
        for lang in ("fin_Latn", "jpn_Jpan", "zul_Latn"):  # zul_Latn: no labels
            pd.DataFrame({"label": [0, 1, 2, 3] * 3, "topic": ["a", "b", "c"] * 4}).to_parquet(
                tmp / "mvl_sib" / task / f"{lang}.parquet"
            )
    out = tmp / "reports" / "audit" / "datasets"
    run_audit(tmp)
    before = {p.stem: p.read_bytes() for p in out.iterdir()}
    mvl_sib = json.loads(before["mvl-sib"])
    assert list(mvl_sib["languages"]) == ["fin_Latn", "jpn_Jpan", "zul_Latn"]
    assert mvl_sib["languages"]["zul_Latn"]["tasks"]["s2t"]["rows"] == 12
    captions = json.loads(before["mt-captions"])
    assert list(captions["languages"]) == ["deu_Latn", "fin_Latn", "rus_Cyrl"]
    assert captions["languages"]["deu_Latn"]["captions"] == 10

    # the labels only: two languages gone (one of MVL-SIB's, one of the captions'), a label changed
    labels = pd.read_parquet(tmp / "labels.parquet")
    labels = labels[~labels["lang"].isin(["jpn_Jpan", "rus_Cyrl"])].copy()
    labels.loc[labels["lang"] == "fin_Latn", "label"] = labels["label"] + " x"
    labels.to_parquet(tmp / "labels.parquet", index=False)
    languages = pd.read_parquet(tmp / "languages.parquet")
    languages[~languages["lang"].isin(["jpn_Jpan", "rus_Cyrl"])].to_parquet(tmp / "languages.parquet", index=False)
    summary = run_audit(tmp)
    assert set(summary["languages"]) == {"eng_Latn", "fin_Latn", "kmr_Latn"}
    after = {p.stem: p.read_bytes() for p in out.iterdir()}
    assert after["mvl-sib"] == before["mvl-sib"] and after["mt-captions"] == before["mt-captions"]
    assert after["babel-imagenet"] != before["babel-imagenet"]


def test_a_built_section_that_does_not_list_its_languages_stops_the_audit(label_inputs, monkeypatch):
    from babelforge.core.sections import Section

    pd.DataFrame({"lang": ["fin_Latn"], "template_id": [0], "text": ["kuva {}"]}).to_parquet(
        label_inputs / "prompts.parquet"
    )
    monkeypatch.setattr("babelforge.babel_imagenet.audit_section.prompts", lambda path: Section(lambda lang: {}))
    with pytest.raises(BabelforgeError, match="'prompts'.*without `languages`"):
        run_audit(label_inputs)


def test_reviews_alternatives_and_the_sheet_reach_the_report(label_inputs):
    """labels.parquet as the labels stage writes it after reviews, plus candidates.parquet."""
    from babelforge.babel_imagenet.reviews import apply_reviews, parse_review_file
    from babelforge.core.io import write_table

    tmp = label_inputs
    labels = pd.read_parquet(tmp / "labels.parquet")
    wnid = dict(zip(labels["class_idx"], labels["wnid"]))
    reviews = parse_review_file(
        "wnid\tdecision\tlabel\treviewer\tdate\tnote\n"
        f"{wnid[2]}\treplace\thai (kala)\tanna\t2025-01-14\tthe duplicate of class 3\n"
        f"{wnid[7]}\treject\t\tanna\t2025-01-14\t\n"
        f"{wnid[0]}\taccept\tsuutarikala\tbert\t2025-01-15\t\n",
        "fin_Latn",
        "fin_Latn.tsv",
    )
    rows, record, _ = apply_reviews(labels.to_dict("records"), {"fin_Latn": reviews}, {w: i for i, w in wnid.items()})
    write_table(
        pd.DataFrame(rows),
        tmp / "labels.parquet",
        sort_by=["lang", "class_idx"],
        provenance={"sources": {"reviews": record}},
    )
    pd.DataFrame(
        [
            {
                "lang": "fin_Latn",
                "class_idx": 2,
                "wnid": wnid[2],
                "label": label,
                "source": source,
                "rank": rank,
                "is_translation": False,
                "chosen": rank == 0,
                "set_aside": "" if rank == 0 else reason,
                "agreement": 1,
            }
            for label, source, rank, reason in [
                ("hai", "wikt", 0, ""),
                ("valkohai", "omw:fin", 1, "not_first"),
                ("white shark", "wikt", 2, "english"),
            ]
        ]
    ).to_parquet(tmp / "candidates.parquet")
    summary = run_audit(tmp)
    out = tmp / "reports" / "audit"
    fin = json.loads((out / "fin_Latn.json").read_text())
    assert {k: fin["reviews"][k] for k in ("classes", "reviewed", "changed", "rejected", "stale")} == {
        "classes": 10,
        "reviewed": 3,
        "changed": 3,
        "rejected": 1,
        "stale": 1,
    }
    assert [(d["class_idx"], d["decision"], d["reviewer"]) for d in fin["reviews"]["decisions"]] == [
        (0, "accept", "bert"),
        (2, "replace", "anna"),
        (7, "reject", "anna"),
    ]
    assert summary["languages"]["fin_Latn"]["reviews"]["reviewed_share"] == 0.3
    assert "decisions" not in summary["languages"]["fin_Latn"]["reviews"]
    index = (out / "index.html").read_text()
    assert "30.0%" in index and "reviewed" in index
    page = (out / "fin_Latn.html").read_text()
    row = page[page.index('id="class-2"') :].split("</tr>")[0]
    assert "hai (kala)" in row and "valkohai" in row and 'data-reviewed="replace"' in row and "review:anna" in row
    stale = page[page.index('id="class-0"') :].split("</tr>")[0]
    assert "stale_review" in stale and 'class="flagged"' in page[page.rindex("<tr", 0, page.index('id="class-0"')) :]
    assert 'id="class-7"' not in page and "fin_Latn.review.csv" in page
    sheet = (out / "fin_Latn.review.csv").read_text(encoding="utf-8")
    assert sheet.startswith("\ufefflang,class_idx") and len(sheet.splitlines()) == 1 + 9
    assert (out / "eng_Latn.review.csv").exists()
