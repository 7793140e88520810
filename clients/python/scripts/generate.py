#!/usr/bin/env python3
"""Generate `src/runlog/models.py` from the server's OpenAPI document.

    python scripts/generate.py           # write it
    python scripts/generate.py --check   # exit 1 when the file differs from what it would write

CI runs `--check`, so the client's models cannot drift from the API the server serves: the
document is itself kept equal to the Rust views by `cli/tests/openapi.rs`.

Before handing the document to datamodel-code-generator (pinned in pyproject.toml's `dev`
extra), each variant of a tagged union (an event kind, a part of a conversation) is named after
its tag (`run-started` becomes `RunStarted`, or `EventKindForked` where the plain name is taken)
and the union gets its discriminator: the models then read `isinstance(e.event, RunStarted)`,
and pydantic picks a variant by its tag instead of trying each.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent
DOCUMENT = HERE.parent.parent / "cli" / "src" / "server" / "api" / "openapi.json"
MODELS = HERE / "src" / "runlog" / "models.py"
HEADER = '''"""The API's views, generated from its OpenAPI document by scripts/generate.py: do not edit."""

'''


def camel(tag: str) -> str:
    return "".join(word[:1].upper() + word[1:] for word in re.split(r"[-_ ]", tag))


def tag_of(variant: dict[str, Any]) -> tuple[str, str] | None:
    if variant.get("type") != "object":
        return None
    for name, prop in variant.get("properties", {}).items():
        if isinstance(prop, dict) and isinstance(prop.get("const"), str):
            return name, prop["const"]
    return None


def name_variants(document: dict[str, Any]) -> dict[str, Any]:
    schemas = document["components"]["schemas"]
    taken = set(schemas)
    for parent in sorted(schemas):
        variants = schemas[parent].get("oneOf", [])
        tags = [tag_of(v) for v in variants]
        if not variants or any(t is None for t in tags):
            continue
        for variant, tag in zip(variants, tags):
            assert tag is not None
            name = camel(tag[1])
            if name in taken:
                name = parent + camel(tag[1])
            variant["title"] = name
            taken.add(name)
        first = tags[0]
        assert first is not None
        schemas[parent]["discriminator"] = {"propertyName": first[0]}
    return document


def generate() -> str:
    document = name_variants(json.loads(DOCUMENT.read_text()))
    with tempfile.TemporaryDirectory() as scratch:
        source = Path(scratch) / "openapi.json"
        target = Path(scratch) / "models.py"
        source.write_text(json.dumps(document))
        subprocess.run(
            [
                sys.executable,
                "-m",
                "datamodel_code_generator",
                "--input",
                str(source),
                "--input-file-type",
                "openapi",
                "--output",
                str(target),
                "--output-model-type",
                "pydantic_v2.BaseModel",
                "--preset",
                "standard-py310-20261113",
                "--formatters",
                "builtin",
                "--disable-timestamp",
                "--use-schema-description",
                "--use-field-description",
                "--use-title-as-name",
                "--collapse-root-models",
            ],
            check=True,
            stderr=subprocess.DEVNULL,
        )
        body = target.read_text()
    # The tool's own first lines name the scratch file: the header says where it came from.
    body = "\n".join(line for line in body.splitlines() if not line.startswith("#")).lstrip()
    return HEADER + body + ("" if body.endswith("\n") else "\n")


def main() -> int:
    models = generate()
    if "--check" in sys.argv[1:]:
        if MODELS.read_text() != models:
            print(
                f"{MODELS.relative_to(HERE)} is not what {DOCUMENT.name} generates: "
                "run `python scripts/generate.py` and commit the result",
                file=sys.stderr,
            )
            return 1
        print(f"{MODELS.relative_to(HERE)} matches {DOCUMENT.name}")
        return 0
    MODELS.write_text(models)
    print(f"wrote {MODELS.relative_to(HERE)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
