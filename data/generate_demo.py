"""Generate the bundled demo memory, ``data/demo/memory.json``, from scripted coding sessions.

    python data/generate_demo.py                 # rewrite data/demo/memory.json
    python data/generate_demo.py -o /tmp/m.json  # somewhere else (the tests do this)

The sessions are stories (``data/scenarios/<project>.py``): prompts, tool calls with the
inputs and outputs Claude Code reports, and the assistant's closing message. They are
scheduled over six working weeks and replayed through the real capture pipeline (the hooks'
body builders, the service's request models, the Ingestor, the offline compressor), so every
observation and summary in the file is what workbench itself derived, with the timestamps
of the moment the session happened. The result is written in the ``workbench export``
format, so ``workbench demo`` loads it with ``POST /api/import``.

Deterministic: the same seed writes the same bytes (``tests/test_demo_data.py`` checks that
the committed file is what this script produces). Run it again after changing a story or
the offline compressor.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for path in (HERE, ROOT):  # ``scenarios`` lives next to this script; hooks/service at the root
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

DEFAULT_OUTPUT = HERE / "demo" / "memory.json"
DEFAULT_SEED = 7


def build(seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """The export document for ``seed``."""
    from scenarios import all_stories, replay, schedule

    return replay.replay(schedule.plan(all_stories(), seed), seed)


def dumps(document: dict[str, Any]) -> str:
    """The file's text: one row per line keeps diffs of a regenerated file readable."""
    parts = ["{"]
    head = {k: v for k, v in document.items() if not isinstance(v, list)}
    for key, value in head.items():
        parts.append(f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)},")
    lists = [k for k, v in document.items() if isinstance(v, list)]
    for n, key in enumerate(lists):
        rows = document[key]
        parts.append(f"  {json.dumps(key)}: [")
        for i, row in enumerate(rows):
            comma = "," if i < len(rows) - 1 else ""
            parts.append("    " + json.dumps(row, ensure_ascii=False, sort_keys=True) + comma)
        parts.append("  ]" + ("," if n < len(lists) - 1 else ""))
    parts.append("}")
    return "\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args(argv)
    document = build(args.seed)
    text = dumps(document)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf-8")
    types = Counter(o["type"] for o in document["observations"])
    counts = ", ".join(
        f"{len(document[k])} {k}" for k in ("sessions", "prompts", "observations", "summaries")
    )
    print(f"wrote {args.output} ({len(text.encode()) / 1024:.0f} KiB): {counts}")  # noqa: T201
    print("types: " + ", ".join(f"{t} {n}" for t, n in types.most_common()))  # noqa: T201
    return 0


if __name__ == "__main__":
    sys.exit(main())
