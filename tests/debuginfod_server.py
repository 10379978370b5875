#!/usr/bin/env python3
"""Misbehaving debuginfod servers for tests/e2e/debuginfod.sh.

Binds 127.0.0.1 on a free port and writes the port to --port-file (whole,
by rename). --mode:
  file    answers GET /buildid/ID/debuginfo with --file (the debug file
          of another build, or one padded past a size limit) when ID is
          --build-id; every other path or ID gets 404
  silent  accepts connections and reads the requests, never answers
  closed  binds the port but never listens: a connect is refused, and no
          other program can take the port meanwhile
Each request (or accepted connection) appends one line to --log:
"GET PATH STATUS" (file), "GET PATH -" (silent). Exits on SIGTERM.
"""
import argparse
import os
import signal
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def log_line(path, text):
    with open(path, "a", encoding="utf-8") as f:
        f.write(text + "\n")


class FileHandler(BaseHTTPRequestHandler):
    def do_GET(self):
        srv = self.server
        parts = self.path.split("/")
        if parts[1:] != ["buildid", srv.build_id, "debuginfo"]:
            log_line(srv.log, "GET %s 404" % self.path)
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        size = os.path.getsize(srv.file)
        log_line(srv.log, "GET %s 200" % self.path)
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(size))
        self.end_headers()
        # Streamed: a client that stops reading at a size limit closes
        # the connection, which ends this.
        try:
            with open(srv.file, "rb") as f:
                while True:
                    chunk = f.read(65536)
                    if not chunk:
                        break
                    self.wfile.write(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, fmt, *args):
        pass  # --log is the record


def serve_file(sock_addr, args):
    srv = ThreadingHTTPServer(sock_addr, FileHandler)
    srv.daemon_threads = True
    srv.file = args.file
    srv.build_id = args.build_id
    srv.log = args.log
    return srv.server_address[1], srv.serve_forever


def hold(conn, log):
    """Reads what the client sends and never answers, until it hangs up."""
    first = True
    try:
        while True:
            data = conn.recv(65536)
            if not data:
                break
            if first:
                line = data.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
                log_line(log, "%s %s -" % (line[0], line[1] if len(line) > 1 else "?"))
                first = False
    except OSError:
        pass


def serve_silent(sock_addr, args):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(sock_addr)
    s.listen(16)

    def loop():
        while True:
            conn, _ = s.accept()
            threading.Thread(target=hold, args=(conn, args.log), daemon=True).start()
    return s.getsockname()[1], loop


def serve_closed(sock_addr, args):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(sock_addr)
    # Kept referenced: the port stays bound, and connects are refused.
    serve_closed.sock = s

    def loop():
        signal.pause()
    return s.getsockname()[1], loop


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", required=True, choices=("file", "silent", "closed"))
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", default=os.devnull)
    ap.add_argument("--file")
    ap.add_argument("--build-id")
    args = ap.parse_args()
    if args.mode == "file" and not (args.file and args.build_id):
        ap.error("--mode file needs --file and --build-id")
    if args.log != os.devnull:
        open(args.log, "w").close()

    start = {"file": serve_file, "silent": serve_silent, "closed": serve_closed}
    port, loop = start[args.mode](("127.0.0.1", 0), args)

    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % port)
    os.rename(tmp, args.port_file)

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    loop()


if __name__ == "__main__":
    main()
