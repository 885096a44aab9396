#!/usr/bin/env python3
"""Fails when the rendered Kubernetes manifests break what docs/deployment.md promises.

    promises.py RENDERED.yaml...

For each rendered overlay, naming what is wrong:
  - Redis: the URL of the fleet's Redis (and with it any password) is set in one place, the
    secret config file (PROFILE_LOOKUP_CONFIG, mounted from a Secret). No variable of the
    container (Dockerfile ENV, a ConfigMap it reads, its env) and no ConfigMap value sets it:
    the environment wins over the file, so a password-less URL there would make every
    replica connect without the password the file gives.

Run by scripts/kubernetes-check.sh inside its venv (PyYAML).
"""

import sys
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sources  # noqa: E402
from agreement import Render  # noqa: E402

REDIS_URL_ENV = f"{sources.ENV_PREFIX}REDIS__URL"


def redis_url_in_the_secret_only(render: Render) -> list[str]:
    """The Redis URL is the secret file's, and nothing in the environment overrides it."""
    errors = []
    image = sources.read_image()
    if REDIS_URL_ENV in image.env:
        errors.append(f"the Dockerfile's ENV sets {REDIS_URL_ENV}")
    for config_map in (o for o in render.objects if o["kind"] == "ConfigMap"):
        for key, value in config_map.get("data", {}).items():
            if key == REDIS_URL_ENV or "redis://" in str(value):
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
    config_file = render.environment(image).get("PROFILE_LOOKUP_CONFIG")
    content = render.secret_files().get(config_file)
    if content is None:
        errors.append(f"PROFILE_LOOKUP_CONFIG={config_file} is not a file mounted from a Secret")
    else:
        url = tomllib.loads(content.decode()).get("redis", {}).get("url")
        if not url:
            errors.append(f"the secret file {config_file} sets no [redis] url: "
                          "the replicas would each run alone")
    return [f"{render.where}: {e}" for e in errors]


def main() -> int:
    errors = []
    for path in sys.argv[1:]:
        render = Render(path)
        found = redis_url_in_the_secret_only(render)
        errors += found
        if not found:
            print(f"ok   {render.where}: the Redis URL is set in the secret file only")
    for error in errors:
        print(f"FAIL {error}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
