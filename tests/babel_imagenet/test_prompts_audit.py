"""The prompts' audit section (builders/babel_imagenet/audit_section.py): per language and prompt set."""

import pandas as pd

from babelforge.babel_imagenet import audit_section as audit


def test_prompt_summary():
    prompts = [
        {
            "lang": "fin_Latn",
            "prompt_set": "nllb",
            "template_id": i,
            "text": "{}",
            "fallback": i < 2,
            "valid": i != 3,
            "strategy": "tag" if i else "append",
            "failed": ["script"] if i == 3 else [],
        }
        for i in range(8)
    ]
    prompts += [
        {
            "lang": "fin_Latn",
            "prompt_set": "labels_only",
            "template_id": 0,
            "text": "{}",
            "fallback": False,
            "valid": True,
            "strategy": "none",
            "failed": None,
        }
    ]
    summary = audit.prompt_summary(prompts)
    nllb = summary["sets"]["nllb"]
    assert summary["prompts"] == 9 and set(summary["sets"]) == {"nllb", "labels_only"}
    assert nllb["fallback_share"] == 0.25 and nllb["flag_shares"] == {"valid": 0.875}
    assert nllb["failed_checks"] == {"script": 1} and nllb["strategies"] == {"tag": 7, "append": 1}
    # prompts.parquet's own form: check names joined with commas
    assert audit.check_names("script,langid") == ["script", "langid"] and audit.check_names("") == []


def test_the_section_reads_prompts_parquet(tmp_path):
    assert audit.prompts(tmp_path / "prompts.parquet") is None and audit.prompts(None) is None
    pd.DataFrame(
        {"lang": ["fin_Latn"] * 4, "template_id": range(4), "fallback": [True, False, False, False]}
    ).to_parquet(tmp_path / "prompts.parquet")
    section = audit.prompts(tmp_path / "prompts.parquet")
    assert section.language("fin_Latn")["sets"]["all"]["fallback_share"] == 0.25
    assert section.language("rus_Cyrl") == {"status": "no prompts for this language"}
