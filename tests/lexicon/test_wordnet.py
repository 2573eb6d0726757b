import pytest

from babelforge.core.errors import BabelforgeError
from babelforge.core.imagenet import IMAGENET_CLASSES, ImageNetClass, read_imagenet_classes
from babelforge.lexicon.senses import synset_to_wnid, wnid_to_synset
from babelforge.lexicon.wordnet import provision_nltk_wordnet, resolve_class


def test_resource_class_list_is_the_mirror_list(shared_data):
    assert IMAGENET_CLASSES.read_bytes() == (shared_data / "imagenet" / "imagenet1k_classes.tsv").read_bytes()


def test_all_1000_wnids_resolve(wordnet_reader):
    classes = read_imagenet_classes()
    resolved = [resolve_class(wordnet_reader, cls) for cls in classes]
    assert len(resolved) == 1000
    assert len({k.synset for k in resolved}) == 1000
    tench = resolved[0]
    assert (tench.wnid, tench.synset, tench.synset_name) == ("n01440764", "01440764-n", "tench.n.01")
    assert tench.lemmas == ("tench", "Tinca tinca")
    assert "freshwater" in tench.definition
    # every hypernym path runs from the root down to the class itself
    assert all(k.hypernym_path[0] == "entity.n.01" and k.hypernym_path[-1] == k.synset_name for k in resolved)
    assert all(k.lemmas and k.definition for k in resolved)


def test_bad_wnid_is_a_clear_error(wordnet_reader):
    with pytest.raises(BabelforgeError, match="n99999999 is not a WordNet 3.0 synset"):
        resolve_class(wordnet_reader, ImageNetClass(7, "n99999999", "nothing"))
    with pytest.raises(BabelforgeError, match="class 8: not an ImageNet wnid"):
        resolve_class(wordnet_reader, ImageNetClass(8, "tench", "tench"))


def test_missing_database_names_the_fix(tmp_path):
    with pytest.raises(BabelforgeError, match="apt-get install wordnet-base"):
        provision_nltk_wordnet(tmp_path / "nowhere", tmp_path / "nltk")


def test_wnid_synset_round_trip():
    assert wnid_to_synset("n01440764") == "01440764-n"
    assert synset_to_wnid("01440764-n") == "n01440764"


def test_hypernym_path_choice_is_by_content():
    from babelforge.lexicon.wordnet import choose_hypernym_path

    short = ("entity.n.01", "animal.n.01", "domestic_animal.n.01", "dog.n.01")
    long = ("entity.n.01", "animal.n.01", "chordate.n.01", "mammal.n.01", "dog.n.01")
    twin = ("entity.n.01", "animal.n.01", "beast.n.01", "mammal.n.01", "dog.n.01")
    assert choose_hypernym_path([short, long, twin]) == twin == choose_hypernym_path([twin, long, short])


@pytest.mark.slow
def test_wordnet_stage_is_byte_identical_across_hash_seeds(tmp_path, repo_root):
    """nltk walks some relations through sets; the artifact must not depend on the hash seed."""
    import os
    import subprocess
    import sys

    import yaml

    params = yaml.safe_load((repo_root / "params.yaml").read_text())
    params["wordnet"]["nltk_data"] = str(tmp_path / "nltk")
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    outputs = []
    for seed in ("1", "2"):
        out = tmp_path / f"wn-{seed}.parquet"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "babelforge.cli",
                "wordnet",
                "--params",
                str(tmp_path / "params.yaml"),
                "--out",
                str(out),
            ],
            cwd=repo_root,
            check=True,
            capture_output=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]


def test_taxa_are_the_scientific_names_above_the_class(wordnet_reader):
    classes = {c.wnid: c for c in read_imagenet_classes()}
    coyote, hammerhead, jeep = (
        resolve_class(wordnet_reader, classes[w]) for w in ("n02114855", "n01494475", "n03594945")
    )
    # coyote is a wolf, whose genus is Canis: the genus comes through the hypernym
    assert {"genus:Canis", "family:Canidae", "order:Carnivora", "class:Mammalia"} <= set(coyote.taxa)
    assert {"genus:Sphyrna", "family:Sphyrnidae"} <= set(hammerhead.taxa)
    # member holonyms that are groups, not taxa (a school of fish), stay out; artefacts have none
    assert not any(name.endswith((":school", ":shoal")) for name in hammerhead.taxa)
    assert jeep.taxa == ()
    assert list(coyote.taxa) == sorted(coyote.taxa)


def test_other_senses_and_broader_lemmas_of_a_class(wordnet_reader):
    classes = {c.wnid: c for c in read_imagenet_classes()}
    lighter, block_plane, microwave = (
        resolve_class(wordnet_reader, classes[w]) for w in ("n03666591", "n03954731", "n03761084")
    )
    # `lighter` is also a barge and the comparative of `light` ("lighter in weight"); not its own synset
    assert {"barge.n.01", "light.a.01", "lighter.v.01"} <= set(lighter.other_senses)
    assert lighter.synset_name not in lighter.other_senses
    # the *block plane* class is plane.n.05, the carpenter's plane: `plane` is also the aircraft
    assert block_plane.synset_name == "plane.n.05" and "airplane.n.01" in block_plane.other_senses
    assert microwave.other_senses == ("microwave.n.01", "microwave.v.01")  # the wave, and to cook in one
    # every hypernym's lemmas, up to entity: a candidate naming one of them is no label of the class
    assert {"edge tool", "hand tool", "tool", "entity"} <= set(block_plane.broader_lemmas)
    assert "plane" not in block_plane.broader_lemmas
    assert list(microwave.broader_lemmas) == sorted(microwave.broader_lemmas)
