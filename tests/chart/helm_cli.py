"""`helm` for the generated Makefile's helm targets in tests, on the Helm 4 SDK (helm-python-sdk):
`lint --strict DIR`, `upgrade --install NAME DIR --namespace NS [--create-namespace]
[--set-string k=v]... [--set k=v]...`, `install NAME DIR --namespace NS [--create-namespace]
[--set ...]`, `uninstall NAME --namespace NS`. Cluster from KUBECONFIG."""
import os
import sys

import helm_python as helm


def main(argv):
    op = argv[0]
    if op == "lint":
        report = helm.lint(argv[-1], strict="--strict" in argv)
        for m in report["messages"]:
            print(f"[{m['severity']}] {m['path']}: {m['error']}")
        return 1 if report["errors"] or any(m["severity"] > 1 for m in report["messages"]) else 0
    namespace = argv[argv.index("--namespace") + 1]
    config = helm.Config(kubeconfig_path=os.environ["KUBECONFIG"], namespace=namespace)
    if op == "uninstall":
        config.uninstall(argv[1], timeout=120)
        return 0
    if op == "install":
        name, chart = argv[1], argv[2]
    else:
        assert op == "upgrade" and argv[1] == "--install", argv
        name, chart = argv[2], argv[3]
    values = {}
    for i, a in enumerate(argv):
        if a == "--set-string":
            values = merge(values, helm.parse_set_string_values(argv[i + 1]))
        elif a == "--set":
            values = merge(values, helm.parse_set_string(argv[i + 1]))
    names = [r["name"] for r in config.list()]
    if op == "upgrade" and name in names:
        config.upgrade(chart, name, values, namespace=namespace, timeout=120)
    else:
        config.install(chart, name, values, namespace=namespace, create_namespace=True, timeout=120)
    print(f"release {name} installed in {namespace} with {values}")
    return 0


def merge(a, b):
    for k, v in b.items():
        a[k] = merge(a.get(k, {}), v) if isinstance(v, dict) else v
    return a


sys.exit(main(sys.argv[1:]))
