from __future__ import annotations

from collections import Counter

import pytest

from babelforge.core.errors import BabelforgeError
from babelforge.mvl_sib.geo import Candidate, LanguageArea, level_counts, select_geo_pool


def _images(prefix: str, n: int, region: str, country: str, continent: str) -> list[Candidate]:
    return [Candidate(f"{prefix}{i}", region, country, continent) for i in range(n)]


def test_tiny_pool_backs_off_exactly_what_it_lacks():
    candidates = (
        _images("bavaria", 2, "Bavaria", "DE", "Europe")
        + _images("saxony", 2, "Saxony", "DE", "Europe")
        + _images("paris", 10, "IDF", "FR", "Europe")
        + _images("lima", 10, "Lima", "PE", "South America")
    )
    areas = {"bar_Latn": LanguageArea.of(["Bavaria"], ["DE"], ["Europe"])}
    selections = select_geo_pool(candidates, areas, per_language=5)
    assert level_counts(selections)["bar_Latn"] == {"area": 2, "country": 2, "continent": 1, "anywhere": 0}
    by_level = {s.image_id: s.level for s in selections}
    assert by_level["bavaria0"] == by_level["bavaria1"] == "area"
    assert by_level["saxony0"] == by_level["saxony1"] == "country"
    assert [s.rank for s in selections] == [0, 1, 2, 3, 4]


def test_falls_back_to_anywhere_when_the_continent_is_empty():
    candidates = _images("island", 1, "Rapa", "CL", "Oceania") + _images("x", 6, "Elsewhere", "US", "North America")
    areas = {"rap_Latn": LanguageArea.of(["Rapa"], ["CL"], ["Oceania"])}
    counts = level_counts(select_geo_pool(candidates, areas, per_language=4))
    assert counts["rap_Latn"] == {"area": 1, "country": 0, "continent": 0, "anywhere": 3}


def test_smallest_pool_goes_first_and_no_image_is_reused():
    # Region R has 3 images; `small` only lives in R, `big` lives in R and S (8 images).
    candidates = _images("r", 3, "R", "C", "K") + _images("s", 8, "S", "C", "K") + _images("t", 4, "T", "D", "K")
    areas = {
        "big": LanguageArea.of(["R", "S"], ["C"], ["K"]),
        "small": LanguageArea.of(["R"], ["C"], ["K"]),
    }
    selections = select_geo_pool(candidates, areas, per_language=3)
    small = {s.image_id: s.level for s in selections if s.lang == "small"}
    big = {s.image_id: s.level for s in selections if s.lang == "big"}
    assert small == {"r0": "area", "r1": "area", "r2": "area"}  # served first: all of R
    assert set(big) <= {f"s{i}" for i in range(8)} and set(big.values()) == {"area"}
    assert not set(small) & set(big)
    # processing order follows pool size, not the order of the mapping or the names
    assert [s.lang for s in selections][:3] == ["small"] * 3


def test_never_reuses_across_many_languages_and_is_seeded():
    candidates = _images("a", 5, "A", "X", "K") + _images("b", 5, "B", "X", "K") + _images("c", 20, "C", "Y", "L")
    areas = {f"l{i}": LanguageArea.of(["A" if i % 2 else "B"], ["X"], ["K"]) for i in range(6)}
    first = select_geo_pool(candidates, areas, per_language=4, seed=1)
    ids = [s.image_id for s in first]
    assert len(ids) == len(set(ids)) == 24
    assert first == select_geo_pool(candidates, areas, per_language=4, seed=1)
    other = select_geo_pool(candidates, areas, per_language=4, seed=2)
    assert Counter(s.level for s in other) == Counter(s.level for s in first)  # levels do not depend on the seed
    # l0 (B) and l1 (A) take 4 local images each; l2 gets B's last image, then A's last one via
    # the shared country, then 2 from anywhere; l3..l5 find nothing nearer than anywhere.
    assert Counter(s.level for s in first) == {"area": 9, "country": 1, "anywhere": 14}
    assert level_counts(first)["l2"] == {"area": 1, "country": 1, "continent": 0, "anywhere": 2}


def test_not_enough_candidates_and_duplicates_are_errors():
    areas = {"a": LanguageArea.of(["R"], [], []), "b": LanguageArea.of(["R"], [], [])}
    with pytest.raises(BabelforgeError, match="need 6 candidates, only 5"):
        select_geo_pool(_images("r", 5, "R", "C", "K"), areas, per_language=3)
    with pytest.raises(BabelforgeError, match="listed twice"):
        select_geo_pool(_images("r", 3, "R", "C", "K") * 2, areas, per_language=1)


def test_cli_on_csv(tmp_path):
    from babelforge.cli import main
    from babelforge.core.io import read_table

    (tmp_path / "candidates.csv").write_text(
        "image_id,region,country,continent,url\n"
        + "".join(
            f"img{i},{'Bavaria' if i < 2 else 'Paris'},{'DE' if i < 2 else 'FR'},Europe,u{i}\n" for i in range(8)
        ),
        encoding="utf-8",
    )
    (tmp_path / "areas.csv").write_text(
        "lang,region,country,continent\nbar_Latn,Bavaria,DE,Europe\nfra_Latn,Paris,FR,Europe\n", encoding="utf-8"
    )
    out = tmp_path / "pool.parquet"
    assert (
        main(
            [
                "geo_pool",
                "--candidates",
                str(tmp_path / "candidates.csv"),
                "--areas",
                str(tmp_path / "areas.csv"),
                "--per-language",
                "3",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    table = read_table(out)
    assert table.groupby("lang")["level"].apply(list).to_dict() == {
        "bar_Latn": ["area", "area", "continent"],
        "fra_Latn": ["area", "area", "area"],
    }
    (tmp_path / "areas.csv").write_text("lang,region\nx,y\n", encoding="utf-8")
    assert (
        main(
            [
                "geo_pool",
                "--candidates",
                str(tmp_path / "candidates.csv"),
                "--areas",
                str(tmp_path / "areas.csv"),
                "--per-language",
                "3",
                "--out",
                str(out),
            ]
        )
        == 1
    )


def test_cli_names_the_missing_inputs(tmp_path, capsys):
    from babelforge.cli import main

    assert main(["geo_pool", "--candidates", str(tmp_path / "c.csv"), "--set", "geo_pool.seed=3"]) == 1
    assert capsys.readouterr().err.strip() == (
        "babelforge geo_pool: error: geo_pool needs --areas, --per-language, --out (or --set geo_pool.<key>=...)"
    )


def test_cli_region_names_are_qualified_by_country(tmp_path):
    from babelforge.cli import main
    from babelforge.core.io import read_table

    # "Punjab" is a region of India and of Pakistan: pan_Guru (India) must not take Pakistan's as its area
    (tmp_path / "candidates.csv").write_text(
        "image_id,region,country,continent\n"
        "pk0,Punjab,PK,Asia\npk1,Punjab,PK,Asia\nin0,Punjab,IN,Asia\nde0,Bavaria,DE,Europe\n",
        encoding="utf-8",
    )
    (tmp_path / "areas.csv").write_text("lang,region,country,continent\npan_Guru,Punjab,IN,Asia\n", encoding="utf-8")
    out = tmp_path / "pool.parquet"
    args = [
        "geo_pool",
        "--candidates",
        str(tmp_path / "candidates.csv"),
        "--areas",
        str(tmp_path / "areas.csv"),
        "--per-language",
        "2",
        "--out",
        str(out),
    ]
    assert main(args) == 0
    levels = dict(zip(read_table(out)["image_id"], read_table(out)["level"]))
    assert levels["in0"] == "area" and list(levels.values()).count("area") == 1
    assert sorted(levels.values()) == ["area", "continent"]
    (tmp_path / "areas.csv").write_text("lang,region,country,continent\npan_Guru,Punjab,,Asia\n", encoding="utf-8")
    assert main(args) == 1
