"""A published dataset as an evaluation's input, without building it: a built card folder
(`build/hub/<dataset>`, as `babelforge card` writes it) or a Hub dataset pinned at a revision
(`hf:ORG/NAME@REVISION`), read per config with `datasets.load_dataset`, as users load it.

A Hub dataset is first fetched into the Hugging Face cache at its revision (only the card and the
data files of the configs asked for), then read like a card folder: one reader for both, and the
commit it read is what the run records. Offline, a Hub dataset the cache lacks is one clear error
at once. The card's `sample-build` tag travels with the data (`PublishedDataset.sample`), so a
result computed on a sample build says so.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml

from babelforge.core.datasets import HUB_PREFIX, is_hub
from babelforge.core.errors import BabelforgeError
from babelforge.eval.documents import dataset_version
from babelforge.eval.models import hub_reachable
from babelforge.publish.card import FRONT_MATTER, is_sample_build

SYNTAX = "a built card folder (build/hub/<dataset>) or hf:ORG/NAME@REVISION"
CARD = "README.md"


@dataclass(frozen=True)
class PublishedDataset:
    """A card folder on this machine (a Hub dataset's cached snapshot) and what a run records of it."""

    spec: str  # as given: a folder or hf:ORG/NAME@REVISION
    folder: Path
    version: str  # hf:ORG/NAME@<commit sha>, or the folder's DVC md5 / content sha256
    sample: bool  # the card is tagged sample-build
    configs: tuple[str, ...]  # the card's configs, one per language
    hub: str | None = None  # ORG/NAME of a Hub dataset
    revision: str | None = None

    @property
    def name(self) -> str:
        """The dataset's name: NAME of hf:ORG/NAME, else the card folder's name (`mt-captions`)."""
        return self.hub.split("/")[1] if self.hub else self.folder.resolve().name

    @property
    def profile(self) -> str:
        """The build profile the card states: `sample` when tagged so, else `full`."""
        return "sample" if self.sample else "full"

    def table(self, configs: Iterable[str] | None = None, split: str = "test"):
        """The rows of `configs` (default: all) as one DataFrame, each row's config in `lang`."""
        import pandas as pd

        wanted = list(self.configs if configs is None else configs)
        unknown = [name for name in wanted if name not in self.configs]
        if unknown:
            raise BabelforgeError(f"{self.spec}: no config {', '.join(unknown)} (the card has {len(self.configs)})")
        folder = self._fetched(wanted) if self.hub else self.folder
        frames = [load_config(folder, name, split).assign(lang=name) for name in wanted]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["lang"])

    def _fetched(self, configs: list[str]) -> Path:
        """The snapshot folder holding the card and the data files of `configs` (fetched when missing)."""
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import LocalEntryNotFoundError

        patterns = [CARD, *(path for name in configs for path in config_files(self.folder, name))]
        try:
            return Path(
                snapshot_download(
                    self.hub,
                    repo_type="dataset",
                    revision=self.revision,
                    allow_patterns=patterns,
                    local_files_only=not ask_the_hub(),
                )
            )
        except LocalEntryNotFoundError:
            raise BabelforgeError(offline_line(self.spec)) from None


def add_dataset_flag(parser, card: str, setting: str) -> None:
    """`--dataset`: the published `card` a task reads instead of the built tables (the setting `setting`)."""
    parser.add_argument(
        "--dataset",
        dest="dataset",
        metavar="DIR",
        help=f"evaluate a published {card} without building it: {SYNTAX} ({setting})",
    )


def card_table(dataset: PublishedDataset, configs: list[str] | None, columns: tuple[str, ...]):
    """The rows of `configs`; an error naming the card when it lacks one of `columns` (the wrong card)."""
    table = dataset.table(configs)
    if table.empty:
        return table.reindex(columns=["lang", *columns])
    missing = [column for column in columns if column not in table.columns]
    if missing:
        raise BabelforgeError(f"dataset {dataset.spec}: no column {', '.join(missing)}; is it the right card?")
    return table


def open_dataset(text: str) -> PublishedDataset:
    """The dataset `text` names (`SYNTAX`); one line saying what is wrong otherwise."""
    if is_hub(text):
        return _open_hub(text)
    folder = Path(text)
    if not (folder / CARD).is_file():
        raise BabelforgeError(
            f"dataset {text}: no {CARD} there; expected {SYNTAX} (build one with dvc repro card@<dataset>)"
        )
    return PublishedDataset(text, folder, dataset_version(folder), is_sample_build(folder), card_configs(folder))


def _open_hub(text: str) -> PublishedDataset:
    name, _, revision = text[len(HUB_PREFIX) :].partition("@")
    if name.count("/") != 1 or not all(name.split("/")):
        raise BabelforgeError(f"dataset {text}: expected hf:ORG/NAME@REVISION")
    if not revision:
        raise BabelforgeError(
            f"dataset {text}: no revision pinned; write it as hf:{name}@<commit sha> (results must be reproducible)"
        )
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        readme = Path(
            hf_hub_download(
                name, CARD, repo_type="dataset", revision=revision, local_files_only=not ask_the_hub(name, revision)
            )
        )
    except LocalEntryNotFoundError:
        raise BabelforgeError(offline_line(text)) from None
    folder = readme.parent  # <cache>/datasets--ORG--NAME/snapshots/<commit sha>/
    return PublishedDataset(
        text,
        folder,
        f"{HUB_PREFIX}{name}@{folder.name}",
        is_sample_build(folder),
        card_configs(folder),
        hub=name,
        revision=folder.name,
    )


def ask_the_hub(name: str | None = None, revision: str | None = None) -> bool:
    """Whether to ask the Hub: not when the cache has the card at `revision` already, when
    HF_HUB_OFFLINE is set, or when the Hub's host cannot be reached (then the cache alone)."""
    from huggingface_hub import try_to_load_from_cache

    if name and isinstance(try_to_load_from_cache(name, CARD, revision=revision, repo_type="dataset"), str):
        return False
    return hub_reachable()


def offline_line(spec: str) -> str:
    return (
        f"dataset {spec}: not in the Hugging Face cache and the Hub is unreachable (or HF_HUB_OFFLINE is set); "
        f"fetch it once online (huggingface-cli download --repo-type dataset ORG/NAME --revision REVISION) "
        f"or pass a built card folder"
    )


def front_matter(folder: Path) -> dict:
    match = FRONT_MATTER.match((folder / CARD).read_text(encoding="utf-8"))
    try:
        metadata = yaml.safe_load(match.group(1)) if match else None
    except yaml.YAMLError:
        metadata = None
    if not isinstance(metadata, dict):
        raise BabelforgeError(f"{folder / CARD}: no dataset card front matter (--- ... --- with `configs`)")
    return metadata


def card_configs(folder: Path) -> tuple[str, ...]:
    """The config names the card declares, in its order."""
    return tuple(str(entry["config_name"]) for entry in front_matter(folder).get("configs") or [])


def config_files(folder: Path, config: str) -> list[str]:
    """The data files (paths in the repository) of one config, as the card lists them."""
    for entry in front_matter(folder).get("configs") or []:
        if str(entry.get("config_name")) == config:
            return [str(item["path"]) for item in entry.get("data_files") or []]
    return []


def load_config(folder: Path, config: str, split: str):
    """One config's split as a DataFrame, read with `datasets` (class ids stay integers)."""
    import datasets

    datasets.logging.set_verbosity_error()
    datasets.disable_progress_bars()
    return datasets.load_dataset(str(folder), config, split=split).to_pandas()
