#!/usr/bin/env python3
"""Fails when the rendered Kubernetes manifests disagree with the service they run.

    agreement.py [--binary PATH] RENDERED.yaml...

For the profile-lookup Deployment of each rendered overlay it checks, naming what differs:
  - probes: liveness on /healthz, readiness on /readyz, startup on one of them; each path in
    the OpenAPI snapshot (the routes the service serves), each port the container's;
  - port: the container port is the port of server.listen as the container gets it (the
    Dockerfile's PROFILE_LOOKUP__SERVER__LISTEN unless the manifest overrides it), which
    listens on every interface and is the Dockerfile's EXPOSE; the Service and the
    ServiceMonitor reach that port, and the ServiceMonitor scrapes a served path;
  - grace: terminationGracePeriodSeconds is above the preStop wait plus
    server.drain_delay_ms (when that key exists) plus server.shutdown_grace_ms;
  - environment: every PROFILE_LOOKUP__SECTION__KEY (Dockerfile, ConfigMap, container) names a
    key of config/default.toml, and the secret config file's keys do too;
  - identity: the pod and container uid are the Dockerfile's USER;
  - upstream.capture_dir, when set, is on an emptyDir with a size limit;
  - with --binary: `profile-lookup check --offline` accepts the settings the container would
    get (ranges, URL forms, digests, keys; upstream.capture_dir moved to a temporary folder,
    and the plain client when the binary was built without the image's browser-grade one),
    and in the effective configuration it prints every key the secret config file sets comes
    from that file, never from a variable that hides it (a canary account written there is
    the canary's).

Run by scripts/kubernetes-check.sh inside its venv (PyYAML).
"""

import argparse
import base64
import json
import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sources  # noqa: E402

APP = "profile-lookup"
CONFIG_FILE_ENV = "PROFILE_LOOKUP_CONFIG"
CLIENT_ENV = "PROFILE_LOOKUP__UPSTREAM__CLIENT"
BINARY_TIMEOUT_S = 30


class Render:
    """One rendered overlay: its objects by kind and name, and the service's container."""

    def __init__(self, path: str):
        self.where = Path(path).name
        with open(path, encoding="utf-8") as f:
            self.objects = [o for o in yaml.safe_load_all(f) if o]
        self.deployment = self.one("Deployment", APP)
        self.pod = self.deployment["spec"]["template"]["spec"]
        self.container = next(c for c in self.pod["containers"] if c["name"] == APP)

    def one(self, kind: str, name: str) -> dict:
        for o in self.objects:
            if o["kind"] == kind and o["metadata"]["name"] == name:
                return o
        raise SystemExit(f"{self.where}: no {kind} named {name}")

    def secret_files(self) -> dict[str, bytes]:
        """Path in the container -> content, for every file mounted from a Secret rendered
        here (not one a secret manager makes)."""
        files = {}
        made_here = {o["metadata"]["name"] for o in self.objects if o["kind"] == "Secret"}
        for mount in self.container.get("volumeMounts", []):
            volume = next(v for v in self.pod.get("volumes", []) if v["name"] == mount["name"])
            if "secret" in volume and volume["secret"]["secretName"] in made_here:
                secret = self.one("Secret", volume["secret"]["secretName"])
                for key, value in secret.get("data", {}).items():
                    files[f"{mount['mountPath']}/{key}"] = base64.b64decode(value)
                for key, value in secret.get("stringData", {}).items():
                    files[f"{mount['mountPath']}/{key}"] = value.encode()
        return files

    def environment(self, image: sources.Image) -> dict[str, str]:
        """The container's variables: the image's, then envFrom ConfigMaps, then env."""
        env = dict(image.env)
        for source in self.container.get("envFrom", []):
            if "configMapRef" in source:
                env.update(self.one("ConfigMap", source["configMapRef"]["name"]).get("data", {}))
        for var in self.container.get("env", []):
            env[var["name"]] = var.get("value", "<from valueFrom>")
        return env


class Checker:
    def __init__(self, render: Render):
        self.r = render
        self.image = sources.read_image()
        self.defaults = sources.default_config()
        self.served = sources.served_paths()
        self.env = render.environment(self.image)
        self.files = render.secret_files()
        self.errors: list[str] = []
        self.file_settings = self.read_config_file()

    def fail(self, message: str) -> None:
        self.errors.append(f"{self.r.where}: {message}")

    def read_config_file(self) -> dict:
        """The secret config file's settings (PROFILE_LOOKUP_CONFIG), read once."""
        path = self.env.get(CONFIG_FILE_ENV)
        if path is None:
            return {}
        if path not in self.files:
            if not self.from_outside(path):
                self.fail(f"{CONFIG_FILE_ENV}={path} is not a file mounted from a Secret")
            return {}
        try:
            return tomllib.loads(self.files[path].decode())
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
            self.fail(f"{path} (from the Secret) is not valid TOML: {e}")
            return {}

    def from_outside(self, path: str) -> bool:
        """Whether `path` is mounted from a Secret the overlay does not make (a secret
        manager's)."""
        for mount in self.r.container.get("volumeMounts", []):
            volume = next(v for v in self.r.pod.get("volumes", []) if v["name"] == mount["name"])
            if "secret" in volume and path.startswith(mount["mountPath"].rstrip("/") + "/"):
                return True
        return False

    def setting(self, section: str, key: str):
        """The value the service would use: environment, then config file, then default."""
        name = f"{sources.ENV_PREFIX}{section.upper()}__{key.upper()}"
        if name in self.env:
            return self.env[name]
        return self.file_settings.get(section, {}).get(key, self.defaults[section][key])

    def container_port(self, ref) -> int | None:
        for port in self.r.container.get("ports", []):
            if ref in (port.get("name"), port["containerPort"]):
                return port["containerPort"]
        return None

    def check_probes(self) -> None:
        wanted = {"livenessProbe": {"/healthz"}, "readinessProbe": {"/readyz"},
                  "startupProbe": {"/healthz", "/readyz"}}
        for probe, paths in wanted.items():
            get = self.r.container.get(probe, {}).get("httpGet")
            if get is None:
                self.fail(f"{probe}: missing, or not an httpGet probe")
                continue
            if get["path"] not in paths or get["path"] not in self.served:
                self.fail(f"{probe} path {get['path']}: the service serves {sorted(paths)} "
                          f"for it (OpenAPI snapshot paths: {sorted(self.served)})")
            if self.container_port(get["port"]) is None:
                self.fail(f"{probe} port {get['port']!r} is not a port of the container")

    def check_port(self) -> None:
        listen = str(self.setting("server", "listen"))
        host, _, port = listen.rpartition(":")
        ports = [p["containerPort"] for p in self.r.container.get("ports", [])]
        if ports != [int(port)]:
            self.fail(f"container ports {ports}, but server.listen is {listen} "
                      "(Dockerfile PROFILE_LOOKUP__SERVER__LISTEN unless overridden)")
        if host.strip("[]") not in ("0.0.0.0", "::"):
            self.fail(f"server.listen {listen} does not listen on every interface")
        if self.image.exposed != [int(port)]:
            self.fail(f"Dockerfile EXPOSE {self.image.exposed}, server.listen port {port}")
        service = self.r.one("Service", APP)
        for sp in service["spec"]["ports"]:
            if self.container_port(sp.get("targetPort", sp["port"])) is None:
                self.fail(f"Service port {sp['name']} targets {sp.get('targetPort')!r}, "
                          "not a port of the container")
        labels = service["metadata"].get("labels", {})
        for monitor in (o for o in self.r.objects if o["kind"] == "ServiceMonitor"):
            selector = monitor["spec"]["selector"].get("matchLabels", {})
            if any(labels.get(k) != v for k, v in selector.items()):
                self.fail(f"ServiceMonitor selects {selector}; the Service has {labels}")
            names = {p["name"] for p in service["spec"]["ports"]}
            for endpoint in monitor["spec"]["endpoints"]:
                if endpoint.get("port") not in names:
                    self.fail(f"ServiceMonitor port {endpoint.get('port')!r} is not a Service "
                              f"port ({sorted(names)})")
                if endpoint.get("path", "/metrics") not in self.served:
                    self.fail(f"ServiceMonitor path {endpoint.get('path')} is not served")

    def pre_stop_seconds(self) -> int:
        pre_stop = self.r.container.get("lifecycle", {}).get("preStop")
        if not pre_stop:
            return 0
        if "sleep" in pre_stop:
            return int(pre_stop["sleep"]["seconds"])
        command = pre_stop.get("exec", {}).get("command", [])
        if len(command) == 2 and Path(command[0]).name == "sleep":
            return int(command[1])
        self.fail(f"preStop {pre_stop}: only a sleep (action or exec) can be timed")
        return 0

    def check_grace(self) -> None:
        pre_stop = self.pre_stop_seconds()
        shutdown_ms = int(self.setting("server", "shutdown_grace_ms"))
        drain_ms = 0
        if "drain_delay_ms" in self.defaults["server"]:
            drain_ms = int(self.setting("server", "drain_delay_ms"))
        grace = self.r.pod.get("terminationGracePeriodSeconds", 30)
        needed = pre_stop + (drain_ms + shutdown_ms) / 1000
        if not grace > needed:
            self.fail(f"terminationGracePeriodSeconds {grace} is not above preStop {pre_stop} s "
                      f"+ server.drain_delay_ms {drain_ms} + server.shutdown_grace_ms "
                      f"{shutdown_ms} = {needed:g} s")

    def check_environment(self) -> None:
        sources_of = [("Dockerfile ENV", self.image.env)]
        for source in self.r.container.get("envFrom", []):
            if "configMapRef" in source:
                name = source["configMapRef"]["name"]
                sources_of.append((f"ConfigMap {name}", self.r.one("ConfigMap", name)["data"]))
        sources_of.append(("container env", {v["name"]: "" for v in self.r.container.get("env", [])}))
        for origin, names in sources_of:
            for name in names:
                key = sources.env_key(name)
                if name == CONFIG_FILE_ENV:
                    continue
                if name.startswith("PROFILE_LOOKUP") and (
                    key is None or key[1] not in self.defaults.get(key[0], {})
                ):
                    self.fail(f"{origin}: {name} names no key of config/default.toml")
        for section, values in self.file_settings.items():
            if not isinstance(values, dict):
                self.fail(f"{self.env[CONFIG_FILE_ENV]}: {section} is not a [section]")
                continue
            for key in values:
                if key not in self.defaults.get(section, {}):
                    self.fail(f"{self.env[CONFIG_FILE_ENV]}: {section}.{key} is not a key of "
                              "config/default.toml")

    def check_identity(self) -> None:
        wanted = self.image.user
        for origin, context in (("pod", self.r.pod.get("securityContext", {})),
                                ("container", self.r.container.get("securityContext", {}))):
            uid = context.get("runAsUser")
            if uid is not None and str(uid) != wanted:
                self.fail(f"{origin} runAsUser {uid}, Dockerfile USER {wanted}")
        if all(c.get("runAsUser") is None for c in (self.r.pod.get("securityContext", {}),
                                                    self.r.container.get("securityContext", {}))):
            self.fail(f"no runAsUser: the pod should run as the Dockerfile's USER {wanted}")

    def check_capture_dir(self) -> None:
        folder = str(self.setting("upstream", "capture_dir"))
        if not folder:
            return
        for mount in self.r.container.get("volumeMounts", []):
            if folder == mount["mountPath"] or folder.startswith(mount["mountPath"].rstrip("/") + "/"):
                volume = next(v for v in self.r.pod["volumes"] if v["name"] == mount["name"])
                if volume.get("emptyDir", {}).get("sizeLimit"):
                    return
        self.fail(f"upstream.capture_dir {folder} is not on an emptyDir with a sizeLimit")

    def check_binary(self, binary: str) -> bool:
        """`check --offline` on what the container would be given: the settings load, and each
        key of the secret config file is in effect from it; `False` (nothing run) when the
        config file is a Secret made outside the overlay."""
        config_path = self.env.get(CONFIG_FILE_ENV)
        if config_path not in self.files:
            return False
        with tempfile.TemporaryDirectory() as tmp:
            env = {k: v for k, v in self.env.items() if k.startswith("PROFILE_LOOKUP")}
            local_config = None
            for path, content in self.files.items():
                local = Path(tmp) / Path(path).name
                local.write_bytes(content)
                if path == config_path:
                    local_config = str(local)
            env[CONFIG_FILE_ENV] = local_config
            # The pod's folder is not this machine's to create.
            env["PROFILE_LOOKUP__UPSTREAM__CAPTURE_DIR"] = str(Path(tmp) / "captures")
            # The image is built with the browser-grade client; a binary built without it
            # checks the rest with the plain one.
            version = subprocess.run([binary, "--version"], capture_output=True, text=True,
                                     timeout=BINARY_TIMEOUT_S, check=False).stdout
            if "browser" not in version and env.get(CLIENT_ENV) == "browser":
                env[CLIENT_ENV] = "plain"
            run = subprocess.run([binary, "check", "--offline"], env=env, capture_output=True,
                                 text=True, timeout=BINARY_TIMEOUT_S, check=False)
        if run.returncode != 0:
            self.fail(f"{binary} check --offline with the container's settings exited "
                      f"{run.returncode}: {run.stderr.strip()}")
            return True
        effective = {}
        for line in run.stdout.splitlines():
            key, _, rest = line.partition(" = ")
            if rest:
                value, _, origin = rest.partition("  # ")
                effective[key] = (value, origin or "default")
        secret = tomllib.loads(self.files[config_path].decode())
        for section, values in secret.items():
            for key, wanted in values.items() if isinstance(values, dict) else ():
                name = f"{section}.{key}"
                if name not in effective:
                    self.fail(f"check prints no {name}, which the secret config file sets")
                    continue
                value, origin = effective[name]
                # From the file, or a default the file repeats; anything else hid the file's.
                if origin.startswith(local_config + ":"):
                    continue
                if origin == "default" and value == json.dumps(wanted):
                    continue
                self.fail(f"{name} of the secret config file is not in effect: check shows "
                          f"{value} from {origin}")
        return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", help="a profile-lookup binary to load the settings")
    parser.add_argument("rendered", nargs="+")
    args = parser.parse_args()
    errors = []
    for path in args.rendered:
        checker = Checker(Render(path))
        checker.check_probes()
        checker.check_port()
        checker.check_grace()
        checker.check_environment()
        checker.check_identity()
        checker.check_capture_dir()
        loaded = args.binary and checker.check_binary(args.binary)
        errors += checker.errors
        if not checker.errors:
            print(f"ok   {checker.r.where}: probes, port, grace period, environment, uid and "
                  f"capture dir agree with the Dockerfile and config/default.toml"
                  + (", and `check` has the secret file's settings in effect" if loaded else "")
                  + (" (the config file is a Secret made outside the overlay)"
                     if args.binary and not loaded else ""))
    for error in errors:
        print(f"FAIL {error}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
