"""Every provenance record names the build profile; a sample build says its models are random tiny ones."""

from babelforge.core.provenance import SAMPLE_MODELS, build_profile, profile_of_record, provenance


def test_a_sample_record_says_its_models_are_random_tiny_ones():
    record = provenance("labels", {"profile": "sample", "labels": {"min_classes": 10}})
    assert record["build"] == {"profile": "sample", "models": SAMPLE_MODELS}
    assert "random tiny models" in SAMPLE_MODELS


def test_a_full_record_names_its_profile_only():
    assert provenance("labels", {"profile": "full"})["build"] == {"profile": "full"}


def test_a_record_without_a_profile_has_no_build_entry():
    assert "build" not in provenance("geo_pool", {"seed": 0})


def test_the_profile_of_a_record_is_its_build_else_its_params():
    assert profile_of_record(provenance("x", {"profile": "full"})) == "full"
    assert profile_of_record({"params": {"profile": "sample"}}) == "sample"  # written before `build` existed
    assert profile_of_record({"stage": "x"}) is None


def test_one_sample_input_makes_a_sample_build():
    sample, full = provenance("a", {"profile": "sample"}), provenance("b", {"profile": "full"})
    assert build_profile([full, sample]) == "sample"
    assert build_profile([full, {}]) == "full"
    assert build_profile([{}, {"stage": "x"}]) is None
    assert build_profile([]) is None
