"""`babelforge eval_correlate` and `babelforge eval_cider` from the command line."""

import json

import pytest

from babelforge.cli import main


def write_tsv(path, header, rows):
    path.write_text("\n".join(["\t".join(header), *("\t".join(map(str, r)) for r in rows)]) + "\n")
    return path


def test_correlate_one_table_prints_and_writes_json(tmp_path, capsys):
    table = write_tsv(
        tmp_path / "x.tsv",
        ["id", "a", "b"],
        [(i, x, y) for i, (x, y) in enumerate(zip([1, 2, 3, 4, 5], [2, 1, 4, 3, 5]))],
    )
    out = tmp_path / "r.json"
    assert main(["eval_correlate", str(table), "--x", "a", "--y", "b", "--n-boot", "50", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "kendall_b" in printed and "kendall_c (m=5)" in printed
    document = json.loads(out.read_text())
    assert document["coefficients"]["pearson"]["value"] == pytest.approx(0.8)
    assert document["coefficients"]["kendall_b"]["value"] == pytest.approx(0.6)
    assert document["coefficients"]["spearman"]["n"] == 5
    assert document["join"] is None


def test_correlate_two_tables_reports_join_and_mirror(tmp_path, capsys):
    x = write_tsv(
        tmp_path / "human.tsv",
        ["lang", "pair", "sxs"],
        [("de", 1, 0.5), ("de", 2, -0.2), ("fr", 1, 0.1), ("fr", 2, 0.3), ("it", 1, 0.0)],
    )
    y = write_tsv(
        tmp_path / "cider.tsv",
        ["lang", "pair", "delta"],
        [("de", 1, 2.0), ("de", 2, -1.0), ("fr", 1, 0.5), ("fr", 2, 1.0), ("es", 1, 3.0)],
    )
    out = tmp_path / "r.json"
    code = main(
        [
            "eval_correlate",
            str(x),
            str(y),
            "--x",
            "sxs",
            "--y",
            "delta",
            "--on",
            "lang,pair",
            "--mirror",
            "--n-boot",
            "20",
            "--json",
            str(out),
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "joined 4 rows on lang,pair" in printed
    assert "human.tsv 5 rows, dropped 1 (it/1)" in printed and "cider.tsv 5 rows, dropped 1 (es/1)" in printed
    document = json.loads(out.read_text())
    assert document["n_pairs"] == 4
    assert document["coefficients"]["pearson"]["n"] == 4  # mirrored copies are no new pairs
    assert document["coefficients"]["pearson"]["p_value_doubled"] is None
    assert "n and p-value are those of the real pairs" in printed and "p (2n" not in printed
    assert document["join"]["dropped_left"] == [["it", 1]] and document["join"]["dropped_right"] == [["es", 1]]
    # Mirrored Pearson is the uncentred cosine of the 4 pairs:
    xs, ys = [0.5, -0.2, 0.1, 0.3], [2.0, -1.0, 0.5, 1.0]
    cosine = sum(a * b for a, b in zip(xs, ys)) / (sum(a * a for a in xs) * sum(b * b for b in ys)) ** 0.5
    assert document["coefficients"]["pearson"]["value"] == pytest.approx(cosine)


def test_correlate_errors_are_one_line(tmp_path, capsys):
    table = write_tsv(tmp_path / "x.tsv", ["a", "b"], [(1, 2), (2, 3), (3, 1)])
    assert main(["eval_correlate", str(table), str(table), "--x", "a", "--y", "b"]) == 1
    assert "need --on" in capsys.readouterr().err
    assert main(["eval_correlate", str(table), "--x", "a", "--y", "zzz"]) == 1
    assert "no column 'zzz'" in capsys.readouterr().err


def test_cider_cli_with_baseline_and_groups(tmp_path, capsys):
    refs = write_tsv(tmp_path / "refs.tsv", ["image_id", "caption"], [(1, "the cat sat"), (2, "the dog ran")])
    cands = write_tsv(tmp_path / "a.tsv", ["image_id", "caption"], [(1, "the cat"), (2, "a dog ran")])
    base = write_tsv(tmp_path / "b.tsv", ["image_id", "caption"], [(1, "the cat sat"), (2, "the dog ran")])
    out, js = tmp_path / "items.tsv", tmp_path / "c.json"
    assert (
        main(
            [
                "eval_cider",
                "--candidates",
                str(cands),
                "--references",
                str(refs),
                "--on",
                "image_id",
                "--baseline",
                str(base),
                "--out",
                str(out),
                "--json",
                str(js),
            ]
        )
        == 0
    )
    document = json.loads(js.read_text())
    # the textbook example of test_cider: 3.4867 and 3.2912; the baseline matches exactly: 7.5 each
    assert document["cider_d"]["all"] == pytest.approx((3.48671 + 3.29124) / 2, abs=1e-4)
    assert document["cider_d_baseline"]["all"] == pytest.approx(7.5)
    lines = out.read_text().splitlines()
    assert lines[0] == "image_id\tcider\tcider_baseline\tdelta_cider"
    assert lines[1].startswith("1\t3.48")


def test_cider_cli_refuses_items_without_references(tmp_path, capsys):
    refs = write_tsv(tmp_path / "refs.tsv", ["image_id", "caption"], [(1, "a b")])
    cands = write_tsv(tmp_path / "a.tsv", ["image_id", "caption"], [(1, "a b"), (9, "c")])
    assert main(["eval_cider", "--candidates", str(cands), "--references", str(refs), "--on", "image_id"]) == 1
    assert "no reference" in capsys.readouterr().err


def test_profile_mappings_resolve_recursively():
    from babelforge.core.errors import BabelforgeError
    from babelforge.core.params import for_profile

    def resolve_profile(value, profile):
        return for_profile(value, profile, "eval")

    params = {
        "models": {"sample": [{"id": "tiny"}], "full": [{"id": "big", "revision": "abc"}]},
        "zeroshot": {"images": {"sample": "drawn", "full": "imagenet"}, "seed": 1},
        "retrieval": {"images": {"full": {"xtd": "coco"}, "sample": "drawn"}},
        "plain": {"xtd": "not a profile mapping"},
    }
    full = resolve_profile(params, "full")
    assert full["models"] == [{"id": "big", "revision": "abc"}]
    assert full["zeroshot"] == {"images": "imagenet", "seed": 1}
    assert full["retrieval"]["images"] == {"xtd": "coco"} and full["plain"] == {"xtd": "not a profile mapping"}
    assert resolve_profile(params, "sample")["retrieval"]["images"] == "drawn"
    with pytest.raises(BabelforgeError, match="no value for profile 'full'"):
        resolve_profile({"x": {"sample": 1}}, "full")


def test_cider_cli_empty_reference_cells_are_no_references(tmp_path):
    # An empty cell must neither become the reference "nan" nor count as a reference.
    refs = write_tsv(tmp_path / "refs.tsv", ["image_id", "caption"], [(1, "the cat sat"), (1, ""), (2, "the dog ran")])
    cands = write_tsv(tmp_path / "a.tsv", ["image_id", "caption"], [(1, "the cat sat"), (2, "the dog ran")])
    js = tmp_path / "c.json"
    assert (
        main(
            ["eval_cider", "--candidates", str(cands), "--references", str(refs), "--on", "image_id", "--json", str(js)]
        )
        == 0
    )
    assert json.loads(js.read_text())["cider_d"]["all"] == pytest.approx(7.5)


def test_correlate_refuses_a_one_level_scale(tmp_path, capsys):
    table = write_tsv(tmp_path / "x.tsv", ["a", "b"], [(1, 2), (2, 3), (3, 1)])
    assert main(["eval_correlate", str(table), "--x", "a", "--y", "b", "--scale-m", "1"]) == 1
    assert "--scale-m is 1; it must be at least 2" in capsys.readouterr().err  # the number rule of the flag


def test_correlate_doubled_p_only_on_request_and_labelled(tmp_path, capsys):
    table = write_tsv(tmp_path / "x.tsv", ["a", "b"], [(1, 2), (2, 3), (3, 1), (4, 5), (5, 4), (6, 7)])
    out = tmp_path / "r.json"
    assert (
        main(
            [
                "eval_correlate",
                str(table),
                "--x",
                "a",
                "--y",
                "b",
                "--mirror",
                "--doubled-p",
                "--n-boot",
                "10",
                "--json",
                str(out),
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "p (2n, mirrored)" in printed and "anti-conservative" in printed
    pearson = json.loads(out.read_text())["coefficients"]["pearson"]
    assert pearson["n"] == 6 and pearson["p_value_doubled"] < pearson["p_value"]
    assert main(["eval_correlate", str(table), "--x", "a", "--y", "b", "--doubled-p"]) == 1
    assert "give it with --mirror" in capsys.readouterr().err


def test_cider_cli_states_the_tokenisation_per_group(tmp_path, capsys):
    refs = write_tsv(
        tmp_path / "refs.tsv",
        ["lang", "image_id", "caption"],
        [
            ("zh", 1, "两只猫在沙发上睡觉了"),
            ("zh", 2, "一个男人在街上骑自行车"),
            ("zh", 3, "一只小狗在草地上奔跑"),
            ("en", 1, "two cats slept on the sofa"),
            ("en", 2, "a man rides a bicycle in the street"),
            ("en", 3, "a small puppy runs on the grass"),
        ],
    )
    cands = write_tsv(
        tmp_path / "c.tsv",
        ["lang", "image_id", "caption"],
        [
            ("zh", 1, "两只猫在沙发上睡觉"),
            ("zh", 2, "一个男人在骑自行车"),
            ("zh", 3, "小狗在草地上奔跑"),
            ("en", 1, "two cats sleep on the sofa"),
            ("en", 2, "a man rides a bicycle"),
            ("en", 3, "a puppy runs on the grass"),
        ],
    )
    js = tmp_path / "c.json"
    assert (
        main(
            [
                "eval_cider",
                "--candidates",
                str(cands),
                "--references",
                str(refs),
                "--on",
                "lang,image_id",
                "--group",
                "lang",
                "--json",
                str(js),
            ]
        )
        == 0
    )
    document = json.loads(js.read_text())
    assert document["cider_d"]["zh"] > 1.0 and document["cider_d"]["en"] > 1.0
    assert document["scripts"] == {
        "en": {"characters": [], "words": ["Latn"]},
        "zh": {"characters": ["Hani"], "words": []},
    }
    assert "one token per character" in document["tokenization"]
    printed = capsys.readouterr().out
    assert printed.startswith("tokenisation: ") and "characters: Hani" in printed and "words: Latn" in printed
