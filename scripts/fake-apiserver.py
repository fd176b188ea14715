#!/usr/bin/env python3
"""A stateful, in-memory fake Kubernetes API server (Python 3.11 standard library only).

    python3 scripts/fake-apiserver.py <port> [--host 127.0.0.1] [--log] [--stats FILE]
                                              [--require-crds] [--watch-cache-size N]
                                              [--bookmark-interval SECONDS]

Serves plain HTTP (no TLS, no authentication: any token is accepted) on 127.0.0.1:<port>.
It stands in for kube-apiserver + etcd when a generated operator's manager and its
end-to-end tests must run against "a cluster" on a machine that has none. Point a
kubeconfig at `http://127.0.0.1:<port>` (see scripts/bench-manager.sh).

What it emulates
- Paths: `/api/v1/...` and `/apis/<group>/<version>/...`, namespaced
  (`.../namespaces/<ns>/<plural>[/<name>[/status]]`), cluster-scoped
  (`.../<plural>[/<name>[/status]]`) and all-namespaces lists/watches of namespaced
  resources. Any plural is accepted; the store is generic, keyed by group/plural/namespace/
  name (the version is not part of the key: objects are relabelled to the requested one).
- Objects get uid, resourceVersion (one global counter), creationTimestamp, generation (1 on
  create, +1 when anything outside metadata and status changes, +1 when marked for
  deletion), apiVersion and kind. Empty labels/annotations/finalizers/ownerReferences are
  dropped as the real server's omitempty does.
- GET, LIST (labelSelector: `k=v k==v k!=v k !k k in (a,b) k notin (a,b)`; fieldSelector
  `metadata.name`, `metadata.namespace` and any other dotted path with `= == !=`; `limit`/
  `continue` paging over a consistent snapshot; expired tokens answer 410), WATCH
  (`watch=true|1`, `resourceVersion` replayed from a per-resource event log or 410 Expired as
  an ERROR event when it is too old, `resourceVersion` unset/`0` starts with ADDED for every
  object, `sendInitialEvents` with the initial-events-end BOOKMARK, `allowWatchBookmarks`,
  `timeoutSeconds`, selectors with ADDED/DELETED when an object starts/stops matching),
  POST (generateName, 409 AlreadyExists, 404 for a missing namespace, 403 Forbidden in a
  terminating namespace), PUT (409 Conflict on a stale resourceVersion), PATCH (merge,
  JSON patch with test/add/remove/replace/move/copy, strategic merge treated as merge,
  server-side apply), DELETE (finalizers -> deletionTimestamp; Background, Foreground and
  Orphan propagation; preconditions), DELETE on a collection, `dryRun`.
- A write that changes nothing is a no-op: no new resourceVersion, no watch event.
- Status subresource: `/status` writes change only `.status`; main-resource writes ignore
  `.status` for kinds that have the subresource (CRDs that declare it, built-ins except
  configmaps/secrets/events/leases/RBAC/...); creates drop it for them.
- Server-side apply: fields are tracked per field manager (internally; `managedFields` is not
  exposed). Apply deep-merges into the stored object (lists are atomic, except
  `metadata.finalizers`, a set), removes fields the same manager applied before and no
  longer applies (unless another manager owns them), and answers 409 Conflict when it would
  change a field another manager owns, unless `force=true`. Updates (PUT/PATCH) take over
  the fields they change. `fieldManager` is required for apply.
- Finalizers: no new finalizer may be added to an object being deleted (422, like the real
  server); an update that empties the finalizers of a deleted object removes it.
- Garbage collection (background thread): when an owner is removed its dependents (by
  `ownerReferences[].uid`) are deleted unless another owner still exists (then the dangling
  reference is removed); objects created with only dangling owners are collected too.
- Namespaces: `default`, `kube-system`, `kube-public` exist. Deleting one sets
  `status.phase: Terminating` and a deletionTimestamp, then a background thread deletes
  every object in it (finalizers hold them) and removes the namespace once it is empty.
- CRDs: get `Established`/`NamesAccepted` conditions, acceptedNames and storedVersions;
  their kind, scope and status subresource are used for their resources. Deleting a CRD
  deletes its objects first. With `--require-crds`, custom resources without a CRD are 404.
- A minimal Deployment controller: after every write of an apps/v1 Deployment it writes its
  status (observedGeneration, replicas = ready = available = updated = spec.replicas,
  Available/Progressing conditions) as a separate status update. Deployments also get the
  API server's common defaults (strategy, revisionHistoryLimit, progressDeadlineSeconds,
  pod template restartPolicy/dnsPolicy/..., container terminationMessage*/imagePullPolicy,
  port protocol, probe thresholds).
- Metadata-only requests (`Accept: application/json;as=PartialObjectMetadata[List];
  g=meta.k8s.io;v=v1`, kube's `Api<PartialObjectMeta<K>>` / metadata watchers) get
  `meta.k8s.io/v1` PartialObjectMetadata objects, lists and watch events.
- `/version`, `/healthz`, `/livez`, `/readyz`, minimal discovery (`/api`, `/apis`,
  `/api/v1`, `/apis/<group>/<version>`).
- `GET /fake/stats`: requests by verb and resource (a watch counts when it starts), writes
  (POST/PUT/PATCH/DELETE requests) and mutations (writes that changed something) per
  resource, error codes, open watches, object count, events held per resource for watches.
  `DELETE /fake/stats` (or `POST /fake/stats/reset`) resets the counters. `--stats FILE`
  writes the same JSON to FILE every 2 s and on SIGTERM/SIGINT. `--log` logs every request
  (method, path, status, milliseconds) to stderr.

What it does not do (knowingly deviates)
- No authentication, authorization, admission webhooks, OpenAPI schema validation, pruning
  or defaulting of custom resources, CEL rules, immutable-field checks, version conversion.
- No pods, ReplicaSets, scheduling or kubelet: the Deployment "controller" just reports
  every replica available at once.
- No `managedFields` in responses; SSA is an approximation (no per-item merging of list maps
  such as containers or conditions: the applied list replaces the stored one).
- Strategic merge patch is a JSON merge patch (no `$patch` directives, no list merge keys).
- core/v1 and events.k8s.io/v1 Events are separate stores (the real server shares them).
- Graceful deletion periods are ignored (deletion is immediate unless finalizers hold it).
- No protobuf, no table output, no `resourceVersionMatch=Exact` history for lists: a list
  always reflects the current state.
- YAML apply bodies are not supported (JSON only, as kube-rs and client-go send).
"""

import argparse
import base64
import bisect
import itertools
import json
import os
import queue
import random
import re
import select
import signal
import socket
import sys
import threading
import time
import uuid
import zlib
from collections import OrderedDict
from functools import lru_cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

# ---------------------------------------------------------------------------------------------
# Static knowledge about built-in resources.

BUILTIN_KINDS = {
    ("", "namespaces"): ("Namespace", False),
    ("", "pods"): ("Pod", True),
    ("", "services"): ("Service", True),
    ("", "configmaps"): ("ConfigMap", True),
    ("", "secrets"): ("Secret", True),
    ("", "events"): ("Event", True),
    ("", "serviceaccounts"): ("ServiceAccount", True),
    ("", "endpoints"): ("Endpoints", True),
    ("", "nodes"): ("Node", False),
    ("", "persistentvolumes"): ("PersistentVolume", False),
    ("", "persistentvolumeclaims"): ("PersistentVolumeClaim", True),
    ("", "replicationcontrollers"): ("ReplicationController", True),
    ("", "resourcequotas"): ("ResourceQuota", True),
    ("", "limitranges"): ("LimitRange", True),
    ("apps", "deployments"): ("Deployment", True),
    ("apps", "replicasets"): ("ReplicaSet", True),
    ("apps", "statefulsets"): ("StatefulSet", True),
    ("apps", "daemonsets"): ("DaemonSet", True),
    ("apps", "controllerrevisions"): ("ControllerRevision", True),
    ("batch", "jobs"): ("Job", True),
    ("batch", "cronjobs"): ("CronJob", True),
    ("coordination.k8s.io", "leases"): ("Lease", True),
    ("events.k8s.io", "events"): ("Event", True),
    ("apiextensions.k8s.io", "customresourcedefinitions"): ("CustomResourceDefinition", False),
    ("rbac.authorization.k8s.io", "roles"): ("Role", True),
    ("rbac.authorization.k8s.io", "rolebindings"): ("RoleBinding", True),
    ("rbac.authorization.k8s.io", "clusterroles"): ("ClusterRole", False),
    ("rbac.authorization.k8s.io", "clusterrolebindings"): ("ClusterRoleBinding", False),
    ("networking.k8s.io", "ingresses"): ("Ingress", True),
    ("networking.k8s.io", "networkpolicies"): ("NetworkPolicy", True),
    ("policy", "poddisruptionbudgets"): ("PodDisruptionBudget", True),
    ("autoscaling", "horizontalpodautoscalers"): ("HorizontalPodAutoscaler", True),
    ("storage.k8s.io", "storageclasses"): ("StorageClass", False),
}
BUILTIN_VERSIONS = {
    "": "v1", "apps": "v1", "batch": "v1", "coordination.k8s.io": "v1", "events.k8s.io": "v1",
    "apiextensions.k8s.io": "v1", "rbac.authorization.k8s.io": "v1", "networking.k8s.io": "v1",
    "policy": "v1", "autoscaling": "v2", "storage.k8s.io": "v1",
}
# Built-in resources with a status subresource (everything else built in has none).
CORE_WITH_STATUS = {"pods", "services", "namespaces", "nodes", "persistentvolumes",
                    "persistentvolumeclaims", "replicationcontrollers", "resourcequotas"}
GROUPS_WITHOUT_STATUS = {"events.k8s.io", "coordination.k8s.io", "rbac.authorization.k8s.io",
                         "storage.k8s.io"}
NAMESPACES = ("", "namespaces")
CRDS = ("apiextensions.k8s.io", "customresourcedefinitions")
DEPLOYMENTS = ("apps", "deployments")
CRD_CLEANUP = "customresourcecleanup.apiextensions.k8s.io"
SERVER_MANAGER = "kube-apiserver"
CONTROLLER_MANAGER = "kube-controller-manager"


def now_ts():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def dumps(obj):
    return json.dumps(obj, separators=(",", ":")).encode()


def guess_kind(plural):
    if plural.endswith("ies"):
        s = plural[:-3] + "y"
    elif plural.endswith(("sses", "xes", "ches", "shes")):
        s = plural[:-2]
    elif plural.endswith("s"):
        s = plural[:-1]
    else:
        s = plural
    return s[:1].upper() + s[1:]


def resource_name(gp, sub=None):
    group, plural = gp
    r = plural + ("." + group if group else "")
    return r + ("/" + sub if sub else "")


# ---------------------------------------------------------------------------------------------
# Errors: every one is answered as a meta/v1 Status.

class ApiError(Exception):
    def __init__(self, code, reason, message, details=None):
        super().__init__(message)
        self.code, self.reason, self.message, self.details = code, reason, message, details

    def status(self):
        s = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
             "message": self.message, "reason": self.reason, "code": self.code}
        if self.details:
            s["details"] = self.details
        return s


def details(gp, name):
    d = {"name": name, "group": gp[0], "kind": gp[1]}
    return {k: v for k, v in d.items() if v}


def not_found(gp, name):
    return ApiError(404, "NotFound", '%s "%s" not found' % (resource_name(gp), name),
                    details(gp, name))


def conflict(gp, name, why="the object has been modified; please apply your changes to the "
                           "latest version and try again"):
    return ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": %s'
                    % (resource_name(gp), name, why), details(gp, name))


def invalid(gp, kind, name, message):
    return ApiError(422, "Invalid", '%s "%s" is invalid: %s' % (kind, name, message),
                    details(gp, name))


def bad_request(message):
    return ApiError(400, "BadRequest", message)


# ---------------------------------------------------------------------------------------------
# Selectors.

_LABEL_REQ = re.compile(r"^\s*(!?)\s*([A-Za-z0-9./_-]+)\s*(?:(==|=|!=)\s*([A-Za-z0-9._-]*)|"
                        r"\s+(in|notin)\s*\(([^)]*)\))?\s*$")


def _split_selector(s):
    parts, depth, cur = [], 0, []
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p for p in parts if p.strip()]


@lru_cache(maxsize=1024)
def parse_label_selector(s):
    reqs = []
    for part in _split_selector(s or ""):
        m = _LABEL_REQ.match(part)
        if not m:
            raise bad_request('unable to parse requirement: invalid label selector "%s"' % s)
        neg, key, op, val, setop, vals = m.groups()
        if neg:
            if op or setop:
                raise bad_request("invalid label selector %r" % s)
            reqs.append(("!", key, None))
        elif op:
            reqs.append(("!=" if op == "!=" else "=", key, val))
        elif setop:
            reqs.append((setop, key, frozenset(v.strip() for v in vals.split(","))))
        else:
            reqs.append(("exists", key, None))
    return tuple(reqs)


def labels_match(reqs, labels):
    if not reqs:
        return True
    for op, key, val in reqs:
        has = key in labels
        v = labels.get(key)
        if op == "=":
            if v != val:
                return False
        elif op == "!=":
            if has and v == val:
                return False
        elif op == "exists":
            if not has:
                return False
        elif op == "!":
            if has:
                return False
        elif op == "in":
            if v not in val:
                return False
        elif op == "notin":
            if has and v in val:
                return False
    return True


@lru_cache(maxsize=1024)
def parse_field_selector(s):
    reqs = []
    for part in _split_selector(s or ""):
        for op in ("!=", "==", "="):
            if op in part:
                k, v = part.split(op, 1)
                reqs.append((k.strip(), op != "!=", v.strip()))
                break
        else:
            raise bad_request('invalid field selector "%s"' % s)
    return tuple(reqs)


def field_value(obj, path):
    cur = obj
    for p in path.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(p)
        if cur is None:
            return ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return cur if isinstance(cur, str) else json.dumps(cur)


def rec_match(rec, lsel, fsel):
    if lsel and not labels_match(lsel, rec.labels):
        return False
    for path, eq, val in fsel:
        if path == "metadata.name":
            v = rec.name
        elif path == "metadata.namespace":
            v = rec.ns
        else:
            v = field_value(rec.obj, path)
        if (v == val) != eq:
            return False
    return True


# ---------------------------------------------------------------------------------------------
# Patches.

MISSING = object()


def merge_patch(target, patch):
    """RFC 7386."""
    if not isinstance(patch, dict):
        return patch
    if not isinstance(target, dict):
        target = {}
    else:
        target = dict(target)
    for k, v in patch.items():
        if v is None:
            target.pop(k, None)
        else:
            target[k] = merge_patch(target.get(k), v)
    return target


def _strip_directives(patch):
    if isinstance(patch, dict):
        return {k: _strip_directives(v) for k, v in patch.items() if not k.startswith("$")}
    return patch


def strategic_merge_patch(target, patch):
    """Approximated by a JSON merge patch without the `$` directives."""
    return merge_patch(target, _strip_directives(patch))


class PatchFailed(Exception):
    pass


def _pointer(path):
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchFailed("invalid JSON pointer %r" % path)
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _resolve(doc, tokens):
    cur = doc
    for t in tokens:
        if isinstance(cur, dict):
            if t not in cur:
                return MISSING
            cur = cur[t]
        elif isinstance(cur, list):
            if not t.isdigit() or int(t) >= len(cur):
                return MISSING
            cur = cur[int(t)]
        else:
            return MISSING
    return cur


def _parent(doc, tokens, path):
    if not tokens:
        raise PatchFailed("cannot operate on the document root: %s" % path)
    parent = _resolve(doc, tokens[:-1])
    if parent is MISSING or not isinstance(parent, (dict, list)):
        raise PatchFailed("doc is missing path: %s" % path)
    return parent, tokens[-1]


def _add(doc, tokens, value, path):
    if not tokens:
        return value
    parent, key = _parent(doc, tokens, path)
    if isinstance(parent, dict):
        parent[key] = value
    else:
        if key == "-":
            parent.append(value)
        elif key.isdigit() and int(key) <= len(parent):
            parent.insert(int(key), value)
        else:
            raise PatchFailed("invalid index %r for %s" % (key, path))
    return doc


def _remove(doc, tokens, path):
    parent, key = _parent(doc, tokens, path)
    if isinstance(parent, dict):
        if key not in parent:
            raise PatchFailed("unable to remove nonexistent key: %s: missing value" % key)
        return parent.pop(key)
    if not key.isdigit() or int(key) >= len(parent):
        raise PatchFailed("unable to remove nonexistent index %s" % path)
    return parent.pop(int(key))


def json_patch(doc, ops):
    """RFC 6902 on a private copy `doc`."""
    if not isinstance(ops, list):
        raise PatchFailed("a JSON patch must be an array of operations")
    for op in ops:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise PatchFailed("invalid operation %r" % (op,))
        kind, path = op["op"], op["path"]
        tokens = _pointer(path)
        if kind == "test":
            cur = _resolve(doc, tokens)
            want = op.get("value")
            if cur is MISSING:
                cur = None  # like evanphx/json-patch: a missing value tests equal to null
            if cur != want:
                raise PatchFailed("testing value %s failed: test failed" % path)
        elif kind == "add":
            doc = _add(doc, tokens, json.loads(json.dumps(op.get("value"))), path)
        elif kind == "remove":
            _remove(doc, tokens, path)
        elif kind == "replace":
            if _resolve(doc, tokens) is MISSING:
                raise PatchFailed("replace operation does not apply: doc is missing key: %s"
                                  % path)
            if not tokens:
                doc = op.get("value")
            else:
                parent, key = _parent(doc, tokens, path)
                if isinstance(parent, dict):
                    parent[key] = op.get("value")
                else:
                    parent[int(key)] = op.get("value")
        elif kind in ("move", "copy"):
            src = _pointer(op.get("from", ""))
            value = _resolve(doc, src)
            if value is MISSING:
                raise PatchFailed("%s operation does not apply: doc is missing from path: %s"
                                  % (kind, op.get("from")))
            if kind == "move":
                _remove(doc, src, op.get("from"))
            doc = _add(doc, tokens, json.loads(json.dumps(value)), path)
        else:
            raise PatchFailed("unexpected kind of operation %r" % kind)
    return doc


# ---------------------------------------------------------------------------------------------
# Field ownership (server-side apply approximation).

def flatten(obj, scope_status, with_status):
    """Leaf paths -> values of `obj` in a scope: the status (scope_status) or the rest.
    Lists are atomic leaves, except metadata.finalizers which is a set of item paths."""
    out = {}

    def rec(v, path):
        if isinstance(v, dict) and v:
            for k, x in v.items():
                rec(x, path + (k,))
        else:
            out[path] = v

    for top, v in obj.items():
        if top in ("apiVersion", "kind"):
            continue
        if top == "status":
            if scope_status or not with_status:
                rec(v, ("status",))
            continue
        if scope_status:
            continue
        if top == "metadata":
            md = v or {}
            for k in ("labels", "annotations"):
                if isinstance(md.get(k), dict):
                    for lk, lv in md[k].items():
                        out[("metadata", k, lk)] = lv
            for f in md.get("finalizers") or []:
                out[("metadata", "finalizers", f)] = True
            if md.get("ownerReferences"):
                out[("metadata", "ownerReferences")] = md["ownerReferences"]
            continue
        rec(v, (top,))
    return out


def _related(p, q):
    n = min(len(p), len(q))
    return p[:n] == q[:n]


def take_ownership(fields, owner, paths):
    """`owner` becomes the sole owner of `paths` (and of what they overlap)."""
    if not paths:
        return
    for o, owned in fields.items():
        if o == owner or not owned:
            continue
        drop = [q for q in owned if q in paths or any(_related(p, q) for p in paths
                                                       if len(p) != len(q))]
        for q in drop:
            owned.discard(q)
    fields.setdefault(owner, set()).update(paths)


def remove_path(obj, path):
    if path[:2] == ("metadata", "finalizers"):
        fins = obj.get("metadata", {}).get("finalizers") or []
        if path[2] in fins:
            fins.remove(path[2])
        return
    parents = []
    cur = obj
    for k in path[:-1]:
        if not isinstance(cur, dict) or not isinstance(cur.get(k), dict):
            return
        parents.append((cur, k))
        cur = cur[k]
    if isinstance(cur, dict):
        cur.pop(path[-1], None)
    # prune the maps this emptied (keeping top-level fields)
    for parent, k in reversed(parents[1:]):
        if parent[k] == {}:
            del parent[k]
        else:
            break


def apply_merge(target, applied):
    """Deep-merges an applied configuration: maps merge, lists replace, nulls are ignored,
    metadata.finalizers is a set."""
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in applied.items():
        if v is None:
            continue
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = apply_merge(out[k], v)
        else:
            out[k] = v
    return out


# ---------------------------------------------------------------------------------------------
# Defaulting and the fake controllers' status.

def default_pod_template(tpl):
    spec = tpl.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        if not isinstance(c, dict):
            continue
        c.setdefault("terminationMessagePath", "/dev/termination-log")
        c.setdefault("terminationMessagePolicy", "File")
        if "imagePullPolicy" not in c:
            image = c.get("image") or ""
            tag = image.rsplit("/", 1)[-1]
            latest = "@" not in image and (":" not in tag or tag.endswith(":latest"))
            c["imagePullPolicy"] = "Always" if latest else "IfNotPresent"
        if "resources" not in c:
            c["resources"] = {}
        for p in c.get("ports") or []:
            if isinstance(p, dict):
                p.setdefault("protocol", "TCP")
        for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
            pr = c.get(probe)
            if isinstance(pr, dict):
                pr.setdefault("timeoutSeconds", 1)
                pr.setdefault("periodSeconds", 10)
                pr.setdefault("successThreshold", 1)
                pr.setdefault("failureThreshold", 3)


def default_deployment(obj):
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    strategy = spec.setdefault("strategy", {"type": "RollingUpdate"})
    if isinstance(strategy, dict):
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            ru = strategy.setdefault("rollingUpdate", {})
            ru.setdefault("maxUnavailable", "25%")
            ru.setdefault("maxSurge", "25%")
    if isinstance(spec.get("template"), dict):
        default_pod_template(spec["template"])


def _condition(current, type_, status, reason, message, with_update=False):
    old = next((c for c in current if c.get("type") == type_), None)
    ts = now_ts()
    keep = old is not None and old.get("status") == status
    c = {"type": type_, "status": status}
    if with_update:
        c["lastUpdateTime"] = old.get("lastUpdateTime", ts) if keep and old.get(
            "reason") == reason else ts
    c["lastTransitionTime"] = old.get("lastTransitionTime", ts) if keep else ts
    c["reason"] = reason
    c["message"] = message
    return c


def deployment_status(obj):
    spec = obj.get("spec") or {}
    n = spec.get("replicas", 1) or 0
    current = (obj.get("status") or {}).get("conditions") or []
    name = obj["metadata"]["name"]
    rs = "%s-%08x" % (name, zlib.crc32(json.dumps(spec.get("template"), sort_keys=True)
                                       .encode()))
    status = {"observedGeneration": obj["metadata"].get("generation", 1)}
    for k in ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas"):
        if n:
            status[k] = n  # zero counts are omitted, like the real server's omitempty
    status["conditions"] = [
        _condition(current, "Available", "True", "MinimumReplicasAvailable",
                   "Deployment has minimum availability.", True),
        _condition(current, "Progressing", "True", "NewReplicaSetAvailable",
                   'ReplicaSet "%s" has successfully progressed.' % rs, True),
    ]
    return status


def crd_status(obj):
    spec = obj.get("spec") or {}
    names = dict(spec.get("names") or {})
    if names.get("kind"):
        names.setdefault("singular", names["kind"].lower())
        names.setdefault("listKind", names["kind"] + "List")
    current = (obj.get("status") or {}).get("conditions") or []
    stored = [v["name"] for v in spec.get("versions") or [] if v.get("storage")]
    prev = (obj.get("status") or {}).get("storedVersions") or []
    return {
        "conditions": [
            _condition(current, "NamesAccepted", "True", "NoConflicts", "no conflicts found"),
            _condition(current, "Established", "True", "InitialNamesAccepted",
                       "the initial names have been accepted"),
        ],
        "acceptedNames": names,
        "storedVersions": sorted(set(prev) | set(stored)),
    }


# ---------------------------------------------------------------------------------------------
# The store.

class Rec:
    """One committed version of an object: never mutated once committed. Once a newer
    version replaces it, only its JSON encoding is kept (`slim`), to bound the memory of the
    watch logs; `obj` then decodes it on demand."""
    __slots__ = ("_obj", "enc", "ns", "name", "labels", "api_version", "_menc")

    def __init__(self, obj):
        self._obj = obj
        self.enc = dumps(obj)
        md = obj.get("metadata") or {}
        self.ns = md.get("namespace", "")
        self.name = md.get("name", "")
        self.labels = md.get("labels") or {}
        self.api_version = obj.get("apiVersion")
        self._menc = None

    def meta_enc(self):
        """The object as a meta.k8s.io/v1 PartialObjectMetadata (metadata-only clients)."""
        if self._menc is None:
            self._menc = dumps({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                                "metadata": self.obj.get("metadata") or {}})
        return self._menc

    @property
    def obj(self):
        o = self._obj
        return o if o is not None else json.loads(self.enc)

    def slim(self):
        self._obj = None

    def copy(self):
        return json.loads(self.enc)


class Log:
    """The watch event log of one resource: (rv, type, rec, prev_rec) tuples."""
    __slots__ = ("entries", "start", "floor", "cond")

    def __init__(self, lock):
        self.entries = []
        self.start = 0      # absolute index of entries[0]
        self.floor = 0      # every event with rv > floor is in the log
        self.cond = threading.Condition(lock)

    @property
    def end(self):
        return self.start + len(self.entries)


class Ctx:
    """Who writes and how."""
    __slots__ = ("manager", "force", "dry_run", "api_version")

    def __init__(self, manager, force=False, dry_run=False, api_version=None):
        self.manager, self.force, self.dry_run = manager, force, dry_run
        self.api_version = api_version


INTERNAL = Ctx(SERVER_MANAGER)


class Store:
    def __init__(self, watch_cache_size=20000, require_crds=False):
        self.lock = threading.Lock()
        self.rv = 0
        self.tables = {}        # (group, plural) -> {(ns, name): Rec}
        self.logs = {}          # (group, plural) -> Log
        self.uids = {}          # uid -> (gp, key)
        self.owners = {}        # owner uid -> set((gp, key))
        self.fields = {}        # (gp, key) -> {(manager, op): set(paths)}
        self.crd_info = {}      # (group, plural) -> (kind, namespaced, has_status, version)
        self.snapshots = OrderedDict()  # continue token id -> (expiry, rv, [Rec])
        self.snapshot_ids = itertools.count(1)
        self.terminating = set()        # namespaces being deleted
        self.foreground = set()         # (gp, key) waiting for their dependents
        self.orphaning = set()          # (gp, key) whose dependents are to be orphaned
        self.crd_cleanup = set()        # CRD names being deleted
        self.gc_queue = queue.Queue()
        self.watch_cache_size = watch_cache_size
        self.require_crds = require_crds
        self.wakeup = threading.Event()
        with self.lock:
            for ns in ("default", "kube-system", "kube-public", "kube-node-lease"):
                self._create(NAMESPACES, "", {"apiVersion": "v1", "kind": "Namespace",
                                              "metadata": {"name": ns}}, INTERNAL)

    # -- resource knowledge --------------------------------------------------------------

    def kind_of(self, gp):
        info = self.crd_info.get(gp)
        if info:
            return info[0]
        b = BUILTIN_KINDS.get(gp)
        return b[0] if b else guess_kind(gp[1])

    def has_status(self, gp):
        info = self.crd_info.get(gp)
        if info:
            return info[2]
        group, plural = gp
        if group == "":
            return plural in CORE_WITH_STATUS
        return group not in GROUPS_WITHOUT_STATUS

    @staticmethod
    def has_generation(gp):
        group = gp[0]
        return group not in ("", "events.k8s.io", "coordination.k8s.io",
                             "rbac.authorization.k8s.io", "storage.k8s.io")

    def check_resource(self, gp):
        if not self.require_crds or gp in BUILTIN_KINDS or gp in self.crd_info:
            return
        if gp[0] in BUILTIN_VERSIONS:
            return
        raise ApiError(404, "NotFound", "the server could not find the requested resource")

    def table(self, gp):
        t = self.tables.get(gp)
        if t is None:
            t = self.tables[gp] = {}
        return t

    def log(self, gp):
        lg = self.logs.get(gp)
        if lg is None:
            lg = self.logs[gp] = Log(self.lock)
        return lg

    def ns_state(self, ns):
        rec = self.tables[NAMESPACES].get(("", ns))
        if rec is None:
            return None
        return "Terminating" if rec.obj["metadata"].get("deletionTimestamp") else "Active"

    # -- committing ----------------------------------------------------------------------

    def _commit(self, gp, key, obj, etype, prev, ctx):
        """Stores `obj` (a fresh dict) with a new resourceVersion and logs the event."""
        if ctx.dry_run:
            return Rec(obj)
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        rec = Rec(obj)
        table = self.table(gp)
        uid = obj["metadata"].get("uid")
        old_refs = set()
        if prev is not None:
            old_refs = {r.get("uid") for r in prev.obj["metadata"].get("ownerReferences") or []}
        new_refs = set()
        if prev is not None:
            prev.slim()
        if etype == "DELETED":
            table.pop(key, None)
            self.uids.pop(uid, None)
            self.fields.pop((gp, key), None)
            self.foreground.discard((gp, key))
            self.orphaning.discard((gp, key))
            for dep in list(self.owners.get(uid, ())):
                self.gc_queue.put(dep)
        else:
            table[key] = rec
            self.uids[uid] = (gp, key)
            new_refs = {r.get("uid") for r in obj["metadata"].get("ownerReferences") or []}
            if new_refs and (etype == "ADDED" or new_refs != old_refs):
                if not any(u in self.uids for u in new_refs):
                    self.gc_queue.put((gp, key))
        for u in old_refs - new_refs:
            s = self.owners.get(u)
            if s:
                s.discard((gp, key))
                if not s:
                    del self.owners[u]
        for u in new_refs - old_refs:
            self.owners.setdefault(u, set()).add((gp, key))
        lg = self.log(gp)
        lg.entries.append((self.rv, etype, rec, prev))
        if len(lg.entries) > self.watch_cache_size:
            drop = len(lg.entries) - self.watch_cache_size // 2
            lg.floor = lg.entries[drop - 1][0]
            del lg.entries[:drop]
            lg.start += drop
        lg.cond.notify_all()
        return rec

    def _remove(self, gp, key, rec, ctx):
        obj = rec.copy()
        r = self._commit(gp, key, obj, "DELETED", rec, ctx)
        if gp == CRDS and not ctx.dry_run:
            self._forget_crd(obj)
        return r

    # -- normalization -------------------------------------------------------------------

    def _fill(self, gp, obj, ctx):
        if not obj.get("apiVersion"):
            obj["apiVersion"] = ctx.api_version
        if not obj.get("kind"):
            obj["kind"] = self.kind_of(gp)

    @staticmethod
    def _tidy(md):
        for k in ("labels", "annotations", "finalizers", "ownerReferences"):
            if k in md and not md[k]:
                del md[k]
        md.pop("managedFields", None)
        md.pop("selfLink", None)

    def _defaults(self, gp, obj):
        if gp == DEPLOYMENTS:
            default_deployment(obj)

    # -- create --------------------------------------------------------------------------

    def _create(self, gp, ns, obj, ctx, owner_op="Update"):
        if not isinstance(obj, dict):
            raise bad_request("the body of the request must be a JSON object")
        md = obj.get("metadata")
        if not isinstance(md, dict):
            md = obj["metadata"] = {}
        if md.get("namespace") and ns and md["namespace"] != ns:
            raise bad_request("the namespace of the provided object does not match the "
                              "namespace sent on the request")
        kind = obj.get("kind") or self.kind_of(gp)
        if not md.get("name"):
            if md.get("generateName"):
                for _ in range(100):
                    md["name"] = md["generateName"] + "".join(
                        random.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(5))
                    if (ns, md["name"]) not in self.table(gp):
                        break
            else:
                raise invalid(gp, kind, "", "metadata.name: Required value: name or "
                                            "generateName is required")
        name = md["name"]
        if ns:
            state = self.ns_state(ns)
            if state is None:
                raise ApiError(404, "NotFound", 'namespaces "%s" not found' % ns,
                               {"name": ns, "kind": "namespaces"})
            if state == "Terminating":
                raise ApiError(403, "Forbidden",
                               '%s "%s" is forbidden: unable to create new content in '
                               'namespace %s because it is being terminated'
                               % (resource_name(gp), name, ns),
                               {"name": name, "group": gp[0], "kind": gp[1],
                                "causes": [{"reason": "NamespaceTerminating",
                                            "message": "namespace %s is being terminated"
                                                       % ns,
                                            "field": "metadata.namespace"}]})
            md["namespace"] = ns
        else:
            md.pop("namespace", None)
        key = (ns, name)
        if key in self.table(gp):
            raise ApiError(409, "AlreadyExists", '%s "%s" already exists'
                           % (resource_name(gp), name), details(gp, name))
        self._fill(gp, obj, ctx)
        for k in ("deletionTimestamp", "deletionGracePeriodSeconds", "resourceVersion"):
            md.pop(k, None)
        md["uid"] = str(uuid.uuid4())
        md["creationTimestamp"] = now_ts()
        if self.has_generation(gp):
            md["generation"] = 1
        else:
            md.pop("generation", None)
        if self.has_status(gp):
            obj.pop("status", None)
        self._tidy(md)
        if gp == NAMESPACES:
            md.setdefault("labels", {})["kubernetes.io/metadata.name"] = name
            obj["spec"] = {"finalizers": ["kubernetes"]}
            obj["status"] = {"phase": "Active"}
        if gp == CRDS:
            fins = md.setdefault("finalizers", [])
            if CRD_CLEANUP not in fins:
                fins.append(CRD_CLEANUP)
        self._defaults(gp, obj)
        if not ctx.dry_run:
            with_status = self.has_status(gp)
            paths = set(flatten(obj, False, with_status))
            self.fields[(gp, key)] = {(ctx.manager, owner_op): paths}
        rec = self._commit(gp, key, obj, "ADDED", None, ctx)
        if not ctx.dry_run:
            self._after_write(gp, key, rec, False)
        return rec

    # -- update --------------------------------------------------------------------------

    def _update(self, gp, key, old, new, sub, ctx, owner_op="Update", applied_paths=None):
        """Replaces the object `old` (a Rec) by `new` (a fresh dict) as a write of the main
        resource (sub=None) or of its status (sub='status'). Returns the resulting Rec."""
        if not isinstance(new, dict):
            raise bad_request("the body of the request must be a JSON object")
        oobj = old.obj
        omd = oobj["metadata"]
        kind = oobj.get("kind") or self.kind_of(gp)
        nmd = new.get("metadata")
        if not isinstance(nmd, dict):
            nmd = new["metadata"] = {}
        name = omd["name"]
        if nmd.get("name") and nmd["name"] != name:
            raise bad_request('the name of the object (%s) does not match the name on the URL '
                              '(%s)' % (nmd["name"], name))
        rv = nmd.get("resourceVersion")
        if rv and rv != omd.get("resourceVersion"):
            raise conflict(gp, name)
        if nmd.get("uid") and nmd["uid"] != omd.get("uid"):
            raise conflict(gp, name, "Precondition failed: UID in precondition: %s, UID in "
                                     "object meta: %s" % (nmd["uid"], omd.get("uid")))
        with_status = self.has_status(gp)
        if sub == "status":
            status = new.get("status")
            new = old.copy()
            if status is None:
                new.pop("status", None)
            else:
                new["status"] = status
            nmd = new["metadata"]
        else:
            if with_status:
                if "status" in oobj:
                    new["status"] = json.loads(json.dumps(oobj["status"]))
                else:
                    new.pop("status", None)
            for k in ("name", "namespace", "uid", "creationTimestamp", "deletionTimestamp",
                      "deletionGracePeriodSeconds", "generation", "generateName"):
                if k in omd:
                    nmd[k] = omd[k]
                else:
                    nmd.pop(k, None)
            if not new.get("apiVersion"):
                new["apiVersion"] = oobj.get("apiVersion")
            if not new.get("kind"):
                new["kind"] = kind
            self._tidy(nmd)
            self._defaults(gp, new)
            if gp == NAMESPACES:
                new["spec"] = oobj.get("spec", {})
                new["status"] = oobj.get("status", {})
                nmd.setdefault("labels", {})["kubernetes.io/metadata.name"] = name
            if gp == CRDS and CRD_CLEANUP in (omd.get("finalizers") or []) and \
                    not omd.get("deletionTimestamp"):
                fins = nmd.setdefault("finalizers", [])
                if CRD_CLEANUP not in fins:
                    fins.append(CRD_CLEANUP)
        nmd["resourceVersion"] = omd.get("resourceVersion")
        if omd.get("deletionTimestamp"):
            added = set(nmd.get("finalizers") or []) - set(omd.get("finalizers") or [])
            if added:
                raise invalid(gp, kind, name, "metadata.finalizers: Forbidden: no new "
                                              "finalizers can be added if the object is "
                                              "being deleted, found new finalizers %s"
                              % json.dumps(sorted(added)))
        if new == oobj:
            return old, False
        if sub != "status" and "generation" in omd:
            a = {k: v for k, v in new.items() if k not in ("metadata", "status")}
            b = {k: v for k, v in oobj.items() if k not in ("metadata", "status")}
            if a != b:
                nmd["generation"] = omd["generation"] + 1
        if not ctx.dry_run:
            self._own(gp, key, oobj, new, sub == "status", with_status, ctx, owner_op,
                      applied_paths)
        if nmd.get("deletionTimestamp") and not nmd.get("finalizers"):
            return self._remove_after_update(gp, key, old, new, ctx), True
        rec = self._commit(gp, key, new, "MODIFIED", old, ctx)
        if not ctx.dry_run:
            self._after_write(gp, key, rec, sub == "status")
        return rec, True

    def _remove_after_update(self, gp, key, old, new, ctx):
        r = self._commit(gp, key, new, "DELETED", old, ctx)
        if gp == CRDS and not ctx.dry_run:
            self._forget_crd(new)
        return r

    def _own(self, gp, key, oobj, nobj, scope_status, with_status, ctx, owner_op,
             applied_paths):
        fields = self.fields.setdefault((gp, key), {})
        owner = (ctx.manager, owner_op)
        a = flatten(oobj, scope_status, with_status)
        b = flatten(nobj, scope_status, with_status)
        changed = {p for p, v in b.items() if a.get(p, MISSING) != v}
        removed = set(a) - set(b)
        for owned in fields.values():
            owned.difference_update(removed)
        take_ownership(fields, owner, changed)
        if applied_paths is not None:
            # the applier owns exactly what it applied (shared where values agree)
            mine = fields.setdefault(owner, set())
            in_scope = {p for p in mine if (p[0] == "status") == scope_status
                        or (not with_status and not scope_status)}
            mine.difference_update(in_scope - applied_paths)
            mine.update(applied_paths)

    # -- hooks: the fake controllers -----------------------------------------------------

    def _after_write(self, gp, key, rec, status_only):
        if gp == DEPLOYMENTS and not status_only:
            status = deployment_status(rec.obj)
            if status != rec.obj.get("status"):
                self._update(gp, key, rec, {"status": status}, "status",
                             Ctx(CONTROLLER_MANAGER))
        elif gp == CRDS:
            obj = rec.obj
            self._learn_crd(obj)
            if not status_only and not obj["metadata"].get("deletionTimestamp"):
                status = crd_status(obj)
                if status != obj.get("status"):
                    self._update(gp, key, rec, {"status": status}, "status",
                                 Ctx(SERVER_MANAGER))

    def _learn_crd(self, obj):
        spec = obj.get("spec") or {}
        names = spec.get("names") or {}
        if not spec.get("group") or not names.get("plural"):
            return
        versions = spec.get("versions") or []
        has_status = any("status" in (v.get("subresources") or {}) for v in versions)
        storage = next((v["name"] for v in versions if v.get("storage")),
                       versions[0]["name"] if versions else "v1")
        self.crd_info[(spec["group"], names["plural"])] = (
            names.get("kind") or guess_kind(names["plural"]),
            spec.get("scope", "Namespaced") == "Namespaced", has_status, storage)

    def _forget_crd(self, obj):
        spec = obj.get("spec") or {}
        names = spec.get("names") or {}
        self.crd_info.pop((spec.get("group"), names.get("plural")), None)

    # -- delete --------------------------------------------------------------------------

    def _delete(self, gp, key, rec, opts, ctx):
        obj = rec.obj
        md = obj["metadata"]
        pre = opts.get("preconditions") or {}
        if pre.get("uid") and pre["uid"] != md.get("uid"):
            raise conflict(gp, md["name"], "Precondition failed: UID in precondition: %s, UID "
                                           "in object meta: %s" % (pre["uid"], md.get("uid")))
        if pre.get("resourceVersion") and pre["resourceVersion"] != md.get("resourceVersion"):
            raise conflict(gp, md["name"], "Precondition failed: ResourceVersion in "
                                           "precondition: %s, ResourceVersion in object meta: "
                                           "%s" % (pre["resourceVersion"],
                                                   md.get("resourceVersion")))
        policy = opts.get("propagationPolicy")
        if opts.get("orphanDependents") is True:
            policy = "Orphan"
        fins = list(md.get("finalizers") or [])
        if policy == "Foreground" and "foregroundDeletion" not in fins:
            fins.append("foregroundDeletion")
        elif policy == "Orphan" and "orphan" not in fins:
            fins.append("orphan")
        if gp == NAMESPACES:
            if md.get("deletionTimestamp"):
                return rec
            new = rec.copy()
            new["metadata"]["deletionTimestamp"] = now_ts()
            new["metadata"]["deletionGracePeriodSeconds"] = 0
            new.setdefault("status", {})["phase"] = "Terminating"
            r = self._commit(gp, key, new, "MODIFIED", rec, ctx)
            if not ctx.dry_run:
                self.terminating.add(md["name"])
                self.wakeup.set()
            return r
        if not fins:
            r = self._remove(gp, key, rec, ctx)
            return r
        if md.get("deletionTimestamp") and fins == (md.get("finalizers") or []):
            return rec
        new = rec.copy()
        nmd = new["metadata"]
        if not nmd.get("deletionTimestamp"):
            nmd["deletionTimestamp"] = now_ts()
            nmd["deletionGracePeriodSeconds"] = 0
            if "generation" in nmd:
                nmd["generation"] += 1
        nmd["finalizers"] = fins
        r = self._commit(gp, key, new, "MODIFIED", rec, ctx)
        if not ctx.dry_run:
            if "foregroundDeletion" in fins:
                self.foreground.add((gp, key))
                for dep in list(self.owners.get(nmd.get("uid"), ())):
                    self.gc_queue.put(dep)
            if "orphan" in fins:
                self.orphaning.add((gp, key))
            if gp == CRDS:
                self.crd_cleanup.add(nmd["name"])
            self.wakeup.set()
        return r

    # -- public API (each takes the lock) ------------------------------------------------

    def get(self, gp, ns, name):
        with self.lock:
            self.check_resource(gp)
            rec = self.table(gp).get((ns, name))
            if rec is None:
                raise not_found(gp, name)
            return rec

    def list(self, gp, ns, lsel, fsel, limit, cont, all_ns):
        with self.lock:
            self.check_resource(gp)
            if cont:
                try:
                    tok = json.loads(base64.b64decode(cont))
                    snap = self.snapshots.get(tok["id"])
                except Exception:
                    raise bad_request("invalid continue token")
                if snap is None or snap[0] < time.monotonic():
                    raise ApiError(410, "Expired", "The provided continue parameter is too "
                                   "old to display a consistent list result. You can start a "
                                   "new list without the continue parameter.")
                _, rv, recs = snap
                recs = recs[tok["off"]:]
                off = tok["off"]
                sid = tok["id"]
            else:
                rv = self.rv
                table = self.table(gp)
                if all_ns:
                    keys = sorted(table)
                else:
                    keys = sorted(k for k in table if k[0] == ns)
                recs = [table[k] for k in keys]
                if lsel or fsel:
                    recs = [r for r in recs if rec_match(r, lsel, fsel)]
                off, sid = 0, None
            token, remaining = None, None
            if limit and len(recs) > limit:
                if sid is None:
                    sid = next(self.snapshot_ids)
                    self.snapshots[sid] = (time.monotonic() + 300, rv, recs)
                    while len(self.snapshots) > 256:
                        self.snapshots.popitem(last=False)
                remaining = len(recs) - limit
                recs = recs[:limit]
                token = base64.b64encode(json.dumps({"id": sid, "off": off + limit,
                                                     "rv": rv}).encode()).decode()
            elif sid is not None:
                self.snapshots.pop(sid, None)
            return recs, rv, token, remaining

    def create(self, gp, ns, body, ctx):
        with self.lock:
            self.check_resource(gp)
            return self._create(gp, ns, body, ctx), True, True

    def replace(self, gp, ns, name, body, sub, ctx):
        with self.lock:
            self.check_resource(gp)
            rec = self.table(gp).get((ns, name))
            if rec is None:
                raise not_found(gp, name)
            r, mutated = self._update(gp, (ns, name), rec, body, sub, ctx)
            return r, mutated, False

    def patch(self, gp, ns, name, ctype, patch, sub, ctx):
        with self.lock:
            self.check_resource(gp)
            key = (ns, name)
            rec = self.table(gp).get(key)
            if ctype == "application/apply-patch+yaml":
                return self._apply(gp, ns, name, rec, patch, sub, ctx)
            if rec is None:
                raise not_found(gp, name)
            kind = rec.obj.get("kind", "")
            if ctype == "application/json-patch+json":
                try:
                    new = json_patch(rec.copy(), patch)
                except PatchFailed as e:
                    raise invalid(gp, kind, name, "patch: Invalid value: %s: %s"
                                  % (json.dumps(patch)[:200], e))
                if not isinstance(new, dict):
                    raise invalid(gp, kind, name, "the patch produced no object")
                # a JSON patch that rewrites resourceVersion is an optimistic-lock check
                prv = (new.get("metadata") or {}).get("resourceVersion")
                if prv != rec.obj["metadata"].get("resourceVersion"):
                    raise conflict(gp, name)
            elif ctype in ("application/merge-patch+json",
                           "application/strategic-merge-patch+json"):
                if not isinstance(patch, dict):
                    raise bad_request("a merge patch must be a JSON object")
                merge = merge_patch if ctype.startswith("application/merge") \
                    else strategic_merge_patch
                new = merge(rec.copy(), patch)
            else:
                raise ApiError(415, "UnsupportedMediaType",
                               "the body of the request was in an unknown format - accepted "
                               "media types include: application/json-patch+json, "
                               "application/merge-patch+json, application/apply-patch+yaml")
            r, mutated = self._update(gp, key, rec, new, sub, ctx)
            return r, mutated, False

    def _apply(self, gp, ns, name, rec, applied, sub, ctx):
        if not isinstance(applied, dict):
            raise bad_request("an apply patch must be a JSON object")
        if not applied.get("apiVersion") or not applied.get("kind"):
            raise bad_request("invalid object type: /, Kind=" if not applied.get("kind")
                              else "apiVersion must be set")
        amd = applied.get("metadata") or {}
        if amd.get("name") and amd["name"] != name:
            raise bad_request('the name of the object (%s) does not match the name on the URL '
                              '(%s)' % (amd["name"], name))
        with_status = self.has_status(gp)
        scope_status = sub == "status"
        if scope_status:
            applied = {"apiVersion": applied["apiVersion"], "kind": applied["kind"],
                       "metadata": {"name": name},
                       "status": applied.get("status")}
            if applied["status"] is None:
                del applied["status"]
        elif with_status:
            applied = {k: v for k, v in applied.items() if k != "status"}
        apaths = flatten(applied, scope_status, with_status)
        if rec is None:
            if scope_status:
                raise not_found(gp, name)
            obj = json.loads(json.dumps(applied))
            obj.setdefault("metadata", {})["name"] = name
            return self._create(gp, ns, obj, ctx, owner_op="Apply"), True, True
        key = (ns, name)
        cur = rec.obj
        fields = self.fields.setdefault((gp, key), {})
        owner = (ctx.manager, "Apply")
        if not ctx.force:
            cflat = flatten(cur, scope_status, with_status)
            conflicts = []
            for p, v in apaths.items():
                c = cflat.get(p, MISSING)
                if c is MISSING or c == v:
                    continue
                for o, owned in fields.items():
                    if o != owner and p in owned:
                        conflicts.append('conflict with "%s"%s: .%s' % (
                            o[0], " using %s" % cur.get("apiVersion") if o[1] == "Update"
                            else "", ".".join(p)))
            if conflicts:
                raise ApiError(409, "Conflict", "Apply failed with %d conflict%s: %s"
                               % (len(conflicts), "s" if len(conflicts) > 1 else "",
                                  "\n".join(conflicts)),
                               dict(details(gp, name), causes=[
                                   {"reason": "FieldManagerConflict", "message": c}
                                   for c in conflicts]))
        new = rec.copy()
        # fields this manager applied before and no longer applies go, unless shared
        previous = fields.get(owner, set())
        for p in previous:
            in_scope = (p[0] == "status") == scope_status or (not with_status and
                                                               not scope_status)
            if not in_scope or p in apaths:
                continue
            if any(p in owned for o, owned in fields.items() if o != owner):
                continue
            remove_path(new, p)
        # metadata: labels/annotations merge, finalizers are a set, ownerReferences atomic
        if not scope_status:
            nmd = new["metadata"]
            for k in ("labels", "annotations"):
                if isinstance(amd.get(k), dict):
                    nmd[k] = dict(nmd.get(k) or {}, **{a: b for a, b in amd[k].items()
                                                      if b is not None})
            if amd.get("finalizers"):
                fins = list(nmd.get("finalizers") or [])
                fins += [f for f in amd["finalizers"] if f not in fins]
                nmd["finalizers"] = fins
            if amd.get("ownerReferences"):
                nmd["ownerReferences"] = amd["ownerReferences"]
            if amd.get("resourceVersion"):
                nmd["resourceVersion"] = amd["resourceVersion"]
        body = {k: v for k, v in applied.items() if k not in ("metadata", "apiVersion", "kind")}
        new = apply_merge(new, body)
        if not scope_status:
            new["apiVersion"] = applied["apiVersion"]
        rec2, mutated = self._update(gp, key, rec, new, sub, ctx, owner_op="Apply",
                                     applied_paths=set(apaths))
        return rec2, mutated, False

    def delete(self, gp, ns, name, opts, ctx):
        with self.lock:
            self.check_resource(gp)
            rec = self.table(gp).get((ns, name))
            if rec is None:
                raise not_found(gp, name)
            r = self._delete(gp, (ns, name), rec, opts, ctx)
            return r, r is not rec, False

    def delete_collection(self, gp, ns, lsel, fsel, opts, ctx, all_ns):
        with self.lock:
            self.check_resource(gp)
            table = self.table(gp)
            keys = sorted(k for k in table if all_ns or k[0] == ns)
            out, mutated = [], False
            for k in keys:
                rec = table.get(k)
                if rec is None or not rec_match(rec, lsel, fsel):
                    continue
                r = self._delete(gp, k, rec, opts, ctx)
                mutated = mutated or r is not rec
                out.append(r)
            return out, self.rv, mutated

    # -- watch ---------------------------------------------------------------------------

    def watch_start(self, gp, ns, all_ns, rv, initial, lsel, fsel):
        """Returns (initial recs, start position, log) or raises 410 as ('expired', msg)."""
        with self.lock:
            self.check_resource(gp)
            lg = self.log(gp)
            recs = []
            if initial or rv in (None, "", "0"):
                table = self.table(gp)
                recs = [table[k] for k in sorted(table) if all_ns or k[0] == ns]
                recs = [r for r in recs if rec_match(r, lsel, fsel)]
                return recs, lg.end, lg, self.rv, None
            try:
                r = int(rv)
            except ValueError:
                raise bad_request('invalid resource version "%s"' % rv)
            if r < lg.floor:
                return [], lg.end, lg, self.rv, "too old resource version: %d (%d)" % (
                    r, lg.floor + 1)
            i = bisect.bisect_right(lg.entries, r, key=lambda e: e[0])
            return [], lg.start + i, lg, self.rv, None

    def watch_next(self, lg, pos, timeout):
        """Waits up to `timeout` for events after `pos`; returns (events, new pos, rv) or
        (None, pos, rv) when the log dropped events this watch has not seen."""
        with self.lock:
            if lg.end == pos and timeout > 0:
                lg.cond.wait(timeout)
            if pos < lg.start:
                return None, pos, self.rv
            events = lg.entries[pos - lg.start:]
            return events, lg.end, self.rv

    # -- background controllers ----------------------------------------------------------

    def gc_worker(self):
        while True:
            item = self.gc_queue.get()
            try:
                with self.lock:
                    self._gc_one(*item)
            except Exception as e:  # never let the collector die
                sys.stderr.write("fake-apiserver: gc error: %r\n" % (e,))

    def _gc_one(self, gp, key):
        rec = self.table(gp).get(key)
        if rec is None:
            return
        refs = rec.obj["metadata"].get("ownerReferences") or []
        if not refs:
            return
        solid, dangling, waiting = [], [], []
        for r in refs:
            owner = self.uids.get(r.get("uid"))
            if owner is None:
                dangling.append(r)
                continue
            orec = self.table(owner[0]).get(owner[1])
            ofins = orec.obj["metadata"].get("finalizers") or [] if orec else []
            if orec and orec.obj["metadata"].get("deletionTimestamp") and \
                    "foregroundDeletion" in ofins:
                waiting.append(r)
            else:
                solid.append(r)
        if solid:
            if dangling:
                new = rec.copy()
                new["metadata"]["ownerReferences"] = [r for r in refs if r not in dangling]
                self._update(gp, key, rec, new, None, Ctx(CONTROLLER_MANAGER))
            return
        if dangling or waiting:
            if not rec.obj["metadata"].get("deletionTimestamp"):
                self._delete(gp, key, rec, {}, Ctx(CONTROLLER_MANAGER))

    def controller_loop(self):
        """Namespace and CRD cleanup, foreground and orphan finalizers."""
        while True:
            self.wakeup.wait(0.25)
            self.wakeup.clear()
            try:
                with self.lock:
                    self._sweep()
            except Exception as e:
                sys.stderr.write("fake-apiserver: controller error: %r\n" % (e,))

    def _sweep(self):
        ctx = Ctx(CONTROLLER_MANAGER)
        for ns in list(self.terminating):
            nsrec = self.tables[NAMESPACES].get(("", ns))
            if nsrec is None:
                self.terminating.discard(ns)
                continue
            left = 0
            for gp, table in list(self.tables.items()):
                if gp == NAMESPACES:
                    continue
                for key in [k for k in table if k[0] == ns]:
                    left += 1
                    rec = table[key]
                    if not rec.obj["metadata"].get("deletionTimestamp"):
                        self._delete(gp, key, rec, {}, ctx)
            if left == 0:
                self.terminating.discard(ns)
                new = nsrec.copy()
                new["spec"]["finalizers"] = []
                self._commit(NAMESPACES, ("", ns), new, "DELETED", nsrec, ctx)
        for name in list(self.crd_cleanup):
            crec = self.tables[CRDS].get(("", name))
            if crec is None:
                self.crd_cleanup.discard(name)
                continue
            spec = crec.obj.get("spec") or {}
            gp = (spec.get("group"), (spec.get("names") or {}).get("plural"))
            table = self.table(gp)
            for key, rec in list(table.items()):
                if not rec.obj["metadata"].get("deletionTimestamp"):
                    self._delete(gp, key, rec, {}, ctx)
            if not table:
                self.crd_cleanup.discard(name)
                self._drop_finalizer(CRDS, ("", name), CRD_CLEANUP, ctx)
        for gp, key in list(self.foreground):
            rec = self.table(gp).get(key)
            if rec is None:
                self.foreground.discard((gp, key))
                continue
            uid = rec.obj["metadata"].get("uid")
            blocking = False
            for dgp, dkey in self.owners.get(uid, ()):
                drec = self.table(dgp).get(dkey)
                if drec and any(r.get("uid") == uid and r.get("blockOwnerDeletion")
                                for r in drec.obj["metadata"].get("ownerReferences") or []):
                    blocking = True
                    break
            if not blocking:
                self.foreground.discard((gp, key))
                self._drop_finalizer(gp, key, "foregroundDeletion", ctx)
        for gp, key in list(self.orphaning):
            rec = self.table(gp).get(key)
            self.orphaning.discard((gp, key))
            if rec is None:
                continue
            uid = rec.obj["metadata"].get("uid")
            for dgp, dkey in list(self.owners.get(uid, ())):
                drec = self.table(dgp).get(dkey)
                if drec:
                    new = drec.copy()
                    new["metadata"]["ownerReferences"] = [
                        r for r in new["metadata"].get("ownerReferences") or []
                        if r.get("uid") != uid]
                    self._update(dgp, dkey, drec, new, None, ctx)
            self._drop_finalizer(gp, key, "orphan", ctx)

    def _drop_finalizer(self, gp, key, fin, ctx):
        rec = self.table(gp).get(key)
        if rec is None:
            return
        new = rec.copy()
        new["metadata"]["finalizers"] = [f for f in new["metadata"].get("finalizers") or []
                                         if f != fin]
        self._update(gp, key, rec, new, None, ctx)

    def object_count(self):
        with self.lock:
            return sum(len(t) for t in self.tables.values())

    def log_sizes(self):
        with self.lock:
            return {resource_name(gp): len(lg.entries) for gp, lg in sorted(self.logs.items())
                    if lg.entries}


# ---------------------------------------------------------------------------------------------
# Request statistics.

class Stats:
    WRITES = {"create", "update", "patch", "apply", "delete", "deletecollection"}

    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        with self.lock:
            self.requests = {}
            self.writes = {}
            self.mutations = {}
            self.errors = {}
            self.total = 0
            self.since = time.time()
            self.version = 0

    def record(self, verb, resource, code, mutated):
        with self.lock:
            self.version += 1
            self.total += 1
            per = self.requests.setdefault(verb, {})
            per[resource] = per.get(resource, 0) + 1
            if code >= 400:
                self.errors[str(code)] = self.errors.get(str(code), 0) + 1
            if verb in self.WRITES:
                self.writes[resource] = self.writes.get(resource, 0) + 1
                if mutated:
                    self.mutations[resource] = self.mutations.get(resource, 0) + 1

    def snapshot(self, store, watches):
        with self.lock:
            return {
                "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.since)),
                "totalRequests": self.total,
                "totalWrites": sum(self.writes.values()),
                "totalMutations": sum(self.mutations.values()),
                "requests": {v: dict(sorted(r.items())) for v, r in sorted(
                    self.requests.items())},
                "writes": dict(sorted(self.writes.items())),
                "mutations": dict(sorted(self.mutations.items())),
                "errors": dict(sorted(self.errors.items())),
                "watchesOpen": watches[0],
                "objects": store.object_count(),
                "watchCacheEvents": store.log_sizes(),
                "resourceVersion": str(store.rv),
            }


# ---------------------------------------------------------------------------------------------
# HTTP.

STORE = None
STATS = Stats()
WATCHES = [0]
WATCHES_LOCK = threading.Lock()
OPTS = None

REASONS = {200: "OK", 201: "Created", 400: "Bad Request", 403: "Forbidden", 404: "Not Found",
           405: "Method Not Allowed", 409: "Conflict", 410: "Gone", 415: "Unsupported Media "
           "Type", 422: "Unprocessable Entity", 500: "Internal Server Error"}


def parse_path(path):
    """-> (group, version, plural, ns, name, sub, all_ns) or a discovery tuple."""
    parts = [unquote(p) for p in path.strip("/").split("/") if p]
    if parts[:1] == ["api"]:
        if len(parts) < 2:
            return ("discovery", "api")
        group, version, rest = "", parts[1], parts[2:]
    elif parts[:1] == ["apis"]:
        if len(parts) < 3:
            return ("discovery", "apis", parts[1] if len(parts) > 1 else None)
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    watch = False
    if rest[:1] == ["watch"]:
        watch, rest = True, rest[1:]
    if not rest:
        return ("discovery", "resources", group, version)
    if rest[0] == "namespaces" and group == "" and (len(rest) <= 2 or (
            len(rest) == 3 and rest[2] in ("status", "finalize"))):  # namespace subresources
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else None
        return (group, version, "namespaces", "", name, sub, False, watch)
    if rest[0] == "namespaces" and len(rest) >= 3:
        ns, plural = rest[1], rest[2]
        name = rest[3] if len(rest) > 3 else None
        sub = "/".join(rest[4:]) or None
        return (group, version, plural, ns, name, sub, False, watch)
    plural = rest[0]
    name = rest[1] if len(rest) > 1 else None
    sub = "/".join(rest[2:]) or None
    return (group, version, plural, "", name, sub, True, watch)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server_version = "fake-apiserver"

    def log_message(self, fmt, *args):
        if OPTS.log:
            sys.stderr.write("fake-apiserver: " + (fmt % args) + "\n")

    # -- plumbing ------------------------------------------------------------------------

    def _send(self, code, body, ctype="application/json"):
        head = ("HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n"
                "Cache-Control: no-cache, private\r\n" % (code, REASONS.get(code, "Status"),
                                                          ctype, len(body)))
        if self.close_connection:
            head += "Connection: close\r\n"
        self.wfile.write(head.encode() + b"\r\n" + body)
        self._code = code

    def _send_error(self, e):
        self._send(e.code, dumps(e.status()))

    def _body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                line = self.rfile.readline()
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _json_body(self, required=True):
        raw = self._body()
        if not raw.strip():
            if required:
                raise bad_request("the request body is empty")
            return None
        try:
            return json.loads(raw)
        except ValueError as e:
            raise bad_request("the body of the request is not JSON (YAML is not supported by "
                              "this fake API server): %s" % e)

    def do_GET(self):
        self._handle("GET")

    def do_POST(self):
        self._handle("POST")

    def do_PUT(self):
        self._handle("PUT")

    def do_PATCH(self):
        self._handle("PATCH")

    def do_DELETE(self):
        self._handle("DELETE")

    def _handle(self, method):
        start = time.monotonic()
        self._code = 0
        # `Accept: application/json;as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1`:
        # answer with metadata only, like the real server (kube's Api::*_metadata calls).
        self._meta = "as=PartialObjectMetadata" in (self.headers.get("Accept") or "")
        verb, resource, mutated = method.lower(), "-", False
        try:
            u = urlsplit(self.path)
            q = {k: v[-1] for k, v in parse_qs(u.query, keep_blank_values=True).items()}
            if u.path.startswith("/fake/"):
                verb, resource = "fake", u.path
                return self._fake(method, u.path)
            if u.path in ("/healthz", "/livez", "/readyz") or u.path.startswith(
                    ("/healthz/", "/livez/", "/readyz/")):
                verb, resource = "health", u.path
                return self._send(200, b"ok", "text/plain; charset=utf-8")
            if u.path == "/version":
                verb, resource = "version", u.path
                return self._send(200, dumps({
                    "major": "1", "minor": "33", "gitVersion": "v1.33.0-fake",
                    "gitCommit": "0" * 40, "gitTreeState": "clean",
                    "buildDate": "2025-01-01T00:00:00Z", "goVersion": "go1.24",
                    "compiler": "gc", "platform": "linux/amd64"}))
            p = parse_path(u.path)
            if p is None:
                raise ApiError(404, "NotFound", "the server could not find the requested "
                                                "resource")
            if p[0] == "discovery":
                verb, resource = "discovery", u.path
                if method != "GET":
                    raise ApiError(405, "MethodNotAllowed", "method not allowed")
                return self._send(200, dumps(self._discovery(p)))
            group, version, plural, ns, name, sub, all_ns, watch_path = p
            gp = (group, plural)
            api_version = version if not group else group + "/" + version
            if sub not in (None, "status"):
                raise ApiError(404, "NotFound", "the server could not find the requested "
                                                "resource")
            resource = resource_name(gp, sub)
            manager = q.get("fieldManager") or (self.headers.get("User-Agent") or
                                                "unknown").split("/")[0] or "unknown"
            ctx = Ctx(manager, force=q.get("force") in ("true", "1"),
                      dry_run=bool(q.get("dryRun")), api_version=api_version)
            watch = watch_path or q.get("watch") in ("true", "1")
            if method == "GET":
                if name is not None and not watch:
                    verb = "get"
                    rec = STORE.get(gp, ns, name)
                    return self._send(200, self._enc(rec, api_version))
                lsel = parse_label_selector(q.get("labelSelector", ""))
                fsel = parse_field_selector(q.get("fieldSelector", ""))
                if name is not None:
                    fsel = fsel + (("metadata.name", True, name),)
                if watch:
                    verb = "watch"
                    return self._watch(gp, ns, all_ns and not ns, q, lsel, fsel, api_version)
                verb = "list"
                return self._list(gp, ns, all_ns and not ns, q, lsel, fsel, api_version)
            if method == "POST":
                verb = "create"
                if name is not None:
                    raise ApiError(405, "MethodNotAllowed", "the server does not allow this "
                                                            "method on the requested resource")
                body = self._json_body()
                rec, mutated, _ = STORE.create(gp, ns, body, ctx)
                mutated = mutated and not ctx.dry_run
                return self._send(201, self._enc(rec, api_version))
            if method == "PUT":
                verb = "update"
                if name is None:
                    raise ApiError(405, "MethodNotAllowed", "the server does not allow this "
                                                            "method on the requested resource")
                body = self._json_body()
                rec, mutated, _ = STORE.replace(gp, ns, name, body, sub, ctx)
                mutated = mutated and not ctx.dry_run
                return self._send(200, self._enc(rec, api_version))
            if method == "PATCH":
                ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
                verb = "apply" if ctype == "application/apply-patch+yaml" else "patch"
                if name is None:
                    raise ApiError(405, "MethodNotAllowed", "the server does not allow this "
                                                            "method on the requested resource")
                body = self._json_body()
                if verb == "apply" and not q.get("fieldManager"):
                    raise ApiError(422, "Invalid", 'PatchOptions.meta.k8s.io "" is invalid: '
                                   'fieldManager: Required value: is required for apply patch')
                rec, mutated, created = STORE.patch(gp, ns, name, ctype, body, sub, ctx)
                mutated = mutated and not ctx.dry_run
                return self._send(201 if created else 200, self._enc(rec, api_version))
            if method == "DELETE":
                opts = self._json_body(required=False) or {}
                if "propagationPolicy" in q:
                    opts["propagationPolicy"] = q["propagationPolicy"]
                if "orphanDependents" in q:
                    opts["orphanDependents"] = q["orphanDependents"] in ("true", "1")
                if name is None:
                    verb = "deletecollection"
                    lsel = parse_label_selector(q.get("labelSelector", ""))
                    fsel = parse_field_selector(q.get("fieldSelector", ""))
                    recs, rv, mutated = STORE.delete_collection(gp, ns, lsel, fsel, opts, ctx,
                                                                all_ns and not ns)
                    mutated = mutated and not ctx.dry_run
                    return self._send(200, self._list_body(gp, api_version, recs, rv, None,
                                                           None))
                verb = "delete"
                rec, mutated, _ = STORE.delete(gp, ns, name, opts, ctx)
                mutated = mutated and not ctx.dry_run
                return self._send(200, self._enc(rec, api_version))
            raise ApiError(405, "MethodNotAllowed", "method not allowed")
        except ApiError as e:
            self._send_error(e)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as e:  # a bug here must still answer as a Status
            import traceback
            traceback.print_exc()
            try:
                self._send_error(ApiError(500, "InternalError", "fake-apiserver: %r" % (e,)))
            except OSError:
                self.close_connection = True
        finally:
            if verb not in ("fake",) and not (verb == "watch" and self._code == 200):
                STATS.record(verb, resource, self._code, mutated)
            if OPTS.log:
                sys.stderr.write("fake-apiserver: %s %s -> %s (%.1f ms)\n" % (
                    method, self.path, self._code, (time.monotonic() - start) * 1000))

    def _enc(self, rec, api_version):
        if self._meta:
            return rec.meta_enc()
        if rec.api_version == api_version or api_version is None:
            return rec.enc
        obj = rec.copy()
        obj["apiVersion"] = api_version
        return dumps(obj)

    def _list_body(self, gp, api_version, recs, rv, token, remaining):
        md = {"resourceVersion": str(rv)}
        if token:
            md["continue"] = token
            md["remainingItemCount"] = remaining
        if self._meta:
            head = dumps({"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadataList",
                          "metadata": md})
        else:
            head = dumps({"apiVersion": api_version, "kind": STORE.kind_of(gp) + "List",
                          "metadata": md})
        return head[:-1] + b',"items":[' + b",".join(
            self._enc(r, api_version) for r in recs) + b"]}"

    def _list(self, gp, ns, all_ns, q, lsel, fsel, api_version):
        try:
            limit = int(q.get("limit") or 0)
        except ValueError:
            raise bad_request("invalid limit")
        recs, rv, token, remaining = STORE.list(gp, ns, lsel, fsel, limit, q.get("continue"),
                                                all_ns)
        self._send(200, self._list_body(gp, api_version, recs, rv, token, remaining))

    # -- watch ---------------------------------------------------------------------------

    def _watch(self, gp, ns, all_ns, q, lsel, fsel, api_version):
        try:
            timeout = float(q.get("timeoutSeconds") or 1800)
        except ValueError:
            raise bad_request("invalid timeoutSeconds")
        bookmarks = q.get("allowWatchBookmarks") in ("true", "1")
        initial = q.get("sendInitialEvents") in ("true", "1")
        recs, pos, lg, rv, expired = STORE.watch_start(gp, ns, all_ns, q.get("resourceVersion"),
                                                       initial, lsel, fsel)
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         b"Cache-Control: no-cache, private\r\n"
                         b"Transfer-Encoding: chunked\r\n\r\n")
        self._code = 200
        STATS.record("watch", resource_name(gp), 200, False)  # counted when it starts
        kind = STORE.kind_of(gp)
        if self._meta:
            kind, api_version_bm = "PartialObjectMetadata", "meta.k8s.io/v1"
        else:
            api_version_bm = api_version
        with WATCHES_LOCK:
            WATCHES[0] += 1
        try:
            if expired:
                STATS.record("watch-expired", resource_name(gp), 410, False)
                self._chunk([self._event("ERROR", dumps(ApiError(410, "Expired", expired)
                                                        .status()))])
                return self._end_chunks()
            lines = [self._event("ADDED", self._enc(r, api_version)) for r in recs]
            if initial:
                lines.append(self._bookmark(kind, api_version_bm, rv, initial_end=True))
            if lines:
                self._chunk(lines)
            deadline = time.monotonic() + timeout
            every = OPTS.bookmark_interval
            next_bookmark = time.monotonic() + every
            sock = self.connection
            while True:
                now = time.monotonic()
                if now >= deadline:
                    break
                wait = min(deadline - now, next_bookmark - now, 1.0)
                events, pos, rv = STORE.watch_next(lg, pos, wait)
                if events is None:
                    STATS.record("watch-expired", resource_name(gp), 410, False)
                    self._chunk([self._event("ERROR", dumps(ApiError(
                        410, "Expired", "too old resource version: the watch fell behind")
                        .status()))])
                    break
                lines = []
                for _rv, etype, rec, prev in events:
                    if not all_ns and rec.ns != ns:
                        continue
                    match = rec_match(rec, lsel, fsel)
                    if etype == "MODIFIED" and (lsel or fsel) and prev is not None:
                        was = rec_match(prev, lsel, fsel)
                        if was and not match:
                            lines.append(self._event("DELETED", self._enc(rec, api_version)))
                            continue
                        if match and not was:
                            etype = "ADDED"
                    if match:
                        lines.append(self._event(etype, self._enc(rec, api_version)))
                now = time.monotonic()
                if bookmarks and (now >= next_bookmark or now >= deadline):
                    lines.append(self._bookmark(kind, api_version_bm, rv))
                if now >= next_bookmark:
                    next_bookmark = now + every
                if lines:
                    self._chunk(lines)
                elif self._closed(sock):
                    return
            self._end_chunks()
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.close_connection = True
        finally:
            with WATCHES_LOCK:
                WATCHES[0] -= 1

    @staticmethod
    def _event(etype, enc):
        return b'{"type":"' + etype.encode() + b'","object":' + enc + b"}\n"

    @staticmethod
    def _bookmark(kind, api_version, rv, initial_end=False):
        md = {"resourceVersion": str(rv)}
        if initial_end:
            md["annotations"] = {"k8s.io/initial-events-end": "true"}
        return Handler._event("BOOKMARK", dumps({"kind": kind, "apiVersion": api_version,
                                                 "metadata": md}))

    def _chunk(self, lines):
        data = b"".join(lines)
        self.wfile.write(b"%x\r\n" % len(data) + data + b"\r\n")

    def _end_chunks(self):
        self.wfile.write(b"0\r\n\r\n")

    @staticmethod
    def _closed(sock):
        try:
            r, _, _ = select.select([sock], [], [], 0)
            if r:
                return sock.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True
        return False

    # -- discovery and /fake -------------------------------------------------------------

    def _discovery(self, p):
        with STORE.lock:
            crds = dict(STORE.crd_info)
        if p[1] == "api":
            return {"kind": "APIVersions", "versions": ["v1"],
                    "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0",
                                                    "serverAddress": "127.0.0.1"}]}
        groups = {g: {v} for g, v in BUILTIN_VERSIONS.items() if g}
        for (g, _), info in crds.items():
            groups.setdefault(g, set()).add(info[3])
        if p[1] == "apis" and len(p) == 3 and p[2] is None:
            return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
                {"name": g, "versions": [{"groupVersion": g + "/" + v, "version": v}
                                         for v in sorted(vs)],
                 "preferredVersion": {"groupVersion": g + "/" + sorted(vs)[0],
                                      "version": sorted(vs)[0]}}
                for g, vs in sorted(groups.items())]}
        if p[1] == "apis":
            g = p[2]
            if g not in groups:
                raise ApiError(404, "NotFound", "the server could not find the requested "
                                                "resource")
            vs = sorted(groups[g])
            return {"kind": "APIGroup", "apiVersion": "v1", "name": g,
                    "versions": [{"groupVersion": g + "/" + v, "version": v} for v in vs],
                    "preferredVersion": {"groupVersion": g + "/" + vs[0], "version": vs[0]}}
        group, version = p[2], p[3]
        verbs = ["create", "delete", "deletecollection", "get", "list", "patch", "update",
                 "watch"]
        resources = []
        entries = [(gp, k, n, True) for gp, (k, n) in BUILTIN_KINDS.items() if gp[0] == group]
        entries += [(gp, i[0], i[1], i[2]) for gp, i in crds.items() if gp[0] == group]
        for gp, kind, namespaced, status in entries:
            resources.append({"name": gp[1], "singularName": kind.lower(),
                              "namespaced": namespaced, "kind": kind, "verbs": verbs})
            if status and STORE.has_status(gp):
                resources.append({"name": gp[1] + "/status", "singularName": "",
                                  "namespaced": namespaced, "kind": kind,
                                  "verbs": ["get", "patch", "update"]})
        gv = version if not group else group + "/" + version
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv,
                "resources": resources}

    def _fake(self, method, path):
        if path in ("/fake/stats", "/fake/stats/"):
            if method == "GET":
                return self._send(200, dumps(STATS.snapshot(STORE, WATCHES)))
            if method == "DELETE":
                STATS.reset()
                return self._send(200, dumps(STATS.snapshot(STORE, WATCHES)))
        if path == "/fake/stats/reset" and method == "POST":
            STATS.reset()
            return self._send(200, dumps(STATS.snapshot(STORE, WATCHES)))
        raise ApiError(404, "NotFound", "unknown fake endpoint %s" % path)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256


def write_stats(path):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(STATS.snapshot(STORE, WATCHES), f, indent=1)
    os.replace(tmp, path)


def main():
    global STORE, OPTS
    ap = argparse.ArgumentParser(description="A stateful in-memory fake Kubernetes API server "
                                             "(see the module docs).")
    ap.add_argument("port", type=int)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--log", action="store_true", help="log every request to stderr")
    ap.add_argument("--stats", metavar="FILE", help="write request statistics to FILE every "
                                                    "2 s and on exit")
    ap.add_argument("--require-crds", action="store_true",
                    help="answer 404 for custom resources whose CRD is not installed")
    ap.add_argument("--watch-cache-size", type=int, default=20000,
                    help="events kept per resource for watches resuming from a "
                         "resourceVersion (older ones get 410 Gone)")
    ap.add_argument("--bookmark-interval", type=float, default=15.0,
                    help="seconds between BOOKMARK events on watches that allow them")
    OPTS = ap.parse_args()
    STORE = Store(OPTS.watch_cache_size, OPTS.require_crds)
    threading.Thread(target=STORE.gc_worker, daemon=True, name="gc").start()
    threading.Thread(target=STORE.controller_loop, daemon=True, name="controllers").start()
    server = Server((OPTS.host, OPTS.port), Handler)

    def stop(signum, frame):
        if OPTS.stats:
            write_stats(OPTS.stats)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if OPTS.stats:
        def writer():
            last = None
            while True:
                time.sleep(2)
                if STATS.version != last:
                    last = STATS.version
                    try:
                        write_stats(OPTS.stats)
                    except OSError as e:
                        sys.stderr.write("fake-apiserver: cannot write stats: %s\n" % e)
        threading.Thread(target=writer, daemon=True, name="stats").start()
    sys.stderr.write("fake-apiserver: serving http://%s:%d\n" % (OPTS.host, OPTS.port))
    server.serve_forever()


if __name__ == "__main__":
    main()
