#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Offline check of amdqp's Kubernetes manifests (no cluster needed).

Each YAML document is validated against this folder's JSON schema for its
kind (the fields the manifests use, closed against misspellings, plus what
amdqp relies on: hostPID, the annotation-to-AMDQP_PRIORITY wiring, ...).
Then what a schema cannot see across fields and documents:

* every volumeMount names a volume of its pod, every configMap volume a
  ConfigMap of the same namespace among the files given;
* a DaemonSet's selector matches its template's labels;
* an env fieldRef to metadata.annotations['K'] has K on the pod;
* the ConfigMap's amdqpd.toml is TOML, uses only the keys of the example
  config (--example), serves metrics on loopback only and asks the API
  only on loopback (the proxy sidecar);
* the daemon is not privileged: every capability dropped but the ones it
  uses, seccomp RuntimeDefault, no host /dev, /dev/amdqp from the device
  plugin (amdqp.io/device), the API token in the proxy sidecar only; its
  one hostPath is the node's socket folder (/run/amdqpd), writable,
  mounted at its runtime_dir;
* nothing on the node is made writable by every user: no hostPath under
  /dev/shm, no init container that makes a world-writable directory (the
  1777 page directory of the old design: activity pages are memfds the
  processes hold, found through /proc/PID/fd);
* a tagged pod (a tenant's) passes Pod Security "baseline" and more: no
  hostPID/hostIPC/hostNetwork, no hostPath, no privileged container, no
  capability added, no hostPort, no Unconfined seccomp or Unmasked /proc,
  no unsafe sysctl; its namespace is among the files and enforces
  baseline or restricted; its AMDQP_RUNTIME_DIR (default /run/amdqpd) is
  where the device plugin mounts the node's socket folder, and its
  LD_PRELOAD lies in the device plugin's library mount.

Prints one line per problem, "FILE: KIND/NAME: what is wrong"; exits 1 if
there is any, 2 on bad usage or missing modules.
"""

import argparse
import json
import os
import re
import sys

try:
    import tomllib
    import jsonschema
    import yaml
except ImportError as e:
    print(f"check-manifests: {e} (Debian: python3-yaml, python3-jsonschema; "
          "Python >= 3.11 for tomllib)", file=sys.stderr)
    sys.exit(2)

SCHEMA_DIR = os.path.dirname(os.path.abspath(__file__))
KIND_SCHEMAS = {
    "Namespace": "namespace.json",
    "ConfigMap": "configmap.json",
    "DaemonSet": "daemonset.json",
    "Pod": "pod.json",
    "ServiceAccount": "rbac.json",
    "ClusterRole": "rbac.json",
    "ClusterRoleBinding": "rbac.json",
    "PriorityClass": "rbac.json",
}
# Where amdqp's device plugin mounts the tagging layer into a container.
PLUGIN_LIB_DIR = "/opt/amdqp/lib"
# amdqpd's socket folder on the node (AMDQP_DAEMON_DIR), and where the
# device plugin mounts it read-only into a container: the default of
# AMDQP_RUNTIME_DIR and of the daemon's runtime_dir.
NODE_SOCKET_DIR = "/run/amdqpd"
PLUGIN_SOCKET_DIR = "/run/amdqpd"
DEFAULT_RUNTIME_DIR = "/run/amdqpd"
# A mode with the write bit for others (1777, 0777, 0666, o+w, a+w).
WORLD_WRITABLE = re.compile(
    r"(?:\binstall\b|\bmkdir\b)[^;&|\n]*?(?:-m\s*|--mode[= ])0*[0-7]?[0-7][0-7][2367]\b"
    r"|\bchmod\s+(?:-\S+\s+)*(?:0*[0-7]?[0-7][0-7][2367]\b|[ugo]*[oa][ugo]*[+=][rxXst]*w)")
# What the daemon container may add (Documentation/security.rst says why).
DAEMON_CAPS = {"SYS_PTRACE", "SYS_NICE", "SYS_ADMIN", "DAC_OVERRIDE"}
# Pod Security "baseline": the sysctls a pod may set.
SAFE_SYSCTLS = {"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range",
                "net.ipv4.ip_unprivileged_port_start", "net.ipv4.tcp_syncookies",
                "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
                "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout",
                "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"}
ANNOTATION_REF = re.compile(r"^metadata\.annotations\['([^']+)'\]$")


def load_schemas():
    store = {}
    for name in ["common.json", *sorted(set(KIND_SCHEMAS.values()))]:
        with open(os.path.join(SCHEMA_DIR, name), encoding="utf-8") as f:
            schema = json.load(f)
        jsonschema.Draft202012Validator.check_schema(schema)
        store[schema["$id"]] = schema
        store[name] = schema
    return store


def validator_for(kind, store):
    schema = store[KIND_SCHEMAS[kind]]
    try:  # jsonschema >= 4.18 resolves through "referencing"
        from referencing import Registry, Resource
    except ImportError:  # Debian 12's 4.10
        resolver = jsonschema.RefResolver.from_schema(schema, store=store)
        return jsonschema.Draft202012Validator(schema, resolver=resolver)
    registry = Registry().with_resources(
        (uri, Resource.from_contents(s)) for uri, s in store.items() if "://" in uri)
    return jsonschema.Draft202012Validator(schema, registry=registry)


def toml_keys(table, prefix=""):
    """Dotted key paths of a parsed TOML document; [[rule]] entries merged."""
    keys = set()
    for k, v in table.items():
        path = f"{prefix}{k}"
        if isinstance(v, dict):
            keys |= toml_keys(v, path + ".")
        elif isinstance(v, list) and v and all(isinstance(e, dict) for e in v):
            for e in v:
                keys |= toml_keys(e, path + ".")
        else:
            keys.add(path)
    return keys


def example_keys(path):
    """The keys of the example config with every commented setting enabled."""
    setting = re.compile(r"^# (\[\[?[a-z_]+\]\]?|[a-z0-9_.]+ = .+)$")
    with open(path, encoding="utf-8") as f:
        text = "".join(m.group(1) + "\n" if (m := setting.match(line)) else line
                       for line in f)
    return toml_keys(tomllib.loads(text))


class Checker:
    def __init__(self, example):
        self.problems = []
        self.example = example
        self.store = load_schemas()
        self.docs = []  # (file, doc)

    def problem(self, where, what):
        self.problems.append(f"{where}: {what}")

    def load(self, path):
        with open(path, encoding="utf-8") as f:
            try:
                docs = [d for d in yaml.safe_load_all(f) if d is not None]
            except yaml.YAMLError as e:
                self.problem(path, f"not YAML: {e}")
                return
        for doc in docs:
            if not isinstance(doc, dict) or doc.get("kind") not in KIND_SCHEMAS:
                kind = doc.get("kind") if isinstance(doc, dict) else type(doc).__name__
                self.problem(path, f"no schema for a document of kind {kind!r}")
                continue
            self.docs.append((path, doc))

    @staticmethod
    def name(doc):
        return f"{doc['kind']}/{doc.get('metadata', {}).get('name', '?')}"

    def check_schemas(self):
        for path, doc in self.docs:
            v = validator_for(doc["kind"], self.store)
            for err in sorted(v.iter_errors(doc), key=lambda e: list(e.absolute_path)):
                at = "/".join(str(p) for p in err.absolute_path) or "(top)"
                self.problem(f"{path}: {self.name(doc)}", f"{at}: {self.message(err)}")

    @staticmethod
    def message(err):
        # jsonschema prints the whole array for a failed "contains".
        if err.validator == "contains" and isinstance(err.validator_value, dict):
            what = err.validator_value.get("description")
            if what:
                return f"none is {what}"
            return "none matches " + json.dumps(err.validator_value)[:300]
        return err.message

    def pods(self):
        """(file, doc, pod metadata, pod spec) of every Pod and template."""
        for path, doc in self.docs:
            if doc["kind"] == "Pod":
                yield path, doc, doc.get("metadata", {}), doc.get("spec", {})
            elif doc["kind"] == "DaemonSet":
                t = doc.get("spec", {}).get("template", {})
                yield path, doc, t.get("metadata", {}), t.get("spec", {})

    def configmaps(self):
        return {(d["metadata"].get("namespace"), d["metadata"]["name"]): d
                for _, d in self.docs if d["kind"] == "ConfigMap"}

    def check_references(self):
        cms = self.configmaps()
        for path, doc, meta, spec in self.pods():
            where = f"{path}: {self.name(doc)}"
            volumes = {v.get("name"): v for v in spec.get("volumes", [])}
            for c in spec.get("initContainers", []) + spec.get("containers", []):
                for m in c.get("volumeMounts", []):
                    if m.get("name") not in volumes:
                        self.problem(where, f"container {c.get('name')} mounts "
                                     f"volume {m.get('name')!r}, which the pod lacks")
                for e in c.get("env", []):
                    ref = e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath", "")
                    m = ANNOTATION_REF.match(ref)
                    if m and m.group(1) not in meta.get("annotations", {}):
                        self.problem(where, f"env {e.get('name')} reads annotation "
                                     f"{m.group(1)!r}, which the pod does not set")
            ns = doc["metadata"].get("namespace")
            for v in volumes.values():
                cm = v.get("configMap", {}).get("name")
                if cm and (ns, cm) not in cms:
                    self.problem(where, f"volume {v['name']} uses ConfigMap {cm!r}, "
                                 f"not defined in namespace {ns}")
            if doc["kind"] == "DaemonSet":
                sel = doc["spec"].get("selector", {}).get("matchLabels", {})
                labels = meta.get("labels", {})
                if any(labels.get(k) != v for k, v in sel.items()):
                    self.problem(where, "spec.selector.matchLabels does not match "
                                 "the template's labels")

    def daemon(self):
        """(file, doc, pod spec, amdqpd container) of the DaemonSet, or None."""
        for path, doc, _, spec in self.pods():
            if doc["kind"] != "DaemonSet":
                continue
            for c in spec.get("containers", []):
                if c.get("name") == "amdqpd":
                    return path, doc, spec, c
        return None

    def check_daemon_config(self):
        """Returns the daemon's runtime_dir (None when unknown)."""
        d = self.daemon()
        if not d:
            return None
        path, doc, spec, c = d
        where = f"{path}: {self.name(doc)}"
        cm_volumes = {v["name"]: v["configMap"]["name"]
                      for v in spec.get("volumes", []) if "configMap" in v}
        config_file = None
        cmd = c.get("command", [])
        if "--config" in cmd[:-1]:
            config_file = cmd[cmd.index("--config") + 1]
        cm_doc = None
        for m in c.get("volumeMounts", []):
            if (config_file and m.get("name") in cm_volumes
                    and os.path.dirname(config_file) == os.path.normpath(m["mountPath"])):
                cm_doc = self.configmaps().get((doc["metadata"].get("namespace"),
                                                cm_volumes[m["name"]]))
        if not cm_doc:
            self.problem(where, f"--config {config_file} is not a file of a "
                         "mounted ConfigMap")
            return None
        key = os.path.basename(config_file)
        text = cm_doc.get("data", {}).get(key)
        cm_where = f"{path}: {self.name(cm_doc)}"
        if text is None:
            self.problem(cm_where, f"no key {key!r} for amdqpd's --config")
            return None
        try:
            config = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            self.problem(cm_where, f"{key} is not TOML: {e}")
            return None
        if self.example:
            unknown = toml_keys(config) - example_keys(self.example)
            for k in sorted(unknown):
                self.problem(cm_where, f"{key}: {k} is not a knob of "
                             f"{os.path.basename(self.example)}")
        runtime_dir = config.get("daemon", {}).get("runtime_dir", DEFAULT_RUNTIME_DIR)
        metrics = config.get("daemon", {}).get("metrics", "127.0.0.1:9464")
        if metrics and not (metrics.startswith("127.") or metrics.startswith("[::1]:")
                            or metrics.startswith("localhost:") or metrics.startswith("unix:")):
            self.problem(cm_where, f"{key}: metrics = {metrics!r} is not loopback: the "
                         "per-node metrics would be open to every pod of the cluster")
        api = config.get("kubernetes", {}).get("api", "")
        if api and not (api.startswith("http://127.0.0.1:") or api.startswith("unix:/")):
            self.problem(cm_where, f"{key}: [kubernetes] api = {api!r} is not loopback")
        self.check_daemon_privileges(where, spec, c, runtime_dir)
        return runtime_dir

    def check_daemon_privileges(self, where, spec, c, runtime_dir):
        sc = c.get("securityContext", {})
        if sc.get("privileged"):
            self.problem(where, "container amdqpd is privileged")
        caps = sc.get("capabilities", {})
        if caps.get("drop") != ["ALL"]:
            self.problem(where, "container amdqpd does not drop ALL capabilities")
        extra = set(caps.get("add", [])) - DAEMON_CAPS
        if extra:
            self.problem(where, f"container amdqpd adds {sorted(extra)}: only "
                         f"{sorted(DAEMON_CAPS)} are explained")
        seccomp = (sc.get("seccompProfile") or spec.get("securityContext", {})
                   .get("seccompProfile") or {}).get("type")
        if seccomp != "RuntimeDefault":
            self.problem(where, "container amdqpd is not under seccomp RuntimeDefault")
        volumes = {v.get("name"): v for v in spec.get("volumes", [])}
        socket_mounted = False
        for m in c.get("volumeMounts", []):
            hp = volumes.get(m.get("name"), {}).get("hostPath", {}).get("path", "")
            if not hp:
                continue
            at = os.path.normpath(m.get("mountPath", ""))
            if os.path.normpath(hp) != NODE_SOCKET_DIR:
                self.problem(where, f"container amdqpd mounts host {hp}: its only hostPath "
                             f"is the node's socket folder {NODE_SOCKET_DIR} (/dev/amdqp "
                             "comes from the device plugin)")
            elif at != os.path.normpath(runtime_dir):
                self.problem(where, f"container amdqpd mounts host {hp} at {at}, not at "
                             f"its runtime_dir {runtime_dir}: its socket would not be "
                             "the one the device plugin mounts into pods")
            elif m.get("readOnly"):
                self.problem(where, f"container amdqpd mounts host {hp} read-only: it "
                             "makes its socket there")
            else:
                socket_mounted = True
        if not socket_mounted:
            self.problem(where, f"container amdqpd's runtime_dir {runtime_dir} is not the "
                         f"node's {NODE_SOCKET_DIR} (a hostPath mounted there): pods "
                         "could not reach its socket")
        if "amdqp.io/device" not in c.get("resources", {}).get("limits", {}):
            self.problem(where, "container amdqpd does not ask for amdqp.io/device "
                         "(/dev/amdqp from the device plugin)")
        if spec.get("automountServiceAccountToken") is not False:
            self.problem(where, "the service account token is mounted into every "
                         "container: project it into the proxy sidecar only")
        for other in spec.get("containers", []):
            if other is c:
                continue
            cmd = other.get("command", []) + other.get("args", [])
            if "proxy" in cmd and not any(a.startswith("--accept-paths=") for a in cmd):
                self.problem(where, f"container {other.get('name')}: kubectl proxy "
                             "without --accept-paths passes every API path")

    def check_host_dirs(self):
        """No pod makes a node directory that every user may write to."""
        for path, doc, _, spec in self.pods():
            where = f"{path}: {self.name(doc)}"
            for v in spec.get("volumes", []):
                hp = os.path.normpath(v.get("hostPath", {}).get("path", "/"))
                if hp == "/dev/shm" or hp.startswith("/dev/shm/"):
                    self.problem(where, f"volume {v.get('name')} is the node's {hp}: no "
                                 "file of amdqp lives in /dev/shm (activity pages are "
                                 "memfds, found through /proc/PID/fd)")
            for c in spec.get("initContainers", []) + spec.get("containers", []):
                text = " ".join(str(a) for a in c.get("command", []) + c.get("args", []))
                m = WORLD_WRITABLE.search(text)
                if m:
                    self.problem(where, f"container {c.get('name')} makes something "
                                 f"world-writable ({m.group(0).strip()!r}): amdqp needs no "
                                 "directory that every user may write to")

    def namespaces(self):
        return {d["metadata"]["name"]: d for _, d in self.docs if d["kind"] == "Namespace"}

    def check_baseline(self, where, meta, spec, namespace):
        """Pod Security "baseline", and no capability added at all."""
        for field in ("hostPID", "hostIPC", "hostNetwork"):
            if spec.get(field):
                self.problem(where, f"{field}: a tenant pod shares the host's namespaces")
        for v in spec.get("volumes", []):
            if "hostPath" in v:
                self.problem(where, f"volume {v.get('name')} is a hostPath: a tenant pod "
                             "gets the library and amdqpd's socket folder from the device "
                             "plugin, and needs neither for its pages")
        pod_sc = spec.get("securityContext", {})
        for s in pod_sc.get("sysctls", []):
            if s.get("name") not in SAFE_SYSCTLS:
                self.problem(where, f"sysctl {s.get('name')} is not one baseline allows")
        if pod_sc.get("seccompProfile", {}).get("type") == "Unconfined":
            self.problem(where, "seccomp Unconfined")
        for c in spec.get("initContainers", []) + spec.get("containers", []):
            name = c.get("name")
            sc = c.get("securityContext", {})
            if sc.get("privileged"):
                self.problem(where, f"container {name} is privileged")
            added = sc.get("capabilities", {}).get("add", [])
            if added:
                self.problem(where, f"container {name} adds capabilities {added}: a tenant "
                             "needs none (levels are the admin's grants)")
            if sc.get("seccompProfile", {}).get("type") == "Unconfined":
                self.problem(where, f"container {name}: seccomp Unconfined")
            if sc.get("procMount") == "Unmasked":
                self.problem(where, f"container {name}: procMount Unmasked")
            for port in c.get("ports", []):
                if port.get("hostPort"):
                    self.problem(where, f"container {name} uses a hostPort")
        ns = self.namespaces().get(namespace)
        if not ns:
            self.problem(where, f"namespace {namespace!r} is not among the files: "
                         "cannot show that it enforces Pod Security baseline")
        else:
            level = ns["metadata"].get("labels", {}).get("pod-security.kubernetes.io/enforce")
            if level not in ("baseline", "restricted"):
                self.problem(where, f"namespace {namespace} enforces {level!r}, not "
                             "baseline or restricted")

    def check_tagged_pods(self, runtime_dir):
        for path, doc, meta, spec in self.pods():
            if doc["kind"] != "Pod":
                continue
            where = f"{path}: {self.name(doc)}"
            self.check_baseline(where, meta, spec, doc["metadata"].get("namespace", "default"))
            for c in spec.get("containers", []):
                env = {e.get("name"): e.get("value") for e in c.get("env", [])}
                if "AMDQP_PRIORITY" not in env:
                    continue
                run_dir = env.get("AMDQP_RUNTIME_DIR") or DEFAULT_RUNTIME_DIR
                if os.path.normpath(run_dir) != PLUGIN_SOCKET_DIR:
                    self.problem(where, f"AMDQP_RUNTIME_DIR={run_dir} is not "
                                 f"{PLUGIN_SOCKET_DIR}, where the device plugin mounts the "
                                 "node's socket folder (the daemon's runtime_dir)")
                libs = [p for p in (env.get("LD_PRELOAD") or "").split(":")
                        if p.endswith("/libamdqp-preload.so")]
                for lib in libs:
                    if os.path.dirname(lib) != PLUGIN_LIB_DIR:
                        self.problem(where, f"LD_PRELOAD {lib} is not in {PLUGIN_LIB_DIR}, "
                                     "where the device plugin mounts the tagging layer")

    def run(self, files):
        for f in files:
            self.load(f)
        self.check_schemas()
        self.check_references()
        self.check_host_dirs()
        runtime_dir = self.check_daemon_config()
        self.check_tagged_pods(runtime_dir)
        return self.problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--example", help="amdqpd.toml.example: the known config keys")
    ap.add_argument("files", nargs="+", help="manifest files (multi-document YAML)")
    args = ap.parse_args()
    problems = Checker(args.example).run(args.files)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
