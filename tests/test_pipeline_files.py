"""dvc.yaml and params.yaml are what the stage declarations give (scripts/pipeline_files.py), and the
derivation itself: the command table read without imports, a stage's params, per-profile defaults."""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import textwrap
from typing import Literal

import pytest
import yaml

from babelforge.core.config import from_group, load_config, setting, subgroup
from babelforge.core.errors import BabelforgeError
from babelforge.core.stage_settings import dvc_params
from babelforge.core.stage_table import Entry, _entry, _pipeline_order, load, table
from babelforge.core.stages import Paths, Stage, outputs, stage_paths
from tests.imports import REPO


def pipeline_files():
    spec = importlib.util.spec_from_file_location("pipeline_files", REPO / "scripts" / "pipeline_files.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def generator():
    return pipeline_files()


@pytest.fixture(scope="module")
def wanted(generator):
    return generator.generated()


def committed(name: str) -> str:
    return (REPO / name).read_text(encoding="utf-8")


def test_the_committed_files_are_what_the_declarations_give(generator, wanted):
    stale = generator.stale_files({name: committed(name) for name in wanted}, wanted)
    assert stale == [], "run python scripts/pipeline_files.py"


def test_a_planted_drift_is_found(generator, wanted):
    """A hand edit of dvc.yaml (a dep dropped) or of a default in params.yaml fails the check, naming the file."""
    dvc = committed("dvc.yaml").replace("    - resources/wordnet_lexnames.tsv\n", "", 1)
    params = committed("params.yaml").replace("  min_classes: 10", "  min_classes: 11", 1)
    assert dvc != committed("dvc.yaml") and params != committed("params.yaml")
    assert generator.stale_files({"dvc.yaml": dvc, "params.yaml": params}, wanted) == [
        "dvc.yaml (its content differs from the declarations)",
        "params.yaml (its content differs from the declarations)",
    ]
    # the profile line is the project's switch: switching it is no drift
    full = generator.in_dvc_form(generator.params_yaml("full"))
    assert full == wanted["params.yaml"].replace("profile: sample\n", "profile: full\n", 1)
    relaid = committed("params.yaml").replace("profile: sample\n", "profile:   sample\n", 1)
    assert generator.stale_files({"dvc.yaml": wanted["dvc.yaml"], "params.yaml": relaid}, wanted) == [
        "params.yaml (its layout differs from the declarations)"
    ]


def test_setting_a_parameter_as_dvc_exp_run_does_changes_one_line(tmp_path, wanted):
    """`dvc exp run -S key=value` rewrites params.yaml through DVC's YAML round trip
    (dvc.utils.hydra.apply_overrides): the committed file is in that form, so only the set line changes."""
    from dvc.utils.hydra import apply_overrides
    from dvc.utils.serialize import load_yaml

    path = tmp_path / "params.yaml"
    path.write_text(wanted["params.yaml"], encoding="utf-8")
    apply_overrides(path, ["labels.min_classes=11", "captions.input.limit=5"])
    load_yaml(path)  # what `dvc repro` reads: a flow list rewrapped by the round trip fails here
    before, after = wanted["params.yaml"].splitlines(), path.read_text(encoding="utf-8").splitlines()
    changed = [(old, new) for old, new in zip(before, after) if old != new]
    assert len(before) == len(after) and [new.split("#")[0].strip() for _, new in changed] == [
        "limit: 5",
        "min_classes: 11",
    ]


def test_every_dvc_stage_is_a_declared_stage_and_every_setting_loads(wanted):
    stages = yaml.safe_load(wanted["dvc.yaml"])["stages"]
    assert set(stages) == {name for name, entry in table().items() if entry.kind == "stage"}
    params = yaml.safe_load(wanted["params.yaml"])
    for name in table():
        stage = load(name)
        if stage.config is not None and stage.in_params_yaml:
            for profile in ("sample", "full"):
                load_config(stage.config, {**params, "profile": profile})  # every key known, every type right


def test_the_table_is_read_without_importing_the_commands():
    import subprocess
    import sys

    code = "import sys; from babelforge.commands import COMMANDS; print(len(COMMANDS), sorted(m for m in sys.modules if m.startswith('babelforge.') and m.endswith(('_stage', '.stage'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split(" ", 1)
    assert int(out[0]) == len(table()) >= 30 and out[1].strip() == "[]"


def test_a_declaration_is_read_from_its_source(tmp_path):
    path = tmp_path / "toy_stage.py"
    path.write_text(
        textwrap.dedent(
            """\
            STAGE = Stage(
                "toy",
                "a toy stage",
                run,
                config=Config,
                deps=("${paths.labels}", "resources/x.tsv"),
                outs=("data/toy.parquet",),
                pinned=True,
            )
            """
        ),
        encoding="utf-8",
    )
    entry = _entry(path, "pkg.toy_stage")
    assert (entry.name, entry.help, entry.kind, entry.pinned, entry.module) == (
        "toy",
        "a toy stage",
        "stage",
        True,
        "pkg.toy_stage",
    )
    assert entry.reads == ("${paths.labels}", "resources/x.tsv") and entry.writes == ("data/toy.parquet",)
    path.write_text('STAGE = Stage(NAME, "help", run, tool=True)\n', encoding="utf-8")
    with pytest.raises(BabelforgeError, match="string literals"):
        _entry(path, "pkg.toy_stage")


def test_the_pipeline_order_follows_the_files():
    def entry(name, reads=(), writes=(), module="babelforge.x", kind="stage"):
        return Entry(name, module, "", kind, False, tuple(reads), tuple(writes))

    entries = [
        entry("report", reads=["r/a.json", "r/b.json"], writes=["r/all.csv"], module="babelforge.eval.report"),
        entry("b", reads=["d/x/part"], writes=["r/b.json"], module="babelforge.eval.b"),
        entry("tool", kind="tool"),
        entry("a", reads=["d/x"], writes=["r/a.json"], module="babelforge.eval.a"),
        entry("x", writes=["d/x"]),
    ]
    assert [e.name for e in _pipeline_order(entries)] == ["x", "a", "b", "report", "tool"]


@dataclasses.dataclass(frozen=True)
class Shared:
    GROUP = "toy.shared"
    level: int = setting({"sample": 1, "full": 2}, "a per-profile value")


@dataclasses.dataclass(frozen=True)
class Child:
    GROUP = "toy.child"
    size: int = setting(3, "a child stage's own key")


@dataclasses.dataclass(frozen=True)
class Toy:
    GROUP = "toy"
    seed: int = setting(0, "a seed")
    child: Child = subgroup(Child, "the child stage's group")
    shared: Shared = from_group(Shared, "toy.shared", "read from a shared group")
    paths: Paths = stage_paths()


def test_a_per_profile_default_is_the_sample_value_and_loads_per_profile():
    assert Shared().level == 1
    assert load_config(Shared, {"profile": "full"}).level == 2
    assert load_config(Shared, {"profile": "sample"}).level == 1
    assert load_config(Shared, {"profile": "full", "toy": {"shared": {"level": 5}}}).level == 5


def test_a_stage_params_are_derived(monkeypatch):
    import babelforge.core.stage_settings as stage_settings

    monkeypatch.setattr(stage_settings, "_declared_groups", lambda name: ("toy", "toy.child", "toy.shared"))
    stage = Stage(
        "toy", "", lambda config: 0, config=Toy, deps=("${paths.labels}",), outs=("${paths.hub}/toy",), pinned=True
    )
    # the profile (toy.shared chooses by profile), the paths its files name, its own keys one by one (a
    # child's sub-group sits inside its group), the shared group whole, the CPU pin
    assert dvc_params(stage) == ["profile", "paths.labels", "paths.hub", "toy.seed", "toy.shared", "build.cpu_isa"]
    narrowed = dataclasses.replace(stage, params=("toy.seed",), pinned=False)
    assert dvc_params(narrowed) == ["profile", "paths.labels", "paths.hub", "toy.seed"]
    assert outputs(stage, Toy()) == [f"{Paths().hub}/toy"]


def test_a_declaration_that_cannot_be_a_stage_is_refused():
    with pytest.raises(TypeError, match="declares its outs"):
        Stage("x", "", lambda config: 0)
    with pytest.raises(TypeError, match="no GROUP"):
        Stage("x", "", lambda config: 0, config=Paths, tool=True)


def test_every_command_module_and_only_one_is_named_for_a_command():
    """One convention: a module declaring a command is `<name>_stage.py`, and every `*_stage.py` declares one."""
    declaring = {
        ".".join(("babelforge", *path.relative_to(REPO / "builders").with_suffix("").parts))
        for path in (REPO / "builders").rglob("*.py")
        if "\nSTAGE = Stage(" in path.read_text(encoding="utf-8")
    } | {
        ".".join(("babelforge", *path.relative_to(REPO).with_suffix("").parts))
        for path in (REPO / "eval").rglob("*.py")
        if "\nSTAGE = Stage(" in path.read_text(encoding="utf-8")
    }
    assert declaring == {entry.module for entry in table().values()}
    assert all(module.rsplit(".", 1)[1].endswith("_stage") for module in declaring), sorted(declaring)
    named = {
        ".".join(("babelforge", *path.relative_to(REPO / "builders").with_suffix("").parts))
        for path in (REPO / "builders").rglob("*_stage.py")
    } | {
        ".".join(("babelforge", *path.relative_to(REPO).with_suffix("").parts))
        for path in (REPO / "eval").rglob("*_stage.py")
    }
    assert named == declaring


def test_a_flag_takes_its_type_metavar_and_help_from_its_setting():
    from babelforge.cli import stage_parser

    @dataclasses.dataclass(frozen=True)
    class Flagged:
        GROUP = "toy"
        count: int = setting(3, "how many")
        names: list[str] = setting([], "which ones")
        mode: str = setting("a", "the mode")
        strict: bool = setting(False, "stop at the first problem")
        table: dict = setting({}, "a mapping")
        paths: Paths = stage_paths()

    stage = Stage(
        "toy",
        "a toy",
        lambda config: 0,
        config=Flagged,
        outs=("${paths.labels}",),
        flags={"--count": "count", "--names": "names", "--strict": "strict", "--out": ("paths.labels", "to write")},
    )
    parser = stage_parser(stage)
    args = parser.parse_args(["--count", "4", "--names", "a,b", "--strict", "--out", "x.parquet"])
    assert (args.count, args.names, args.strict, getattr(args, "paths.labels")) == (4, ["a", "b"], True, "x.parquet")
    text = parser.format_help()
    assert "--count N" in text and "--out FILE" in text and "(toy.count)" in text and "to write (paths.labels)" in text
    assert parser.parse_args([]).strict is None  # not given: params.yaml decides
    with pytest.raises(BabelforgeError, match=r"^--count 'many': not an integer"):
        parser.parse_args(["--count", "many"])  # the number rule's one line, not argparse's usage
    with pytest.raises(TypeError, match="written in configure"):
        stage_parser(dataclasses.replace(stage, flags={"--table": "table"}))
    with pytest.raises(TypeError, match="no such setting"):
        stage_parser(dataclasses.replace(stage, flags={"--nope": "nope"}))


def test_the_literals_of_a_declaration_and_the_settings_its_paths_name(tmp_path, monkeypatch):
    import babelforge.core.stage_table as stage_table
    from babelforge.core.stage_table import _declaring_modules
    from babelforge.core.stages import named_settings

    # a tuple's string literals; a number or a computed item is no path, and marks the deps computed
    path = tmp_path / "odd_stage.py"
    path.write_text('STAGE = Stage("odd", "help", run, deps=("a", 3, *more), outs=("b",))\n', encoding="utf-8")
    entry = _entry(path, "pkg.odd_stage")
    assert (entry.reads, entry.writes, entry.reads_computed) == (("a",), ("b",), True)
    # only *_stage.py files that declare a command are commands
    (tmp_path / "plain_stage.py").write_text("X = 1\n", encoding="utf-8")
    (tmp_path / "helper.py").write_text('STAGE = Stage("x", "y", run, tool=True)\n', encoding="utf-8")
    monkeypatch.setattr(stage_table, "package_folders", lambda: [(tmp_path, "pkg")])
    assert [(found, module) for found, module, _ in _declaring_modules()] == [(path, "pkg.odd_stage")]
    assert named_settings("${paths.hub}/${key}/${item.data}/${wordnet.classes}") == ["paths.hub", "wordnet.classes"]


def test_an_output_naming_another_setting_is_no_lock_target():
    @dataclasses.dataclass(frozen=True)
    class Out:
        GROUP = "toy"
        paths: Paths = stage_paths()

    stage = Stage("toy", "", lambda config: 0, config=Out, outs=("${paths.hub}/a", "${toy.out}", "${paths.nope}"))
    assert outputs(stage, Out()) == [f"{Paths().hub}/a"]


def test_a_flag_metavar_names_its_choices_or_list():
    from babelforge.core.stage_settings import flag_argument

    @dataclasses.dataclass(frozen=True)
    class Choosy:
        GROUP = "toy"
        mode: Literal["a", "b"] = setting("a", "the mode")
        names: list[str] = setting([], "which ones")
        strict: bool = setting(False, "stop early")

    stage = Stage(
        "toy",
        "",
        lambda config: 0,
        config=Choosy,
        tool=True,
        flags={"--mode": "mode", "--names": "names", "--strict": "strict"},
    )
    assert flag_argument(stage, "--mode")[1]["metavar"] == "{a,b}"
    assert flag_argument(stage, "--names")[1]["metavar"] == "A[,B...]"
    assert "metavar" not in flag_argument(stage, "--strict")[1]  # a switch takes no value


def test_each_artifact_path_is_declared_by_the_stage_that_owns_it(tmp_path, monkeypatch):
    import babelforge.core.stages as stages

    # the repository's: every path a stage's files name is declared by one stage (or core's metrics)
    owned = {name: entry.name for entry in table().values() for name, _, _ in entry.owned_paths}
    assert (owned["labels"], owned["senses"], owned["hub"], owned["eval_reports"]) == (
        "labels",
        "senses",
        "card",
        "eval_report",
    )
    assert [f.name for f in dataclasses.fields(Paths)][-1] == "metrics" and "metrics" not in owned

    # a planted tree: the group is assembled from the declarations, in pipeline order, core's last
    def plant(name, text):
        (tmp_path / f"{name}_stage.py").write_text(textwrap.dedent(text), encoding="utf-8")

    plant("make", 'STAGE = Stage("make", "h", run, outs=("${paths.made}",), paths={"made": ("data/m", "made")})\n')
    plant("use", 'STAGE = Stage("use", "h", run, deps=("data/m",), outs=("x",), paths={"used": ("data/u", "used")})\n')
    import babelforge.core.stage_table as stage_table

    monkeypatch.setattr(stage_table, "package_folders", lambda: [(tmp_path, "pkg")])
    # fresh caches for the planted tree (the table as `Paths` reads it); the project's come back after the test
    for cached in (stages.table, stages.paths_class):
        monkeypatch.setattr(stages, cached.__name__, functools.cache(cached.__wrapped__))
    fields = dataclasses.fields(stages.paths_class())
    assert [(f.name, f.default, f.metadata["help"]) for f in fields] == [
        ("made", "data/m", "made"),
        ("used", "data/u", "used"),
        ("metrics", "metrics", fields[-1].metadata["help"]),
    ]
    plant("again", 'STAGE = Stage("again", "h", run, tool=True, paths={"made": ("data/n", "again")})\n')
    stages.table.cache_clear()
    stages.paths_class.cache_clear()
    with pytest.raises(BabelforgeError, match=r"paths.made is declared twice: by pkg.\w+_stage and pkg.\w+_stage"):
        stages.paths_class()
    plant("again", 'STAGE = Stage("again", "h", run, tool=True, paths={"made": "data/n"})\n')
    stages.table.cache_clear()
    with pytest.raises(BabelforgeError, match=r"paths=\.\.\.\) is a literal"):
        stages.table()


def test_a_foreach_stages_key_stands_for_one_name_in_the_pipeline_order():
    """A stage reading `build/languages/mvl-sib.tsv` comes after the foreach stage writing
    `build/languages/${key}.tsv`; `${key}` is one path part, and a longer setting name is another path."""
    views = _entry_of("views", writes=("${paths.language_views}/${key}.tsv",))
    reader = _entry_of("a_reader", reads=("${paths.language_views}/mvl-sib.tsv",))
    deeper = _entry_of("b_deeper", reads=("${paths.language_views}/x/mvl-sib.tsv",))
    other = _entry_of("c_other", reads=("${paths.language_views_old}/mvl-sib.tsv",))
    order = [e.name for e in _pipeline_order([reader, deeper, other, views])]
    assert order.index("views") < order.index("a_reader")
    assert order.index("b_deeper") < order.index("views") and order.index("c_other") < order.index("views")


def _entry_of(name, reads=(), writes=()):
    return Entry(name, f"babelforge.toy.{name}_stage", "", "stage", False, tuple(reads), tuple(writes))


def test_a_foreach_item_with_fewer_deps_repeats_its_last_and_more_is_an_error():
    from babelforge.core.stages import padded_item

    assert padded_item("x", ["a"], ("data", "more", "licences")) == {"data": "a", "more": "a", "licences": "a"}
    assert padded_item("x", ["a", "b"], ("data", "more")) == {"data": "a", "more": "b"}
    with pytest.raises(
        BabelforgeError, match=r"^view v: 3 files; its stage reads 1 to 2 \(\$\{item.data\}, \$\{item.more\}\)$"
    ):
        padded_item("view v", ["a", "b", "c"], ("data", "more"))
    with pytest.raises(BabelforgeError, match="0 files"):
        padded_item("view v", [], ("data", "more"))
