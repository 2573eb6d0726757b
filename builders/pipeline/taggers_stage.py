"""`babelforge taggers`: every registered tagger, its version, columns and the stages that run it.

A stage declares the taggers it runs (`Stage(..., taggers=...)`); this command reads every
declaration, so the listing is what the code does, not a copy of it.
"""

from __future__ import annotations

import argparse
import json

from babelforge.commands import COMMANDS
from babelforge.core.stages import Stage, load
from babelforge.core.taggers import REGISTRY


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="one JSON object per tagger instead of a table")


def used_by() -> dict[str, list[str]]:
    """Tagger name -> the commands that declare it. Importing every command's module also
    registers every tagger (a stage imports the taggers it runs)."""

    users: dict[str, list[str]] = {}
    for command in COMMANDS:
        for name in load(command).taggers:
            users.setdefault(name, []).append(command)
    return users


def listing() -> list[dict]:

    users = used_by()
    return [
        {
            "name": entry.name,
            "tagger": entry.base,
            "version": entry.version,
            "columns": {column: kind.__name__ for column, kind in entry.columns.items()},
            "reads": list(entry.reads),
            "used_by": users.get(entry.name, []),
            "module": entry.module,
            "help": entry.help,
        }
        for entry in sorted(REGISTRY.values(), key=lambda entry: entry.name)
    ]


def run(args: argparse.Namespace) -> int:

    entries = listing()
    if args.json:
        for entry in entries:
            print(json.dumps(entry, ensure_ascii=False))
        return 0
    for entry in entries:
        columns = ", ".join(f"{entry['name']}__{column}: {kind}" for column, kind in entry["columns"].items())
        print(f"{entry['name']}  (version {entry['version']}; used by {', '.join(entry['used_by']) or 'no stage'})")
        print(f"    {entry['help']}")
        print(f"    columns: {columns}")
        print(f"    reads: {', '.join(entry['reads'])}; defined in {entry['module']}")
    return 0


STAGE = Stage(
    "taggers",
    "list the registered taggers: versions, columns, the stages that run them",
    run,
    configure=configure,
    tool=True,
    docs="docs/taggers.md",
)
