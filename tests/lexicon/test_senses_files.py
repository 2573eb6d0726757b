"""The senses file a reader takes from the senses stage's folder: its name says which source it read."""

import pytest

from babelforge.core.errors import BabelforgeError
from babelforge.lexicon.senses import SENSE_SOURCES, built_senses, senses_path


def test_the_one_senses_file_is_found_whichever_source_wrote_it(tmp_path):
    for source in SENSE_SOURCES:
        folder = tmp_path / source
        folder.mkdir()
        senses_path(folder, source).write_bytes(b"")
        assert built_senses(folder) == folder / f"{source}.parquet"


def test_no_senses_file_names_the_folder_and_the_stage(tmp_path):
    with pytest.raises(
        BabelforgeError, match=r"no senses \(omw.parquet or babelnet.parquet\); run `babelforge senses`"
    ):
        built_senses(tmp_path / "none")


def test_two_senses_files_are_an_error_not_a_guess(tmp_path):
    for source in SENSE_SOURCES:
        senses_path(tmp_path, source).write_bytes(b"")
    with pytest.raises(BabelforgeError, match="senses of 2 sources"):
        built_senses(tmp_path)
