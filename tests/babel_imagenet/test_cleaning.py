"""Lemma cleaning, rule by rule, on the forms the OMW mirror actually has."""

import pytest

from babelforge.babel_imagenet.cleaning import clean_lemma, normalise_lemma


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
