from pathlib import Path

import pytest

from builders.lexicon.wordnet import open_wordnet

WORDNET_DICT = Path("/usr/share/wordnet")


@pytest.fixture(scope="session")
def wordnet_reader(tmp_path_factory):
    if not (WORDNET_DICT / "data.noun").exists():
        pytest.fail("WordNet 3.0 is not installed: apt-get install wordnet-base wordnet-sense-index (scripts/setup.sh does)")
    return open_wordnet(WORDNET_DICT, tmp_path_factory.mktemp("nltk_data"))
