#!/usr/bin/env python3
"""Fails when the rendered Kubernetes manifests break what docs/deployment.md promises.

    promises.py --write-documented DIR
        writes each example overlay of docs/deployment.md (a ```yaml block opening with
        `# my-overlay/kustomization.yaml`) into a folder of DIR, its paths pointed at
        deploy/kubernetes, and prints the folders, for kubectl kustomize to render;
    promises.py SHIPPED.yaml... [--documented RENDERED.yaml...]
        checks the rendered shipped overlays and the rendered example overlays.

What is checked, naming what is wrong:
  - Redis (shipped overlays): the URL of the fleet's Redis (and with it any password) is set
    in one place, the secret config file (PROFILE_LOOKUP_CONFIG, mounted from a Secret). No
    variable of the container (Dockerfile ENV, a ConfigMap it reads, its env) and no ConfigMap
    value sets it: the environment wins over the file, so a password-less URL there would make
    every replica connect without the password the file gives. And the replicas set
    redis.required, so that one whose secret file lost the URL refuses to start.
  - The Secret (every overlay): the docs tell operators that their secret manager may create
    "the Secret `NAME` with the key `KEY`". The Deployment mounts a Secret of exactly that name
    (no hash suffix) with the config file at that key, every Secret rendered for it has exactly
    that name, and one example overlay renders none (so applying it never overwrites the
    secret manager's).
  - The image: the shipped overlays run profile-lookup:VERSION, VERSION being the crate's
    (Cargo.toml), the tag the compose files name (an `image:`'s `${VAR:-default}` default) and
    every `docker build -t profile-lookup…` in the Dockerfile, README.md and docs/ builds; the
    docs' example overlays pin an image from a registry by digest, and one without a registry
    runs the crate's version, the image the docs build and load into a local cluster.
  - What an operator writes reaches the pods (every overlay): no ConfigMap the container reads
    sets a key to an empty value, and no variable of the container sets a key of the secret
    config file (the environment wins over the file, so the file's value would be ignored
    without a word). The docs' example overlays are rendered with the `secrets.toml` the docs'
    commands write (its canary accounts must be in effect), and every value an example merges
    into the ConfigMap (`behavior: merge`) is in the container's environment.

Run by scripts/kubernetes-check.sh inside its venv (PyYAML).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sources  # noqa: E402
from agreement import CONFIG_FILE_ENV, Render  # noqa: E402

DOCS = sources.ROOT / "docs/deployment.md"
CARGO_TOML = sources.ROOT / "Cargo.toml"
COMPOSE_FILES = sorted((sources.ROOT / "deploy").glob("compose*.yaml"))
BUILD_DOCS = [sources.ROOT / "Dockerfile", sources.ROOT / "README.md",
              *sorted((sources.ROOT / "docs").glob("*.md"))]
IMAGE = "profile-lookup"
KUBERNETES = sources.ROOT / "deploy/kubernetes"
REDIS_URL_ENV = f"{sources.ENV_PREFIX}REDIS__URL"
REDIS_REQUIRED_ENV = f"{sources.ENV_PREFIX}REDIS__REQUIRED"
EXAMPLE_MARK = "# my-overlay/kustomization.yaml"
# The docs' command that writes the operator's secrets.toml (a heredoc), run with these values.
SECRETS_HEREDOC = re.compile(r"^cat > my-overlay/secrets\.toml <<EOF\n.*?^EOF$", re.S | re.M)
DOCUMENTED_VALUES = {"KEY": "documented-key-0123456789abcdef",
                     "CANARY_SHORT_VIDEO": "documented.canary.sv",
                     "CANARY_PHOTO_SHARE": "documented.canary.ps"}
# How the docs' example overlays name the shipped folder: the operator's overlay beside a
# checkout of this repository.
EXAMPLE_ROOT = "../deploy/kubernetes/"


def promised_secret() -> tuple[str, str]:
    """The Secret name and key docs/deployment.md tells operators to create."""
    text = DOCS.read_text(encoding="utf-8")
    found = set(re.findall(r"the\s+Secret\s+`([^`]+)`\s+with\s+the\s+key\s+`([^`]+)`", text))
    if len(found) != 1:
        raise SystemExit(f"{DOCS.name}: expected one \"the Secret `NAME` with the key `KEY`\", "
                         f"found {sorted(found)}")
    return found.pop()


def documented_overlays() -> list[str]:
    """The example overlays of docs/deployment.md, as written there."""
    blocks = re.findall(r"```yaml\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S)
    return [b for b in blocks if b.startswith(EXAMPLE_MARK)]


def documented_secrets(out: Path) -> Path:
    """The secrets.toml the docs' commands write, written into `out` by those commands."""
    found = SECRETS_HEREDOC.findall(DOCS.read_text(encoding="utf-8"))
    if len(found) != 1:
        raise SystemExit(f"{DOCS.name}: expected one `cat > my-overlay/secrets.toml <<EOF` "
                         f"command, found {len(found)}")
    (out / "my-overlay").mkdir(parents=True)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **DOCUMENTED_VALUES}
    subprocess.run(["bash", "-euo", "pipefail", "-c", found[0]], cwd=out, env=env, check=True)
    return out / "my-overlay" / "secrets.toml"


def write_documented(out: Path) -> None:
    """Each example overlay in a folder of its own, its files beside it, ready to render."""
    shutil.rmtree(out, ignore_errors=True)
    examples = documented_overlays()
    if not examples:
        raise SystemExit(f"{DOCS.name}: no ```yaml block opens with {EXAMPLE_MARK!r}")
    secrets = documented_secrets(out)
    for n, text in enumerate(examples, 1):
        folder = out / f"documented-{n}"
        folder.mkdir(parents=True)
        real_root = os.path.relpath(KUBERNETES, folder) + "/"
        text = text.replace(EXAMPLE_ROOT, real_root)
        (folder / "kustomization.yaml").write_text(text, encoding="utf-8")
        kustomization = yaml.safe_load(text)
        # The operator's own files: the secrets.toml the docs' commands wrote.
        for generator in kustomization.get("secretGenerator", []):
            for name in generator.get("files", []):
                if name != secrets.name:
                    raise SystemExit(f"{DOCS.name}: example {n} generates its Secret from "
                                     f"{name}, which the docs' commands do not write")
                shutil.copy(secrets, folder / name)
        print(folder)


def redis_url_in_the_secret_only(render: Render) -> list[str]:
    """The Redis URL is the secret file's, and nothing in the environment overrides it."""
    errors = []
    image = sources.read_image()
    if REDIS_URL_ENV in image.env:
        errors.append(f"the Dockerfile's ENV sets {REDIS_URL_ENV}")
    for config_map in (o for o in render.objects if o["kind"] == "ConfigMap"):
        for key, value in config_map.get("data", {}).items():
            if key == REDIS_URL_ENV or re.search(r"rediss?://", str(value)):
                errors.append(f"ConfigMap {config_map['metadata']['name']} sets the Redis URL "
                              f"({key}), which would win over the secret file's")
    for var in render.container.get("env", []):
        if var["name"] == REDIS_URL_ENV:
            errors.append(f"the container's env sets {REDIS_URL_ENV}, which would win over "
                          "the secret file's")
    for source in render.container.get("envFrom", []):
        if "secretRef" in source:
            errors.append(f"the container takes variables from Secret "
                          f"{source['secretRef']['name']}: secrets are files here")
    environment = render.environment(image)
    if str(environment.get(REDIS_REQUIRED_ENV, "")).lower() != "true":
        errors.append(f"the replicas do not set {REDIS_REQUIRED_ENV}=true: one whose secret "
                      "file lost [redis] url would start and run alone")
    config_file = environment.get(CONFIG_FILE_ENV)
    content = render.secret_files().get(config_file)
    if content is None:
        errors.append(f"{CONFIG_FILE_ENV}={config_file} is not a file mounted from a Secret")
    else:
        url = tomllib.loads(content.decode()).get("redis", {}).get("url")
        if not url:
            errors.append(f"the secret file {config_file} sets no [redis] url: "
                          "the replicas would each run alone")
    return errors


def mounts_the_promised_secret(render: Render) -> list[str]:
    """The config file is key KEY of the Secret NAME the docs name, and no other is made."""
    name, key = promised_secret()
    errors = []
    config_file = render.environment(sources.read_image()).get(CONFIG_FILE_ENV, "")
    mounted = None
    for mount in render.container.get("volumeMounts", []):
        if config_file.startswith(mount["mountPath"].rstrip("/") + "/"):
            volume = next(v for v in render.pod["volumes"] if v["name"] == mount["name"])
            mounted = volume.get("secret", {}).get("secretName")
            if config_file != f"{mount['mountPath'].rstrip('/')}/{key}":
                errors.append(f"{CONFIG_FILE_ENV}={config_file} is not the key {key} the docs "
                              "name")
    if mounted != name:
        errors.append(f"the Deployment mounts the Secret {mounted!r}; the docs tell operators "
                      f"to create {name!r}")
    for secret in (o for o in render.objects if o["kind"] == "Secret"):
        made = secret["metadata"]["name"]
        if made != name and made.startswith(name):
            errors.append(f"the Secret is made as {made!r}, not the {name!r} the docs name")
    return errors


def crate_version() -> str:
    with CARGO_TOML.open("rb") as f:
        return tomllib.load(f)["package"]["version"]


def split_image(reference: str) -> tuple[str, str]:
    """`registry/name:tag` -> ("registry/name", "tag"); no tag is Docker's `latest`."""
    name, _, digest = reference.partition("@")
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        name, tag = name.rsplit(":", 1)
        return name, tag
    return name, digest or "latest"


def runs_the_crate_version(render: Render) -> list[str]:
    wanted = f"{IMAGE}:{crate_version()}"
    image = render.container["image"]
    return [] if image == wanted else [f"the Deployment runs {image}, not {wanted} (Cargo.toml)"]


def pins_by_digest(render: Render) -> list[str]:
    """An image from a registry is pinned by digest; a local one is the crate's version."""
    image = render.container["image"]
    if "/" not in image.split("@")[0]:
        return runs_the_crate_version(render)
    return [] if "@sha256:" in image else [f"the example pins no digest: {image}"]


def env_name(path: list[str]) -> str:
    """The variable that sets the config key at `path` (PROFILE_LOOKUP__SECTION__KEY)."""
    return sources.ENV_PREFIX + "__".join(p.upper() for p in path)


def file_keys(table: dict, path: list[str] | None = None) -> list[list[str]]:
    """Every key of a TOML document, as its path of table names."""
    keys = []
    for key, value in table.items():
        here = [*(path or []), key]
        keys += file_keys(value, here) if isinstance(value, dict) else [here]
    return keys


def secret_settings(render: Render) -> dict:
    """The secret config file the container reads, parsed ({} when there is none, as when a
    secret manager makes the Secret)."""
    if not any(o["kind"] == "Secret" for o in render.objects):
        return {}
    environment = render.environment(sources.read_image())
    content = render.secret_files().get(environment.get(CONFIG_FILE_ENV))
    return tomllib.loads(content.decode()) if content else {}


def settings_reach_the_pod(render: Render) -> list[str]:
    """No empty ConfigMap value, and no variable hiding a key of the secret config file."""
    errors = []
    for source in render.container.get("envFrom", []):
        if "configMapRef" in source:
            config_map = render.one("ConfigMap", source["configMapRef"]["name"])
            for key, value in config_map.get("data", {}).items():
                if not str(value).strip():
                    errors.append(f"ConfigMap {config_map['metadata']['name']} sets {key} to "
                                  "an empty value, which wins over the config file's")
    environment = render.environment(sources.read_image())
    for path in file_keys(secret_settings(render)):
        name = env_name(path)
        if name in environment:
            errors.append(f"the secret file's {'.'.join(path)} is ignored: the container's "
                          f"environment sets {name}, which wins over the file")
    return errors


def documented_settings_in_effect(render: Render, example: str) -> list[str]:
    """The docs' secrets.toml is the one mounted, its canary accounts in effect, and every
    value the example merges into the ConfigMap in the container's environment."""
    errors = []
    if any(o["kind"] == "Secret" for o in render.objects):
        canary = secret_settings(render).get("canary", {})
        for platform, variable in [("short_video", "CANARY_SHORT_VIDEO"),
                                   ("photo_share", "CANARY_PHOTO_SHARE")]:
            if canary.get(platform) != [DOCUMENTED_VALUES[variable]]:
                errors.append(f"the pods' [canary] {platform} is {canary.get(platform)!r}, not "
                              "the account the docs' secrets.toml sets")
    environment = render.environment(sources.read_image())
    for generator in yaml.safe_load(example).get("configMapGenerator", []):
        for literal in generator.get("literals", []):
            key, _, value = literal.partition("=")
            if environment.get(key) != value:
                errors.append(f"{key}={value} merged into the ConfigMap is "
                              f"{environment.get(key)!r} in the container's environment")
    return errors


def builds_and_composes_the_crate_version() -> list[str]:
    """The tag docker build and the compose files give the image is the crate's version."""
    version, errors, composed = crate_version(), [], 0
    for path in COMPOSE_FILES:
        with path.open(encoding="utf-8") as f:
            services = yaml.safe_load(f).get("services", {})
        for service, spec in services.items():
            image = str(spec.get("image", ""))
            default = re.fullmatch(r"\$\{\w+:?-(.*)\}", image)
            name, tag = split_image(default.group(1) if default else image)
            if name == IMAGE:
                composed += 1
                if tag != version:
                    errors.append(f"{path.name}: {service} runs {image}; the crate is {version}")
    if not composed:
        errors.append(f"no compose file names the {IMAGE} image")
    for path in BUILD_DOCS:
        text = path.read_text(encoding="utf-8")
        for reference in re.findall(r"docker build\b[^\n`]*?\s-t\s+(\S+)", text):
            name, tag = split_image(reference)
            if name == IMAGE and tag != version:
                errors.append(f"{path.name}: `docker build -t {reference}`; the crate is {version}")
    return errors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write-documented", type=Path, metavar="DIR")
    parser.add_argument("shipped", nargs="*")
    parser.add_argument("--documented", nargs="*", default=[])
    args = parser.parse_args()
    if args.write_documented:
        write_documented(args.write_documented)
        return 0
    if not args.shipped or not args.documented:
        parser.error("give the rendered shipped overlays and, after --documented, the "
                     "rendered example overlays of docs/deployment.md")
    errors = []

    def report(render: Render, found: list[str], what: str) -> None:
        errors.extend(f"{render.where}: {e}" for e in found)
        if not found:
            print(f"ok   {render.where}: {what}")

    for path in args.shipped:
        render = Render(path)
        report(render, redis_url_in_the_secret_only(render) + mounts_the_promised_secret(render)
               + runs_the_crate_version(render) + settings_reach_the_pod(render),
               "the Redis URL is set in the secret file only, which is mounted from the "
               "Secret the docs name; the image is the crate's version; no empty ConfigMap "
               "value, no variable hiding a setting of the secret file")
    without_secret = 0
    examples = documented_overlays()
    if len(examples) != len(args.documented):
        errors.append(f"{len(args.documented)} rendered example overlays for the "
                      f"{len(examples)} of {DOCS.name}")
    for path, example in zip(args.documented, examples):
        render = Render(path)
        report(render, mounts_the_promised_secret(render) + pins_by_digest(render)
               + settings_reach_the_pod(render) + documented_settings_in_effect(render, example),
               "the docs' example overlay mounts the Secret the docs name, pins its image, "
               "and the docs' secrets.toml (canary accounts) and merged values reach the pods")
        without_secret += not any(o["kind"] == "Secret" for o in render.objects)
    found = builds_and_composes_the_crate_version()
    errors += found
    if not found:
        print(f"ok   compose files and `docker build -t` lines: {IMAGE}:{crate_version()}")
    if not without_secret:
        errors.append(f"{DOCS.name}: no example overlay leaves the Secret to a secret manager "
                      "(every one renders a Secret, which `kubectl apply` would write over "
                      "the manager's)")
    for error in errors:
        print(f"FAIL {error}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
