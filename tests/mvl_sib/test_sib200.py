from __future__ import annotations

import pytest

from babelforge.core.errors import BabelforgeError
from babelforge.mvl_sib.sib200 import SPLIT_SIZES, SPLITS, TOPICS, read_corpus, read_split


def _raw_rows(path):
    """(index_id, raw text field) per data line, split by hand: the oracle for the reader."""
    lines = path.read_text(encoding="utf-8").split("\n")[1:]
    return [tuple(line.split("\t", 2)[::2]) for line in lines if line]


def _unquote(field: str) -> str:
    if field.startswith('"') and field.endswith('"'):
        return field[1:-1].replace('""', '"')
    return field


def test_whole_mirror_is_parallel_with_sib200_shape(corpus):
    assert len(corpus.languages) == 205
    assert len(corpus) == 1004
    assert [corpus.splits.count(split) for split in SPLITS] == [SPLIT_SIZES[s] for s in SPLITS] == [701, 99, 204]
    assert sorted(set(corpus.topics)) == list(TOPICS)
    assert len(set(corpus.ids)) == 1004
    assert all(len(texts) == 1004 for texts in corpus.texts.values())


def test_quoted_rows_are_unquoted_exactly(corpus, sib_dir):
    quoted = 0
    for lang in ("eng_Latn", "fra_Latn", "acm_Arab"):
        offset = 0
        for split in SPLITS:
            rows = _raw_rows(sib_dir / lang / f"{split}.tsv")
            for i, (raw_id, field) in enumerate(rows):
                assert corpus.ids[offset + i] == int(raw_id)
                if field.startswith('"'):
                    quoted += 1
                    text = corpus.texts[lang][offset + i]
                    assert text == _unquote(field)
                    assert '"' in text and len(text) < len(field)
            offset += len(rows)
    assert quoted > 10  # the chosen languages do have pandas-quoted rows


def test_leading_spaces_are_kept(corpus, sib_dir):
    found = 0
    for lang in corpus.languages[:40]:
        offset = 0
        for split in SPLITS:
            rows = _raw_rows(sib_dir / lang / f"{split}.tsv")
            for i, (_, field) in enumerate(rows):
                if field.startswith(" "):
                    found += 1
                    assert corpus.texts[lang][offset + i] == field
                    assert corpus.texts[lang][offset + i].startswith(" ")
            offset += len(rows)
    assert found > 0


def test_reader_agrees_with_pandas_default_quoting(corpus, sib_dir):
    import pandas as pd

    for lang in ("eng_Latn", "ace_Arab", "nqo_Nkoo"):
        texts = []
        for split in SPLITS:
            frame = pd.read_csv(sib_dir / lang / f"{split}.tsv", sep="\t", dtype=str, keep_default_na=False)
            texts.extend(frame["text"])
        assert tuple(texts) == corpus.texts[lang]


def test_naive_split_would_corrupt_but_reader_does_not(sib_dir):
    data = read_split(sib_dir / "eng_Latn" / "dev.tsv")
    naive = [line.split("\t")[2] for line in (sib_dir / "eng_Latn" / "dev.tsv").read_text().splitlines()[1:]]
    differing = [(a, b) for a, b in zip(data.texts, naive) if a != b]
    assert differing and all(b.startswith('"') for _, b in differing)


def _rewrite(path, edit):
    lines = path.read_text(encoding="utf-8").split("\n")
    path.write_text("\n".join(edit(lines)), encoding="utf-8")


def test_small_copy_reads(small_sib):
    corpus = read_corpus(small_sib)
    assert corpus.languages == ("ace_Arab", "eng_Latn", "fra_Latn")


def test_order_difference_names_file_and_line(small_sib):
    def swap(lines):
        lines[5], lines[6] = lines[6], lines[5]
        return lines

    _rewrite(small_sib / "fra_Latn" / "dev.tsv", swap)
    with pytest.raises(BabelforgeError, match=r"fra_Latn/dev\.tsv:6: index_id"):
        read_corpus(small_sib)


def test_category_difference_names_file_and_line(small_sib):
    def recategorise(lines):
        raw_id, topic, text = lines[9].split("\t", 2)
        lines[9] = "\t".join([raw_id, "sports" if topic != "sports" else "travel", text])
        return lines

    _rewrite(small_sib / "fra_Latn" / "train.tsv", recategorise)
    with pytest.raises(BabelforgeError, match=r"fra_Latn/train\.tsv:10: index_id \d+ has category"):
        read_corpus(small_sib)


def test_missing_row_is_an_error(small_sib):
    _rewrite(small_sib / "fra_Latn" / "test.tsv", lambda lines: lines[:50] + lines[51:])
    with pytest.raises(BabelforgeError, match=r"fra_Latn/test\.tsv: 203 sentences"):
        read_corpus(small_sib)


def test_wrong_split_size_in_first_language(small_sib):
    _rewrite(small_sib / "ace_Arab" / "dev.tsv", lambda lines: lines[:-3] + lines[-2:])
    with pytest.raises(BabelforgeError, match=r"ace_Arab/dev\.tsv: 98 sentences, SIB-200 dev has 99"):
        read_corpus(small_sib)


def test_unknown_topic_names_line(small_sib):
    def bad_topic(lines):
        raw_id, _, text = lines[3].split("\t", 2)
        lines[3] = "\t".join([raw_id, "weather", text])
        return lines

    _rewrite(small_sib / "ace_Arab" / "train.tsv", bad_topic)
    with pytest.raises(BabelforgeError, match=r"ace_Arab/train\.tsv:4: category 'weather'"):
        read_corpus(small_sib)


def test_bad_header_and_field_count(small_sib):
    _rewrite(small_sib / "eng_Latn" / "dev.tsv", lambda lines: ["id\tcategory\ttext"] + lines[1:])
    with pytest.raises(BabelforgeError, match=r"eng_Latn/dev\.tsv:1: header"):
        read_split(small_sib / "eng_Latn" / "dev.tsv")
    _rewrite(small_sib / "eng_Latn" / "test.tsv", lambda lines: lines[:7] + [lines[7] + "\textra"] + lines[8:])
    with pytest.raises(BabelforgeError, match=r"eng_Latn/test\.tsv:8: 4 fields"):
        read_split(small_sib / "eng_Latn" / "test.tsv")


def test_unterminated_quote_is_an_error(small_sib):
    def break_quote(lines):
        raw_id, topic, text = lines[2].split("\t", 2)
        lines[2] = "\t".join([raw_id, topic, '"' + text])
        return lines

    _rewrite(small_sib / "eng_Latn" / "train.tsv", break_quote)
    with pytest.raises(BabelforgeError, match=r"eng_Latn/train\.tsv"):
        read_split(small_sib / "eng_Latn" / "train.tsv")


def test_missing_file_and_bad_code(small_sib):
    (small_sib / "fra_Latn" / "dev.tsv").unlink()
    with pytest.raises(BabelforgeError, match=r"fra_Latn/dev\.tsv: cannot open"):
        read_corpus(small_sib)
    (small_sib / "english").mkdir()
    with pytest.raises(BabelforgeError, match="not a SIB-200 code"):
        read_corpus(small_sib, ["english"])
