#!/usr/bin/env python3
"""A stand-in Pyroscope server for the push tests.

Binds 127.0.0.1 on a free port, writes the port to --port-file, and for
each POST /ingest appends one JSON line to --log and saves the body as
<log>.<n>.pb.gz (n from 1). The first --fail-first requests get --status
(default 503) instead of 200; --fail-first -1 fails every request. Other
paths get 404. Exits on SIGTERM.

The Authorization header is logged in full: these are test secrets.
"""
import argparse
import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

QUERY_KEYS = ("name", "from", "until", "format", "spyName")


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        if url.path != "/ingest":
            self.reply(404)
            return
        srv = self.server
        with srv.lock:
            srv.count += 1
            n = srv.count
            failing = srv.fail_first < 0 or n <= srv.fail_first
            query = parse_qs(url.query, keep_blank_values=True)
            record = {
                "n": n,
                "time": time.monotonic(),
                "method": self.command,
                "path": url.path,
                "query": {k: query.get(k, [None])[0] for k in QUERY_KEYS},
                "authorization": self.headers.get("Authorization"),
                "content_type": self.headers.get("Content-Type"),
                "user_agent": self.headers.get("User-Agent"),
                "body_len": len(body),
                "status": srv.status if failing else 200,
            }
            with open("%s.%d.pb.gz" % (srv.log, n), "wb") as f:
                f.write(body)
            # The body file exists before its log line: a test that sees
            # the line can read the body.
            with open(srv.log, "a", encoding="utf-8") as f:
                f.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.reply(record["status"])

    def do_GET(self):
        self.reply(404)

    def reply(self, status):
        text = b"ok\n" if status == 200 else b"test server says no\n"
        self.send_response(status)
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        self.wfile.write(text)

    def log_message(self, fmt, *args):
        pass  # the JSON log is the record


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--fail-first", type=int, default=0)
    ap.add_argument("--status", type=int, default=503)
    args = ap.parse_args()

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.lock = threading.Lock()
    srv.count = 0
    srv.fail_first = args.fail_first
    srv.status = args.status
    srv.log = args.log
    open(args.log, "w").close()

    # Written whole under another name, then renamed: a reader never sees
    # a partial port number.
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, args.port_file)

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        srv.serve_forever(poll_interval=0.1)
    finally:
        srv.server_close()


if __name__ == "__main__":
    main()
