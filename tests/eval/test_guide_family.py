"""The family docs/adding_a_model_family.md adds (`st_clip`) works as the page writes it.

The page's blocks are the family module, its `FAMILIES` entry, the tiny checkpoint's fixture and the
equality test; this puts the module where `babelforge.eval.families` finds it (its package path extended
for the test), inserts the entry before `st` as the page says, builds the checkpoint with the fixture's
code and runs the page's own test on it: the vectors equal sentence-transformers' own.
"""

from __future__ import annotations

import re
import sys
from types import SimpleNamespace

import pytest

from babelforge.eval import families
from tests.imports import REPO

GUIDE = REPO / "docs" / "adding_a_model_family.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.DOTALL)


def block_with(marker: str) -> str:
    (found,) = [block for block in python_blocks() if marker in block]
    return found


@pytest.fixture
def guide_family(tmp_path, monkeypatch):
    """`babelforge.eval.families.st_clip` from the page, registered in the page's detection order."""
    folder = tmp_path / "families"
    folder.mkdir()
    (folder / "st_clip.py").write_text(block_with("class SentenceTransformersClipEncoder"), encoding="utf-8")
    monkeypatch.setattr(families, "__path__", [*families.__path__, str(folder)])
    entry = eval(block_with("Family(").strip().rstrip(","), {"Family": families.Family})  # noqa: S307
    order = list(families.FAMILIES)
    order.insert(order.index("st"), entry.name)
    monkeypatch.setattr(families, "FAMILIES", {name: families.FAMILIES.get(name, entry) for name in order})
    yield entry
    sys.modules.pop("babelforge.eval.families.st_clip", None)


@pytest.mark.slow
def test_the_guide_family_embeds_as_its_library_does(guide_family, tmp_path_factory, tiny_clip_dir):
    assert guide_family.name == "st_clip" and list(families.FAMILIES).index("st_clip") < list(families.FAMILIES).index(
        "st"
    )
    as_is = SimpleNamespace(fixture=lambda **_: lambda function: function)  # the fixture's code, called directly
    fixture: dict = {"pytest": as_is}
    exec(block_with("def tiny_st_clip_dir"), fixture)  # noqa: S102
    checkpoint = fixture["tiny_st_clip_dir"](tmp_path_factory, tiny_clip_dir)
    test: dict = {}
    exec(block_with("def test_st_clip_embeds_as_sentence_transformers_does"), test)  # noqa: S102
    test["test_st_clip_embeds_as_sentence_transformers_does"](checkpoint)
