# A minimal fake Kubernetes API server on loopback for scripts/bench-manager.sh: every list is
# empty and every watch stays open, so a manager starts, syncs its caches and idles.
import json, sys, time, threading
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
from urllib.parse import urlparse, parse_qs

class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a):
        sys.stderr.write("%s %s\n" % (self.command, self.path))
    def do_GET(self):
        u = urlparse(self.path); q = parse_qs(u.query)
        parts = u.path.strip("/").split("/")
        kind = parts[-1]
        if q.get("watch") == ["true"] or q.get("watch") == ["1"]:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            try:
                while True:
                    time.sleep(30)
            except Exception:
                return
        body = json.dumps({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": "1"}, "items": []}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
