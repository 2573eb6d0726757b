from xml.sax.saxutils import quoteattr

import pytest

from babelforge.core.errors import BabelforgeError
from babelforge.core.imagenet import read_imagenet_classes
from babelforge.core.languages import registry
from babelforge.lexicon.omw import OmwSource, WnLmfSource, discover_tab_files, rank_senses, read_tab_lemmas
from babelforge.lexicon.senses import SenseSource

SYNSETS = [f"{c.wnid[1:]}-{c.wnid[0]}" for c in read_imagenet_classes()]


@pytest.fixture(scope="module")
def mirror_source(shared_data):
    return OmwSource(shared_data / "omw")


def test_is_a_sense_source(mirror_source):
    assert isinstance(mirror_source, SenseSource)


def test_every_mirror_file_maps_to_a_registry_language(mirror_source, shared_data):
    tab_files = sorted((shared_data / "omw" / "wns").glob("*/*.tab"))
    assert len(mirror_source.files) == len(tab_files)
    langs = {tab.lang for tab in mirror_source.files}
    assert {"deu_Latn", "fra_Latn", "jpn_Jpan", "nob_Latn", "zho_Hans"} <= langs
    assert all(tab.lang in registry() for tab in mirror_source.files)


def test_mirror_senses_keep_file_order_and_sources(mirror_source, shared_data):
    senses = list(mirror_source.senses(SYNSETS, langs=["deu_Latn"]))
    tench = [s for s in senses if s.synset == "01440764-n"]
    # Wiktionary's German file lists Schleie for the tench
    assert tench[0].lemma == "Schleie" and tench[0].source == "wikt" and tench[0].rank == 0
    assert [s.rank for s in tench] == list(range(len(tench)))
    # the German Wiktionary rows arrive in file order
    wikt = [
        (syn, lemma)
        for syn, lemma in read_tab_lemmas(next(t for t in mirror_source.files if t.path.name == "wn-wikt-deu.tab"))
    ]
    assert [
        (s.synset, s.lemma) for s in sorted(senses, key=lambda s: wikt.index((s.synset, s.lemma))) if s.source == "wikt"
    ][:5] == wikt[:5]


def test_expert_wordnet_ranks_before_wiktionary(mirror_source):
    senses = [s for s in mirror_source.senses(SYNSETS, langs=["fra_Latn"])]
    by_synset = {}
    for s in senses:
        by_synset.setdefault(s.synset, []).append(s)
    mixed = [group for group in by_synset.values() if {"omw:fra", "wikt"} <= {s.source for s in group}]
    assert mixed, "French has synsets in both the WOLF wordnet and Wiktionary"
    for group in mixed:
        kinds = [s.source for s in sorted(group, key=lambda s: s.rank)]
        assert kinds.index("wikt") > max(i for i, k in enumerate(kinds) if k.startswith("omw:"))


def test_only_lemma_rows_are_senses(tmp_path):
    wns = tmp_path / "wns" / "dan"
    wns.mkdir(parents=True)
    (wns / "wn-data-dan.tab").write_text(
        "# DanNet\tdan\thttp://example.org\tCC BY-SA\n"
        "01440764-n\tdan:lemma\tsuder\n"
        "01440764-n\tdan:def\ten fisk\n"
        "01440764-n\tlemma\tsuder_fisk\n"
        "01440764-n\tdan:lemma:root\tsud\n"
        "01440764-n\tdan:lemma\tsuder\n",
        encoding="utf-8",
    )
    senses = list(OmwSource(tmp_path).senses(["01440764-n"]))
    assert [(s.lemma, s.source, s.rank, s.is_translation) for s in senses] == [
        ("suder", "omw:dan", 0, False),
        ("suder_fisk", "omw:dan", 1, False),
    ]


def test_a_file_with_crlf_line_ends_gives_the_same_senses(tmp_path, shared_data):
    """An OMW file saved with CRLF ends (a Windows editor) leaves no lemma, header field or licence ending in `\\r`."""
    original = (shared_data / "omw" / "wns" / "wikt" / "wn-wikt-deu.tab").read_bytes()
    wns = tmp_path / "wns" / "wikt"
    wns.mkdir(parents=True)
    (wns / "wn-wikt-deu.tab").write_bytes(original.replace(b"\n", b"\r\n"))
    crlf = OmwSource(tmp_path)
    (tab,) = discover_tab_files(tmp_path)
    assert not tab.licence.endswith("\r")
    lemmas = [s.lemma for s in crlf.senses(SYNSETS)]
    assert lemmas and not any(lemma.endswith("\r") for lemma in lemmas)
    (tmp_path / "lf" / "wns" / "wikt").mkdir(parents=True)
    (tmp_path / "lf" / "wns" / "wikt" / "wn-wikt-deu.tab").write_bytes(original)
    assert lemmas == [s.lemma for s in OmwSource(tmp_path / "lf").senses(SYNSETS)]


def test_unknown_omw_language_is_an_error(tmp_path):
    wns = tmp_path / "wns" / "wikt"
    wns.mkdir(parents=True)
    (wns / "wn-wikt-qqq.tab").write_text("# Wiktionary\tqqq\thttp://x\tCC BY-SA\n", encoding="utf-8")
    with pytest.raises(BabelforgeError, match="'qqq' is not in resources/languages.tsv"):
        discover_tab_files(tmp_path)


def test_bad_row_names_file_and_line(tmp_path):
    wns = tmp_path / "wns" / "dan"
    wns.mkdir(parents=True)
    (wns / "wn-data-dan.tab").write_text("# DanNet\tdan\thttp://x\tCC\n01440764-n\tdan:lemma\n", encoding="utf-8")
    with pytest.raises(BabelforgeError, match=r"wn-data-dan.tab:2: expected 3"):
        list(OmwSource(tmp_path).senses(["01440764-n"]))


def test_rank_senses_source_order_and_dedup():
    rows = [
        ("01440764-n", "deu_Latn", "A", "wikt"),
        ("01440764-n", "deu_Latn", "B", "omw:x"),
        ("01440764-n", "deu_Latn", "A", "wikt"),
        ("01440764-n", "deu_Latn", "C", "cldr"),
    ]
    ranked = rank_senses(rows, ("omw", "wikt", "cldr"))
    assert [(s.lemma, s.rank) for s in ranked] == [("B", 0), ("A", 1), ("C", 2)]


def lmf_from_tab(tab_rows, lexicon_id, language):
    """A WN-LMF document with the same synset members, in the same order, as `.tab` rows."""
    members, entries = {}, []
    for index, (synset, lemma) in enumerate(tab_rows):
        pos = synset[-1]
        sense_id = f"{lexicon_id}-{synset}-{index}"
        members.setdefault(synset, []).append(sense_id)
        entries.append(
            f'<LexicalEntry id="{lexicon_id}-e{index}"><Lemma writtenForm={quoteattr(lemma)} partOfSpeech="{pos}"/>'
            f'<Sense id="{sense_id}" synset="{lexicon_id}-{synset}"/></LexicalEntry>'
        )
    synsets = [
        f'<Synset id="{lexicon_id}-{s}" ili="" partOfSpeech="{s[-1]}" members="{" ".join(m)}"/>'
        for s, m in members.items()
    ]
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<!DOCTYPE LexicalResource SYSTEM "http://globalwordnet.github.io/schemas/WN-LMF-1.1.dtd">\n'
        '<LexicalResource xmlns:dc="https://globalwordnet.github.io/schemas/dc/">'
        f'<Lexicon id="{lexicon_id}" label="test" language="{language}" email="x@example.org" '
        'license="https://creativecommons.org/licenses/by/4.0/" version="1.4">'
        + "".join(entries)
        + "".join(synsets)
        + "</Lexicon></LexicalResource>\n"
    )


def test_wn_lmf_path_gives_the_same_senses_as_the_tab_path(shared_data, tmp_path):
    # The Danish wordnet of the mirror, as raw .tab and as a WN-LMF package with the same data.
    tab_source = OmwSource(shared_data / "omw")
    dan = next(t for t in tab_source.files if t.path.name == "wn-data-dan.tab")
    rows = list(read_tab_lemmas(dan))
    package = tmp_path / "omw-da.xml"
    package.write_text(lmf_from_tab(rows, "omw-dan", "da"), encoding="utf-8")
    lmf = WnLmfSource([package], tmp_path / "wn-db")
    from_lmf = list(lmf.senses(SYNSETS))
    from_tab = [s for s in tab_source.senses(SYNSETS, langs=["dan_Latn"]) if s.source == "omw:dan"]
    assert len(from_tab) == len(rows) > 100
    assert from_lmf == from_tab
    # reading again (package already in the database) gives the same
    assert list(WnLmfSource([package], tmp_path / "wn-db").senses(SYNSETS)) == from_tab
