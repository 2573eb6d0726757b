"""Which writing system a text is in: ISO 15924 scripts from Unicode code point ranges.

Python's `unicodedata` has no script property, so this module carries a compact table of
code point ranges per ISO 15924 script (the Unicode blocks each script's letters live in).
It is an approximation of the Unicode `Script` property that is good enough to tell a
language's writing system apart from another's:

* only letters and combining marks (general categories L* and M*) get a script; digits,
  punctuation, symbols and spaces are Common (`Zyyy`) whichever block they sit in;
* combining diacritics of the generic blocks are Inherited (`Zinh`) and are not counted;
* a letter outside every listed range is Unknown (`Zzzz`).

Composite ISO 15924 codes used by language tags are expanded by `expand_script`: `Jpan`
(Han + Hiragana + Katakana), `Kore` (Hangul + Han), `Hrkt` (kana), and `Hans` / `Hant`
(Han). Simplified and Traditional Chinese share the Unicode script Han; to tell them apart
`han_variant` looks a character up in a small table of characters that exist only in one
of the two standards (common simplified/traditional pairs, ambiguous ones left out).

Everything here is pure and stdlib only; the audit, prompts and captions checks share it.
"""

from __future__ import annotations

import bisect
import unicodedata
from collections import Counter

COMMON = "Zyyy"
INHERITED = "Zinh"
UNKNOWN = "Zzzz"

# (first, last, script), inclusive code point ranges. Order does not matter here; the
# table is sorted once at import. Ranges must not overlap (checked at import).
_RANGES: tuple[tuple[int, int, str], ...] = (
    # Latin
    (0x0041, 0x005A, "Latn"),
    (0x0061, 0x007A, "Latn"),
    (0x00AA, 0x00AA, "Latn"),
    (0x00BA, 0x00BA, "Latn"),
    (0x00C0, 0x00D6, "Latn"),
    (0x00D8, 0x00F6, "Latn"),
    (0x00F8, 0x02AF, "Latn"),
    (0x02B0, 0x02B8, "Latn"),
    (0x1D00, 0x1D25, "Latn"),
    (0x1D2C, 0x1D5C, "Latn"),
    (0x1D62, 0x1D65, "Latn"),
    (0x1D6B, 0x1D77, "Latn"),
    (0x1D79, 0x1DBE, "Latn"),
    (0x1E00, 0x1EFF, "Latn"),
    (0x2071, 0x2071, "Latn"),
    (0x207F, 0x207F, "Latn"),
    (0x2090, 0x209C, "Latn"),
    (0x2C60, 0x2C7F, "Latn"),
    (0xA722, 0xA7FF, "Latn"),
    (0xAB30, 0xAB5A, "Latn"),
    (0xAB5C, 0xAB64, "Latn"),
    (0xFB00, 0xFB06, "Latn"),
    (0xFF21, 0xFF3A, "Latn"),
    (0xFF41, 0xFF5A, "Latn"),
    # Combining marks shared by many scripts
    (0x0300, 0x036F, INHERITED),
    (0x1AB0, 0x1AFF, INHERITED),
    (0x1DC0, 0x1DFF, INHERITED),
    (0x20D0, 0x20FF, INHERITED),
    (0xFE00, 0xFE0F, INHERITED),
    (0xFE20, 0xFE2F, INHERITED),
    # Greek, Coptic
    (0x0370, 0x03E1, "Grek"),
    (0x03E2, 0x03EF, "Copt"),
    (0x03F0, 0x03FF, "Grek"),
    (0x1D26, 0x1D2A, "Grek"),
    (0x1D5D, 0x1D61, "Grek"),
    (0x1D66, 0x1D6A, "Grek"),
    (0x1DBF, 0x1DBF, "Grek"),
    (0x1F00, 0x1FFF, "Grek"),
    (0x2C80, 0x2CFF, "Copt"),
    # Cyrillic
    (0x0400, 0x052F, "Cyrl"),
    (0x1C80, 0x1C8F, "Cyrl"),
    (0x1D2B, 0x1D2B, "Cyrl"),
    (0x1D78, 0x1D78, "Cyrl"),
    (0x2DE0, 0x2DFF, "Cyrl"),
    (0xA640, 0xA69F, "Cyrl"),
    # Middle East
    (0x0531, 0x058F, "Armn"),
    (0xFB13, 0xFB17, "Armn"),
    (0x0591, 0x05FF, "Hebr"),
    (0xFB1D, 0xFB4F, "Hebr"),
    (0x0600, 0x06FF, "Arab"),
    (0x0750, 0x077F, "Arab"),
    (0x0870, 0x08FF, "Arab"),
    (0xFB50, 0xFDFF, "Arab"),
    (0xFE70, 0xFEFF, "Arab"),
    (0x0700, 0x074F, "Syrc"),
    (0x0860, 0x086F, "Syrc"),
    (0x0780, 0x07BF, "Thaa"),
    (0x07C0, 0x07FF, "Nkoo"),
    (0x0800, 0x083F, "Samr"),
    (0x0840, 0x085F, "Mand"),
    # South Asia
    (0x0900, 0x097F, "Deva"),
    (0xA8E0, 0xA8FF, "Deva"),
    (0x0980, 0x09FF, "Beng"),
    (0x0A00, 0x0A7F, "Guru"),
    (0x0A80, 0x0AFF, "Gujr"),
    (0x0B00, 0x0B7F, "Orya"),
    (0x0B80, 0x0BFF, "Taml"),
    (0x0C00, 0x0C7F, "Telu"),
    (0x0C80, 0x0CFF, "Knda"),
    (0x0D00, 0x0D7F, "Mlym"),
    (0x0D80, 0x0DFF, "Sinh"),
    (0x0F00, 0x0FFF, "Tibt"),
    (0x1900, 0x194F, "Limb"),
    (0x1C00, 0x1C4F, "Lepc"),
    (0x1C50, 0x1C7F, "Olck"),
    (0xAAE0, 0xAAFF, "Mtei"),
    (0xABC0, 0xABFF, "Mtei"),
    # South-East Asia
    (0x0E00, 0x0E7F, "Thai"),
    (0x0E80, 0x0EFF, "Laoo"),
    (0x1000, 0x109F, "Mymr"),
    (0xA9E0, 0xA9FF, "Mymr"),
    (0xAA60, 0xAA7F, "Mymr"),
    (0x1780, 0x17FF, "Khmr"),
    (0x19E0, 0x19FF, "Khmr"),
    (0x1700, 0x171F, "Tglg"),
    (0x1720, 0x173F, "Hano"),
    (0x1740, 0x175F, "Buhd"),
    (0x1760, 0x177F, "Tagb"),
    (0x1950, 0x197F, "Tale"),
    (0x1980, 0x19DF, "Talu"),
    (0x1A00, 0x1A1F, "Bugi"),
    (0x1A20, 0x1AAF, "Lana"),
    (0x1B00, 0x1B7F, "Bali"),
    (0x1B80, 0x1BBF, "Sund"),
    (0x1CC0, 0x1CCF, "Sund"),
    (0x1BC0, 0x1BFF, "Batk"),
    (0xA980, 0xA9DF, "Java"),
    (0xAA00, 0xAA5F, "Cham"),
    (0xA4D0, 0xA4FF, "Lisu"),
    # Caucasus, Africa, Americas, North
    (0x10A0, 0x10FF, "Geor"),
    (0x1C90, 0x1CBF, "Geor"),
    (0x2D00, 0x2D2F, "Geor"),
    (0x1200, 0x139F, "Ethi"),
    (0x2D80, 0x2DDF, "Ethi"),
    (0xAB00, 0xAB2F, "Ethi"),
    (0x2D30, 0x2D7F, "Tfng"),
    (0xA500, 0xA63F, "Vaii"),
    (0xA6A0, 0xA6FF, "Bamu"),
    (0x1E900, 0x1E95F, "Adlm"),
    (0x13A0, 0x13FF, "Cher"),
    (0xAB70, 0xABBF, "Cher"),
    (0x1400, 0x167F, "Cans"),
    (0x18B0, 0x18FF, "Cans"),
    (0x1680, 0x169F, "Ogam"),
    (0x16A0, 0x16FF, "Runr"),
    (0x1800, 0x18AF, "Mong"),
    # East Asia
    (0x1100, 0x11FF, "Hang"),
    (0x3130, 0x318F, "Hang"),
    (0xA960, 0xA97F, "Hang"),
    (0xAC00, 0xD7FF, "Hang"),
    (0xFFA0, 0xFFDC, "Hang"),
    (0x3041, 0x309F, "Hira"),
    (0x30A0, 0x30FF, "Kana"),
    (0x31F0, 0x31FF, "Kana"),
    (0xFF66, 0xFF9F, "Kana"),
    (0x1B000, 0x1B0FF, "Kana"),
    (0x3100, 0x312F, "Bopo"),
    (0x31A0, 0x31BF, "Bopo"),
    (0xA000, 0xA4CF, "Yiii"),
    (0x2E80, 0x2FDF, "Hani"),
    (0x3005, 0x3005, "Hani"),
    (0x3007, 0x3007, "Hani"),
    (0x3021, 0x3029, "Hani"),
    (0x3038, 0x303B, "Hani"),
    (0x3400, 0x4DBF, "Hani"),
    (0x4E00, 0x9FFF, "Hani"),
    (0xF900, 0xFAFF, "Hani"),
    (0x20000, 0x2FA1F, "Hani"),
    (0x30000, 0x323AF, "Hani"),
)

_SORTED = sorted(_RANGES)
_STARTS = [first for first, _, _ in _SORTED]
for (_, prev_last, prev_script), (next_first, _, next_script) in zip(_SORTED, _SORTED[1:]):
    if next_first <= prev_last:  # pragma: no cover - guards edits to the table
        raise AssertionError(f"script ranges overlap at U+{next_first:04X} ({prev_script}/{next_script})")

# ISO 15924 codes that name a combination (or a variant) of Unicode scripts.
COMPOSITE_SCRIPTS: dict[str, frozenset[str]] = {
    "Jpan": frozenset({"Hani", "Hira", "Kana"}),
    "Kore": frozenset({"Hang", "Hani"}),
    "Hrkt": frozenset({"Hira", "Kana"}),
    "Hans": frozenset({"Hani"}),
    "Hant": frozenset({"Hani"}),
}

# Characters that belong to only one of the two Chinese standards: position i of one
# string is the counterpart of position i of the other. Pairs where the simplified form
# is also an ordinary traditional character (后/後, 干/乾, 里/裡, 面/麵, 台/臺 …) are left out.
_SIMPLIFIED = (
    "这个张图说国们时来为对会学发经现进动过点开关长东车书门问间见觉画写鱼鸟马龙电话语读请谁让还"
    "体样种丽难红绿蓝颜脏坏纹摄视频戏织绘纸净宝贝亲爱处号单双边远极录饰尔岁买卖钱铁银钟镜厂广产"
    "业义乐习乡亚亿仅从众优伞传伤伦伟专与头实无没费运员带饭汉热爷猫狗虾蛇蚁鹰鸭鸡鹅桥楼灯轮船帮"
    "钢笔铅盘壶锅碗柜床椅窗帘衬裤袜鞋"
)
_TRADITIONAL = (
    "這個張圖說國們時來為對會學發經現進動過點開關長東車書門問間見覺畫寫魚鳥馬龍電話語讀請誰讓還"
    "體樣種麗難紅綠藍顏髒壞紋攝視頻戲織繪紙淨寶貝親愛處號單雙邊遠極錄飾爾歲買賣錢鐵銀鐘鏡廠廣產"
    "業義樂習鄉亞億僅從眾優傘傳傷倫偉專與頭實無沒費運員帶飯漢熱爺貓狗蝦蛇蟻鷹鴨雞鵝橋樓燈輪船幫"
    "鋼筆鉛盤壺鍋碗櫃床椅窗簾襯褲襪鞋"
)
# Characters spelled the same in both standards sneak into pair lists easily; drop them.
_SHARED = {s for s, t in zip(_SIMPLIFIED, _TRADITIONAL) if s == t}
SIMPLIFIED_ONLY = frozenset(_SIMPLIFIED) - _SHARED
TRADITIONAL_ONLY = frozenset(_TRADITIONAL) - _SHARED
assert len(_SIMPLIFIED) == len(_TRADITIONAL) and not SIMPLIFIED_ONLY & TRADITIONAL_ONLY


def script_of(char: str) -> str:
    """The ISO 15924 script of one character (`Zyyy` for non-letters, `Zzzz` if unlisted)."""
    category = unicodedata.category(char)
    if category[0] not in "LM":
        return COMMON
    code = ord(char)
    index = bisect.bisect_right(_STARTS, code) - 1
    if index >= 0:
        first, last, script = _SORTED[index]
        if first <= code <= last:
            return script
    return INHERITED if category[0] == "M" else UNKNOWN


def script_counts(text: str) -> Counter:
    """Counts of letters (and script-specific marks) per script; Common and Inherited skipped."""
    return Counter(s for s in map(script_of, text) if s not in (COMMON, INHERITED))


def script_shares(text: str) -> dict[str, float]:
    """Share of each script among the text's letters, largest first; {} when it has none."""
    counts = script_counts(text)
    total = sum(counts.values())
    return {script: n / total for script, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))}


def dominant_script(text: str) -> str | None:
    """The script most letters are in (ties: alphabetical), or None for a text without letters."""
    shares = script_shares(text)
    return next(iter(shares), None)


def han_variant(text: str) -> str | None:
    """`Hans` / `Hant` when the text's standard-specific Han characters are mostly of one
    standard (majority vote over the small table), None when it has none or a tie."""
    simplified = sum(char in SIMPLIFIED_ONLY for char in text)
    traditional = sum(char in TRADITIONAL_ONLY for char in text)
    if simplified == traditional:
        return None
    return "Hans" if simplified > traditional else "Hant"


def expand_script(code: str) -> frozenset[str]:
    """The Unicode scripts an ISO 15924 code covers (`Jpan` -> Hani, Hira, Kana)."""
    return COMPOSITE_SCRIPTS.get(code, frozenset({code}))


def expected_script_share(text: str, expected: tuple[str, ...] | list[str]) -> float | None:
    """Share of the text's letters written in one of the `expected` ISO 15924 scripts.

    When exactly one of `Hans` / `Hant` is among `expected` (a plain `Hani` beside it does not
    matter), a text that `han_variant` judges to be in the other standard has none of its Han
    letters counted as expected: Traditional text scores low for `zho_Hans`, however few of its
    characters differ. None when the text has no letters.
    """
    allowed: set[str] = set()
    for code in expected:
        allowed |= expand_script(code)
    variants = {code for code in expected if code in ("Hans", "Hant")}
    if len(variants) == 1 and han_variant(text) not in (None, *variants):
        allowed.discard("Hani")
    counts = script_counts(text)
    total = sum(counts.values())
    if not total:
        return None
    return sum(n for script, n in counts.items() if script in allowed) / total
