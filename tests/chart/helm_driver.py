"""The Helm 4 SDK (PyPI helm-python-sdk, no helm binary) for tests/chart.rs.

Reads one JSON request on stdin, prints one JSON answer on stdout:
  {"op": "lint", "chart": DIR, "values": {...}}       -> {"messages": [...], "errors": [...]}
  {"op": "render", "chart": DIR, "values": {...}, "name": N, "namespace": NS} -> {"manifests": {path: text}}
  {"op": "render_many", "chart": DIR, "values_list": [{...}, ...]} -> {"results": [{"manifests"}|{"error"}]}
  {"op": "validate", "chart": DIR, "values": {...}}   -> {} or {"error": "..."}
  {"op": "install"|"upgrade", "chart": DIR, "name": N, "namespace": NS, "values": {...}, "kubeconfig": F}
  {"op": "rollback", "name": N, "namespace": NS, "version": V, "kubeconfig": F}
  {"op": "uninstall", "name": N, "namespace": NS, "kubeconfig": F}
  {"op": "history", "name": N, "namespace": NS, "kubeconfig": F}
A Helm error is {"error": "<class>: <message>"} (exit 0); a missing SDK exits 3.
With --serve: one request a line on stdin, one answer a line on stdout, until stdin ends (the
SDK loaded once for many operations).
"""
import json
import sys

try:
    import helm_python as helm
except ImportError:
    print(json.dumps({"missing": "helm-python-sdk (pip install helm-python-sdk==0.2.2)"}))
    sys.exit(3)


def config(req):
    return helm.Config(kubeconfig_path=req["kubeconfig"], namespace=req["namespace"])


def summary(release):
    """A release without its manifest, chart and config."""
    return {k: v for k, v in release.items() if k not in ("manifest", "chart", "config")}


def run(req):
    op = req["op"]
    values = req.get("values")
    if op == "lint":
        return helm.lint(req["chart"], values, strict=True, namespace=req.get("namespace"))
    if op == "render":
        chart = helm.Chart.load(req["chart"])
        chart.validate_schema(chart.merge_values(values))
        return {"manifests": chart.render(values, name=req.get("name", "release"),
                                          namespace=req.get("namespace", "default"),
                                          is_install=True)}
    if op == "render_many":
        chart = helm.Chart.load(req["chart"])
        out = []
        for values in req["values_list"]:
            try:
                chart.validate_schema(chart.merge_values(values))
                out.append({"manifests": chart.render(values, name=req.get("name", "release"),
                                                      namespace=req.get("namespace", "default"),
                                                      is_install=True)})
            except helm.HelmError as e:
                out.append({"error": f"{type(e).__name__}: {e}"})
        return {"results": out}
    if op == "validate":
        chart = helm.Chart.load(req["chart"])
        chart.validate_schema(chart.merge_values(values))
        return {}
    if op == "install":
        r = config(req).install(req["chart"], req["name"], values, namespace=req["namespace"],
                                create_namespace=True, timeout=120)
        return {"release": summary(r)}
    if op == "upgrade":
        r = config(req).upgrade(req["chart"], req["name"], values, namespace=req["namespace"],
                                timeout=120)
        return {"release": summary(r)}
    if op == "rollback":
        config(req).rollback(req["name"], version=req.get("version"), timeout=120)
        return {}
    if op == "uninstall":
        config(req).uninstall(req["name"], timeout=120)
        return {}
    if op == "history":
        return {"history": [{"version": r.get("version"), "status": r.get("info", {}).get("status")}
                            for r in config(req).history(req["name"])]}
    raise SystemExit(f"unknown op {op}")


def answer(req):
    try:
        out = run(req)
    except helm.HelmError as e:
        out = {"error": f"{type(e).__name__}: {e}"}
    return json.dumps(out, default=str)


def main():
    if "--serve" in sys.argv:
        for line in sys.stdin:
            if line.strip():
                print(answer(json.loads(line)), flush=True)
        return
    print(answer(json.load(sys.stdin)))


main()
