"""Names and shared plumbing of the caption stages: the artifact layout under `paths.captions`.

`source/`, `references/`, `hypotheses/`, `quarantine/` (captions_translate) and `attributes/`
(captions_tag) are shard directories (`babelforge.core.shards`): shard i of each covers the same input
captions. `selected.parquet` and `quality.json` (captions_select) are single files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from babelforge.captions.formats.caption_set import REFERENCES_COLUMN
from babelforge.core import shards
from babelforge.core.errors import BabelforgeError
from babelforge.core.languages import read_registry, registry

SOURCE_DIR = "source"
REFERENCES_DIR = "references"
HYPOTHESES_DIR = "hypotheses"
ATTRIBUTES_DIR = "attributes"
QUARANTINE_DIR = "quarantine"  # the bad input rows, shard i beside source/ shard i
INPUT_SUMMARY_FILE = "input.json"  # rows read, kept, quarantined per reason, left out
SELECTED_FILE = "selected.parquet"
QUALITY_FILE = "quality.json"  # per language counts and scores, and the input's counts (input.json)
KEY = ["caption_id", "lang", "hyp_rank"]


def load_registry(path: str | None):
    """The project registry, or the one at `path` (tests, or before resources/languages.tsv exists)."""

    if path:
        return read_registry(path)
    try:
        return registry()
    except FileNotFoundError:
        raise BabelforgeError(
            "resources/languages.tsv not found: the language registry is needed to map language codes"
        ) from None


def split_references(table, source_lang: str):
    """A streamed caption table (`readers.stream_captions`) as its two shard tables: the source
    rows (`caption_id, image, caption, source_lang, <other input columns>`) and the references
    (`caption_id, lang, text`, one row per human translation)."""
    import pyarrow as pa

    nested = table.column(REFERENCES_COLUMN).to_pylist()
    source = table.drop_columns([REFERENCES_COLUMN])
    source = source.add_column(3, "source_lang", pa.array([source_lang] * source.num_rows, pa.string()))
    ids = table.column("caption_id").to_pylist()
    rows = [
        {"caption_id": caption_id, "lang": ref["lang"], "text": ref["text"]}
        for caption_id, refs in zip(ids, nested)
        for ref in refs or []
    ]
    schema = pa.schema([("caption_id", pa.string()), ("lang", pa.string()), ("text", pa.string())])
    return source, pa.Table.from_pylist(rows, schema=schema)


def write_side_shards(directory: Path, shard, table, sort_by: Sequence[str], params: Mapping[str, Any]) -> bool:
    """Write a shard that needs no model (source/, references/) unless it is current; True if written."""

    params_hash = shards.stable_hash(dict(params))
    if shards.is_current(directory, shard, params_hash, ""):
        return False
    shards.write_shard(directory, shard, table, params_hash, "", sort_by=sort_by)
    return True


def flagged_by_language(directory: Path, column: str) -> dict[str, int]:
    """{lang: rows whose boolean `column` is true} over a shard directory (`lang` + one column read),
    in language order; languages without such a row are left out."""
    import pyarrow.dataset as ds

    table = shards.read(directory, ["lang"], filter=ds.field(column))
    counts = table.column("lang").value_counts().to_pylist()
    return {entry["values"]: entry["counts"] for entry in sorted(counts, key=lambda entry: entry["values"])}


# The shard directories captions_translate writes from one plan: shard i of each records the same input hash.
TRANSLATED_DIRS = (SOURCE_DIR, REFERENCES_DIR, HYPOTHESES_DIR, QUARANTINE_DIR)


def mixed_inputs(manifests: Mapping[str, Any]) -> str | None:
    """`a/ and b/` when two of captions_translate's directories hold shard i made from different input
    rows (their manifests' input hashes differ), else None (pure over {directory: Manifest})."""
    made = [(name, manifest.input_hash) for name, manifest in manifests.items() if name in TRANSLATED_DIRS]
    first = made[0] if made else None
    other = next((name for name, input_hash in made if input_hash != first[1]), None) if first else None
    return f"{first[0]}/ and {other}/" if other else None


def shard_inputs(data: Path, names: Sequence[str]) -> list:
    """The plan of a stage that reads the shard directories `names` of `data` side by side:
    one Shard per index they all have (an error if they disagree), whose input hash joins
    their manifests' sha256 and whose rows are those of the first directory."""

    listings = {name: shards.committed_files(data / name) for name in names}
    counts = {name: len(files) for name, files in listings.items()}
    if len(set(counts.values())) != 1:
        raise BabelforgeError(f"{data}: shard directories disagree ({counts}); rerun `babelforge captions_translate`")
    plan, start = [], 0
    for index in range(counts[names[0]]):
        manifests = [shards.read_manifest(data / name, index) for name in names]
        if any(manifest is None for manifest in manifests):
            raise BabelforgeError(f"{data}: {shards.shard_name(index)} is missing in one of {', '.join(names)}")
        mismatch = mixed_inputs(dict(zip(names, manifests)))
        if mismatch:
            raise BabelforgeError(
                f"{data}: {shards.shard_name(index)} of {mismatch} was made from other input rows (a translate "
                "run that stopped half way, or a folder copied from another build); rerun `babelforge captions_translate`"
            )
        rows = manifests[0].rows
        plan.append(
            shards.Shard(index, start, start + rows, shards.stable_hash([manifest.sha256 for manifest in manifests]))
        )
        start += rows
    return plan
