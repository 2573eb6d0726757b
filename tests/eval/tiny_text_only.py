"""Tiny random text-only checkpoints of the `mclip` and `st` families, built offline with each
family's own library, to pair with the project's tiny CLIP image tower (`+<tiny clip folder>`).

- `build_tiny_xlmr`: a 2-layer XLM-R with a sentencepiece tokenizer trained on `CORPUS` (the
  tokenizer is trained the way the tiny COMETKiwi's is: `babelforge.captions.qe`). Its tokenizer
  states no length limit; its position table reads `POSITIONS` tokens.
- `build_tiny_mclip`: multilingual-clip's `MCLIPConfig` + `MultilingualCLIP` over that XLM-R
  (`modelBase` is the XLM-R folder's absolute path), saved with `save_pretrained` and its tokenizer.
- `build_tiny_st`: sentence-transformers `Transformer` (that XLM-R) + mean `Pooling` + `Dense` to
  the image dim, saved with `.save()`.
- `build_tiny_bert`: a 2-layer BERT with a WordPiece vocabulary of `CORPUS`, saved as the legacy M-CLIP
  Hub repos are (config.json, weights, vocab.txt, tokenizer config; no tokenizer.json);
  `build_tiny_mclip_legacy`: that BERT plus its linear head (`tiny_legacy_head`: `[weight, bias]` numpy
  arrays) pickled as `LEGACY_HEAD`, the `mclip_legacy` family's folder layout.

Same seed, same weights. `DIM` is the tiny CLIP's projection dim (`babelforge.eval.sample.tiny_clip_stage`).
"""

from __future__ import annotations

from pathlib import Path

DIM = 16  # the tiny CLIP's projection_dim: what the text parts project to
HIDDEN = 32
POSITIONS = 16  # tokens the tiny XLM-R reads (its table has 2 more: RoBERTa positions start after <pad>)

CORPUS = (
    "a photo of a dog",
    "a photo of a cat in the snow",
    "two people riding bicycles along the river",
    "ein Foto von einem Hund",
    "eine Katze schläft auf dem Sofa",
    "une photo d'un chat noir",
    "un perro corre en la playa",
    "una foto di una montagna",
    "фотография собаки на траве",
    "кошка сидит на окне",
    "犬の写真",
    "雪の中の猫",
    "一只狗在草地上奔跑",
    "صورة كلب في الحديقة",
    "कुत्ते की एक तस्वीर",
    "picha ya mbwa",
    "bir köpeğin fotoğrafı",
    "ένα σκυλί στην παραλία",
    "강아지 사진",
    "zdjęcie psa na trawie",
)


def build_tiny_xlmr(
    folder: str | Path,
    seed: int = 0,
    corpus: tuple[str, ...] = CORPUS,
    positions: int = POSITIONS,
    layers: int = 2,
    vocab_size: int = 400,
) -> Path:
    """A random tiny `XLMRobertaModel` reading `positions` tokens, and its tokenizer trained on
    `corpus`, saved as a transformers folder (the text tower of the tiny M-CLIP, sentence-transformers
    and OpenCLIP XLM-R models)."""
    import torch
    from transformers import AutoTokenizer, XLMRobertaConfig, XLMRobertaModel

    from babelforge.captions.qe import _train_tokenizer

    folder = Path(folder)
    folder.mkdir(parents=True)
    _train_tokenizer(sorted(set(corpus)), folder, vocab_size=vocab_size)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    config = XLMRobertaConfig(
        vocab_size=len(tokenizer),
        hidden_size=HIDDEN,
        num_hidden_layers=layers,
        num_attention_heads=2,
        intermediate_size=2 * HIDDEN,
        max_position_embeddings=positions + 2,
        type_vocab_size=1,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(seed)
    XLMRobertaModel(config).eval().save_pretrained(folder)  # with the pooler AutoModel builds (unused)
    return folder


def build_tiny_mclip(folder: str | Path, xlmr: str | Path, seed: int = 0, dim: int = DIM) -> Path:
    """A `MultilingualCLIP` over the tiny XLM-R at `xlmr`, projecting to `dim`, saved with its tokenizer."""
    import torch
    from multilingual_clip.Config_MCLIP import MCLIPConfig
    from multilingual_clip.pt_multilingual_clip import MultilingualCLIP
    from transformers import AutoTokenizer

    folder = Path(folder)
    config = MCLIPConfig(modelBase=str(Path(xlmr).resolve()), transformerDimSize=HIDDEN, imageDimSize=dim)
    torch.manual_seed(seed)
    model = MultilingualCLIP(config).eval()
    # A random head on top of random weights: spread its outputs so texts differ clearly.
    with torch.no_grad():
        model.LinearTransformation.weight.normal_(0, 1)
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(xlmr).save_pretrained(folder)
    return folder


def build_tiny_st(folder: str | Path, xlmr: str | Path, seed: int = 0, dim: int = DIM) -> Path:
    """A sentence-transformers text model: the tiny XLM-R, mean pooling, a linear `Dense` to `dim`."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Dense, Pooling, Transformer

    folder = Path(folder)
    torch.manual_seed(seed)
    transformer = Transformer(str(xlmr), max_seq_length=POSITIONS)
    pooling = Pooling(HIDDEN, pooling_mode="mean")
    dense = Dense(HIDDEN, dim, bias=False, activation_function=torch.nn.Identity())
    with torch.no_grad():
        dense.linear.weight.normal_(0, 1)
    SentenceTransformer(modules=[transformer, pooling, dense], device="cpu").save(str(folder))
    return folder


def build_tiny_bert(
    folder: str | Path, seed: int = 0, corpus: tuple[str, ...] = CORPUS, positions: int = POSITIONS
) -> Path:
    """A random tiny `BertModel` reading `positions` tokens with a WordPiece tokenizer whose vocabulary
    is `corpus`'s words and characters, saved as the Hub repos of the legacy M-CLIP models are: config.json,
    the weights, vocab.txt, tokenizer_config.json and special_tokens_map.json (no tokenizer.json)."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizer

    folder = Path(folder)
    folder.mkdir(parents=True)
    words = sorted({word for text in corpus for word in text.lower().split()})
    chars = sorted({char for text in corpus for char in text.lower() if not char.isspace()})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *chars, *(f"##{c}" for c in chars)]
    vocab += [word for word in words if word not in vocab]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tokenizer = BertTokenizer(str(folder / "vocab.txt"))
    tokenizer.save_pretrained(folder)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=HIDDEN,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=2 * HIDDEN,
        max_position_embeddings=positions,
        pad_token_id=0,
    )
    torch.manual_seed(seed)
    BertModel(config).eval().save_pretrained(folder)
    return folder


LEGACY_HEAD = "M-BERT-Base-69-ViT Linear Weights.pkl"  # multilingual-clip's head file of M-CLIP/M-BERT-Base-ViT-B


def tiny_legacy_head(seed: int = 0, dim: int = DIM, hidden: int = HIDDEN):
    """[weight (hidden, dim), bias (dim,)]: two float32 numpy arrays, the legacy head's contents."""
    import numpy as np

    rng = np.random.default_rng(seed)
    return [rng.normal(0, 1, (hidden, dim)).astype(np.float32), rng.normal(0, 0.1, dim).astype(np.float32)]


def build_tiny_mclip_legacy(
    folder: str | Path, seed: int = 0, dim: int = DIM, head_name: str = LEGACY_HEAD, protocol: int = 3
) -> Path:
    """A legacy M-CLIP folder: the tiny BERT's files (`build_tiny_bert`) and its linear head pickled
    (`tiny_legacy_head`, pickle `protocol`) as `head_name`."""
    import pickle

    folder = build_tiny_bert(folder, seed=seed)
    (folder / head_name).write_bytes(pickle.dumps(tiny_legacy_head(seed, dim), protocol=protocol))
    return folder
