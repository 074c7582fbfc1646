#!/usr/bin/env python3
"""Checks deploy/ against deploy/conf (no cluster or schema download needed).

    deploy_check.py k8s K8S_DIR CONF_DIR          check the Kubernetes manifests
    deploy_check.py k8s K8S_DIR CONF_DIR --write  regenerate K8S_DIR/configmap.yaml
    deploy_check.py units UNIT_DIR CONF_DIR       check the systemd units' writable paths

Units: under ProtectSystem=strict a daemon can write only its StateDirectory=,
LogsDirectory=, RuntimeDirectory= (and ReadWritePaths=); every directory the
configuration names for that daemon must lie inside one of them.

The ConfigMap holds deploy/conf's site files with the master host replaced by the
Service names (tusk-namenode for HDFS, tusk-resourcemanager for YARN). Every workload
must: use one image; mount the ConfigMap at HADOOP_CONF_DIR; mount a volume at every
directory the configuration names for its daemon; expose the ports the configuration
names; probe GET /status on the configured HTTP port; and its Service must target
declared container ports.
"""

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml

SITE_FILES = ["core-site.xml", "hdfs-site.xml", "yarn-site.xml"]
MASTER = "master.example"
SERVICE_FOR = {
    "core-site.xml": "tusk-namenode",
    "hdfs-site.xml": "tusk-namenode",
    "yarn-site.xml": "tusk-resourcemanager",
}
# Per daemon: (configuration keys holding ports it serves, keys holding directories it
# writes, key of its HTTP address).
DAEMONS = {
    "namenode": (["fs.defaultFS", "dfs.namenode.http-address"],
                 ["dfs.namenode.name.dir", "hadoop.tmp.dir"], "dfs.namenode.http-address"),
    "datanode": (["dfs.datanode.address", "dfs.datanode.http.address",
                  "dfs.datanode.ipc.address"],
                 ["dfs.datanode.data.dir", "hadoop.tmp.dir", "dfs.domain.socket.path"],
                 "dfs.datanode.http.address"),
    "resourcemanager": (["yarn.resourcemanager.address",
                         "yarn.resourcemanager.webapp.address"],
                        ["yarn.resourcemanager.fs.state-store.uri", "hadoop.tmp.dir"],
                        "yarn.resourcemanager.webapp.address"),
    "nodemanager": (["yarn.nodemanager.address", "yarn.nodemanager.webapp.address"],
                    ["yarn.nodemanager.local-dirs", "yarn.nodemanager.log-dirs",
                     "hadoop.tmp.dir"], "yarn.nodemanager.webapp.address"),
}
SHUFFLE_PORT = 13562  # mapreduce.shuffle.port's default, the NodeManager's shuffle server


def k8s_site(conf_dir, name):
    return (conf_dir / name).read_text().replace(MASTER, SERVICE_FOR[name])


def configmap(conf_dir):
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "tusk-conf", "labels": {"app.kubernetes.io/name": "tusk"}},
        "data": {n: k8s_site(conf_dir, n) for n in SITE_FILES},
    }


def properties(text):
    out = {}
    for p in ET.fromstring(text).iter("property"):
        out[p.findtext("name").strip()] = p.findtext("value").strip()
    return out


def port_of(value):
    return int(value.rstrip("/").rsplit(":", 1)[1])


def local_dir(value):
    return value.removeprefix("file://")


def literal_blocks(dumper, text):
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


def units(unit_dir, conf_dir):
    conf = {}
    for n in SITE_FILES:
        conf.update(properties((conf_dir / n).read_text()))
    errors = []
    for daemon, (_, dir_keys, _) in DAEMONS.items():
        unit = unit_dir / f"tusk-{daemon}.service"
        writable = []
        roots = {"StateDirectory": "/var/lib/", "LogsDirectory": "/var/log/",
                 "RuntimeDirectory": "/run/", "ReadWritePaths": "/"}
        for line in unit.read_text().splitlines():
            key, _, value = line.partition("=")
            if key in roots:
                writable += [roots[key] + v.lstrip("/") for v in value.split()]
        if "ProtectSystem=strict" not in unit.read_text():
            errors.append(f"{unit.name}: not ProtectSystem=strict")
        for key in dir_keys:
            for d in conf[key].split(","):
                d = local_dir(d.strip())
                if key == "dfs.domain.socket.path":
                    d = str(Path(d).parent)
                if not any(d == w or d.startswith(w.rstrip("/") + "/") for w in writable):
                    errors.append(f"{unit.name}: {key} = {d} is not writable under the "
                                  f"unit's sandbox (writable: {' '.join(writable)})")
    if errors:
        for e in errors:
            print("systemd: FAIL:", e, file=sys.stderr)
        sys.exit(1)
    print("systemd: every directory the conf names is writable in its unit's sandbox")


def main():
    yaml.SafeDumper.add_representer(str, literal_blocks)
    mode = sys.argv.pop(1)
    if mode == "units":
        return units(Path(sys.argv[1]), Path(sys.argv[2]))
    k8s, conf_dir = Path(sys.argv[1]), Path(sys.argv[2])
    if sys.argv[3:] == ["--write"]:
        header = ("# Generated from deploy/conf by scripts/deploy_check.py k8s --write "
                  "(master host -> Service names).\n")
        (k8s / "configmap.yaml").write_text(
            header + yaml.safe_dump(configmap(conf_dir), sort_keys=False, width=100))
        return
    errors = []

    def check(cond, msg):
        if not cond:
            errors.append(msg)

    docs = []
    for f in sorted(k8s.glob("*.yaml")):
        for d in yaml.safe_load_all(f.read_text()):
            if d:
                check({"apiVersion", "kind", "metadata"} <= d.keys(), f"{f}: not a k8s object")
                docs.append((f.name, d))
    cms = [d for _, d in docs if d["kind"] == "ConfigMap"]
    check(len(cms) == 1 and cms[0] == configmap(conf_dir),
          "configmap.yaml differs from deploy/conf (run deploy_check.py k8s --write)")
    conf = {}
    for n in SITE_FILES:
        conf.update(properties(k8s_site(conf_dir, n)))
    conf["yarn.resourcemanager.address"] = conf["yarn.resourcemanager.address"].replace(
        "${yarn.resourcemanager.hostname}", conf["yarn.resourcemanager.hostname"])

    images = set()
    workloads = {d["metadata"]["name"]: d for _, d in docs
                 if d["kind"] in ("StatefulSet", "Deployment")}
    services = {d["metadata"]["name"]: d for _, d in docs if d["kind"] == "Service"}
    for daemon, (port_keys, dir_keys, http_key) in DAEMONS.items():
        name = f"tusk-{daemon}"
        w = workloads.get(name)
        check(w is not None, f"no workload {name}")
        if w is None:
            continue
        want_kind = "Deployment" if daemon == "nodemanager" else "StatefulSet"
        check(w["kind"] == want_kind, f"{name}: {w['kind']}, expected {want_kind}")
        spec = w["spec"]
        labels = spec["template"]["metadata"]["labels"]
        check(all(labels.get(k) == v for k, v in spec["selector"]["matchLabels"].items()),
              f"{name}: selector does not match the pod labels")
        (c,) = spec["template"]["spec"]["containers"]
        images.add(c["image"])
        check(c["args"][0] == daemon, f"{name}: runs {c['args'][0]}")
        env = {e["name"]: e.get("value") for e in c.get("env", [])}
        mounts = {m["mountPath"]: m["name"] for m in c.get("volumeMounts", [])}
        volumes = {v["name"] for v in spec["template"]["spec"].get("volumes", [])}
        volumes |= {t["metadata"]["name"] for t in spec.get("volumeClaimTemplates", [])}
        check(mounts.get(env.get("HADOOP_CONF_DIR")) == "conf",
              f"{name}: the ConfigMap is not mounted at HADOOP_CONF_DIR")
        check(set(mounts.values()) <= volumes, f"{name}: mounts an undeclared volume")
        check(any(v.get("configMap", {}).get("name") == "tusk-conf"
                  for v in spec["template"]["spec"]["volumes"] if v["name"] == "conf"),
              f"{name}: volume conf is not the ConfigMap tusk-conf")
        for key in dir_keys:
            for d in conf[key].split(","):
                d = local_dir(d.strip())
                if key == "dfs.domain.socket.path":
                    d = str(Path(d).parent)
                check(d in mounts, f"{name}: {key} = {d} has no volume mounted")
        ports = {p["containerPort"]: p["name"] for p in c["ports"]}
        want = {port_of(conf[k]) for k in port_keys}
        if daemon == "nodemanager":
            want.add(SHUFFLE_PORT)
        check(want <= ports.keys(), f"{name}: ports {sorted(want - ports.keys())} "
              f"from the configuration not declared")
        http_port = port_of(conf[http_key])
        for probe in ("readinessProbe", "livenessProbe"):
            g = c.get(probe, {}).get("httpGet", {})
            port = g.get("port")
            port = next((n for n, p in ports.items() if p == port), port)
            check(g.get("path") == "/status" and port == http_port,
                  f"{name}: {probe} is not GET /status on {http_key} ({http_port})")
        if daemon != "nodemanager":
            svc = services.get(name)
            check(svc is not None, f"{name}: no Service")
            if svc:
                check(svc["spec"]["selector"] == spec["selector"]["matchLabels"],
                      f"{name}: the Service selects other pods")
                for p in svc["spec"]["ports"]:
                    check(p["targetPort"] in ports.values(),
                          f"{name}: Service port {p['name']} targets an undeclared port")
                check(spec.get("serviceName") == name, f"{name}: serviceName")
    # The addresses clients use are the Services'.
    check(conf["fs.defaultFS"] == "hdfs://tusk-namenode:%d" % port_of(conf["fs.defaultFS"]),
          "fs.defaultFS does not name the tusk-namenode Service")
    check(services.get("tusk-datanode", {}).get("spec", {}).get("clusterIP") == "None",
          "the DataNode Service is not headless")
    check(len(images) == 1, f"workloads use several images: {images}")
    if errors:
        for e in errors:
            print("k8s: FAIL:", e, file=sys.stderr)
        sys.exit(1)
    print(f"k8s: {len(docs)} objects parsed; ports, /status probes, mounts, image and "
          f"ConfigMap agree with deploy/conf")


if __name__ == "__main__":
    main()
