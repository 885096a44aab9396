"""What the repository itself says about running the service, for agreement.py to compare
the Kubernetes manifests with: the Dockerfile's final stage, config/default.toml, and the
paths of the OpenAPI snapshot (the routes the service serves). Standard library only."""

import json
import shlex
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"
DEFAULT_TOML = ROOT / "config/default.toml"
OPENAPI = ROOT / "tests/snapshots/openapi.json"
ENV_PREFIX = "PROFILE_LOOKUP__"


@dataclass
class Image:
    """The final stage of the Dockerfile: what the container starts with."""

    env: dict[str, str] = field(default_factory=dict)
    user: str | None = None
    exposed: list[int] = field(default_factory=list)


def dockerfile_instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    out, pending = [], ""
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("#") or (not line and not pending):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        full, pending = (pending + line).strip(), ""
        if full:
            word, _, rest = full.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def read_image(path: Path = DOCKERFILE) -> Image:
    image = Image()
    for word, args in dockerfile_instructions(path.read_text(encoding="utf-8")):
        if word == "FROM":
            image = Image()  # only the last stage is what runs
        elif word == "ENV":
            parts = shlex.split(args)
            if parts and "=" not in parts[0]:  # legacy `ENV KEY value`
                image.env[parts[0]] = " ".join(parts[1:])
            else:
                image.env.update(p.split("=", 1) for p in parts)
        elif word == "USER":
            image.user = args.split(":")[0]
        elif word == "EXPOSE":
            image.exposed += [int(p.split("/")[0]) for p in args.split()]
    return image


def default_config() -> dict:
    with DEFAULT_TOML.open("rb") as f:
        return tomllib.load(f)


def served_paths() -> set[str]:
    return set(json.loads(OPENAPI.read_text(encoding="utf-8"))["paths"])


def env_key(name: str) -> tuple[str, str] | None:
    """`PROFILE_LOOKUP__SHORT_VIDEO__BURST` -> ("short_video", "burst"); None if not that form."""
    if not name.startswith(ENV_PREFIX):
        return None
    parts = name[len(ENV_PREFIX):].lower().split("__")
    return (parts[0], parts[1]) if len(parts) == 2 and all(parts) else None
