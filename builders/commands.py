"""The command table: every `babelforge <name>` command, found from its declaration.

Each command's module declares it once (`STAGE = Stage(...)`, babelforge.core.stages); the table
(babelforge.core.stage_table) is read from the package's source without importing those modules, so
reading it costs nothing heavy.
Read by the CLI (dispatch, `--help`, the CPU pin), `babelforge taggers`, the tests and the generators.
"""

from __future__ import annotations

from babelforge.core.stage_table import Entry, table

# name -> Entry (module, help, kind, pinned), in pipeline order, then the tools
COMMANDS: dict[str, Entry] = table()


def pinned_stages() -> frozenset[str]:
    return frozenset(name for name, command in COMMANDS.items() if command.pinned)
