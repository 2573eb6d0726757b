"""Lemma cleaning, rule by rule, on the forms the OMW mirror actually has."""

import pytest

from babelforge.babel_imagenet.cleaning import (
    MAX_WORDS,
    clean_lemma,
    is_gloss,
    normalise_lemma,
    repair_characters,
    typed_label_problem,
)


def test_normalise_underscores_nfc_and_spaces():
    assert normalise_lemma("  Weißer_Hai ") == "Weißer Hai"
    assert normalise_lemma("Cafe\u0301  au_lait") == "Café au lait"  # combining accent composed


def test_plain_lemma_is_untouched():
    result = clean_lemma("Schleie")
    assert (result.forms, result.cleaned, result.dropped) == (("Schleie",), (), None)


@pytest.mark.parametrize(
    "raw, kind",
    [
        ("GAP!", "placeholder"),  # Italian and Hebrew wordnets
        ("PSEUDOGAP!", "placeholder"),
        ("brúarstólpi. Algengari merking er þó 'bryggja'.", "gloss"),  # Icelandic: a note, not a name
        (
            "Granny-Smith est un cultivar de pomme très populaire apparu en Australie en 1868 suite à un "
            "'semis chanceux' réalisé par une vieille dame",
            "gloss",
        ),
        ("G", "symbol"),
        ("g", "symbol"),  # French *cellular telephone*
        ("\ueef2鱼", "unreadable"),  # a private-use character stands for a Han letter
        ("!", "empty"),
        ("()", "empty"),
    ],
)
def test_whole_lemma_dropped(raw, kind):
    result = clean_lemma(raw)
    assert result.forms == () and result.dropped == kind


@pytest.mark.parametrize(
    "raw, forms, cleaned",
    [
        ("!טַוָּס", ("טַוָּס",), ("markup",)),  # Hebrew wordnet's leading `!`
        ("[[wandelende]] [[tak]]", ("wandelende tak",), ("markup",)),  # Dutch wiki links
        ("[[target|shown]]", ("shown",), ("markup",)),
        ("lynx (mammifère)|fr:lynx", ("lynx",), ("qualifier", "markup")),  # French: qualifier and link target
        ("agama (reptile)", ("agama",), ("qualifier",)),
        ("orang-oetan(g)", ("orang-oetan",), ("qualifier",)),
        ("serre|serres", ("serre", "serres"), ("list",)),
        ("borstje, salopette", ("borstje", "salopette"), ("list",)),
        ("tricycle ; trike", ("tricycle", "trike"), ("list",)),
        ("mercado/mercadinho", ("mercado", "mercadinho"), ("list",)),
        ("n\x9cud", ("nœud",), ("characters",)),  # a Windows-1252 byte read as Latin-1
        ("tééhoołtsódii\u200e", ("tééhoołtsódii",), ("characters",)),  # left-to-right mark
        ("ქოს\xadმე\xadნი", ("ქოსმენი",), ("characters",)),  # soft hyphens
        ("‘рт", ("рт",), ("markup",)),  # a stray opening quote
    ],
)
def test_markup_is_stripped_and_the_name_kept(raw, forms, cleaned):
    result = clean_lemma(raw)
    assert (result.forms, result.cleaned, result.dropped) == (forms, cleaned, None)


@pytest.mark.parametrize(
    "raw",
    [
        "pies św. Bernarda",
        "b.h.",
        "C.D.-speler",
        "bernard-l’hermite",
        "libèl·lula",
        "ג׳יפ",
        "á",
        "ê",  # one-letter words with an accent: Galician *wing*, Ladin *bee*
        "虎",
        "벌",
        "ஈ",  # one-character names in other scripts
        "chidí naaʼnaʼí beeʼeldǫǫh bikááʼ dah naaznilígíí",  # Navajo descriptive names are long, not glosses
        "به\u200cرکۆشه\u200c",  # the zero-width non-joiner is spelling, not noise
    ],
)
def test_real_names_pass_unchanged(raw):
    result = clean_lemma(raw)
    assert result.forms == (normalise_lemma(raw),) and result.cleaned == () and result.dropped is None


def test_a_list_keeps_its_good_parts_and_names_the_first_drop():
    result = clean_lemma("G, cellulaire")
    assert result.forms == ("cellulaire",) and result.cleaned == ("list",)
    assert clean_lemma("G, g").dropped == "symbol"


@pytest.mark.parametrize(
    "text, gloss",
    [
        # A sentence needs four words: the Icelandic note of three is kept as a name, of four it is a gloss.
        ("merking er bryggja.", False),
        ("Algengari merking er bryggja.", True),
        ("pies św. Bernarda", False),  # three words with an inner sentence mark: Polish *St. Bernard*
        ("brúarstólpi. Oftast þó bryggja", True),  # four words, a sentence ends inside
        # Without a sentence mark only the length counts: ten words are still a name, eleven a gloss.
        ("cultivar de pomme très populaire apparu en Australie en 1868", False),
        ("Granny-Smith cultivar de pomme très populaire apparu en Australie en 1868", True),
    ],
)
def test_gloss_word_count_boundaries(text, gloss):
    assert MAX_WORDS == 10
    assert is_gloss(text) is gloss
    assert (clean_lemma(text).dropped == "gloss") is gloss


@pytest.mark.parametrize(
    "raw, repaired",
    [
        ("billet de 5 \x80", "billet de 5 €"),  # 0x80, the first byte of the C1 block
        ("L'HA\x9f-LES-ROSES", "L'HAŸ-LES-ROSES"),  # 0x9f, the last
    ],
)
def test_windows_1252_bytes_at_both_ends_of_the_c1_block_are_repaired(raw, repaired):
    assert repair_characters(raw) == (repaired, True)


@pytest.mark.parametrize(
    "label, problem",
    [
        ("<img src=x onerror=alert(1)>Hund", "holds markup ('<img src=x onerror=alert(1)>')"),
        ("Hund</b>", "holds markup ('</b>')"),
        ("Hund <!-- x -->", "holds markup ('<!-- x -->')"),
        ("Hund {} Katze", "holds a { or }, which prompts read as the template's {} slot"),
        ("Hund {0}", "holds a { or }"),
        ("Hund\x00", "holds the control character U+0000"),
        ("Hund\x1b[31m", "holds the control character U+001B"),
        ("Hund\x85", "holds the control character U+0085"),  # a C1 control: refused, not repaired
        # what `clean_lemma` would change or drop, refused with what it would make of it
        ("Fliege (Insekt)", "is not clean (qualifier): the rules would make it 'Fliege'"),
        ("Hund, Katze", "is not clean (list): the rules would make it 'Hund' / 'Katze'"),
        ("[[Hund]]", "is not clean (markup): the rules would make it 'Hund'"),
        ("Hund\u202e", "is not clean (characters): the rules would make it 'Hund'"),  # a bidi override
        ("GAP!", "is not a name: the rules drop it as placeholder"),
        ("G", "is not a name: the rules drop it as symbol"),
        ("123", "is not a name: the rules drop it as empty"),
    ],
)
def test_a_typed_label_gets_the_cleaning_of_a_source_lemma_and_no_markup(label, problem):
    found = typed_label_problem(label)
    assert found is not None and found.startswith(f"label {label!r} ") and problem in found


@pytest.mark.parametrize("label", ["Querbinder", "Weißer Hai", "a < b", "=Hund", "'Hund", "می‌خواهم", "鱼"])
def test_a_clean_typed_label_passes(label):
    assert typed_label_problem(label) is None


def test_an_english_label_keeps_its_qualifier_but_not_markup():
    assert typed_label_problem("kite (bird of prey)", cleaned=False) is None  # a CLIP name as it is
    assert "markup" in typed_label_problem("kite<b>", cleaned=False)
