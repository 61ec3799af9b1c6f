"""A recording Web Push service for the tests, checking each push with implementations that are
not Klaxon's: PyPI `http_ece` decrypts the RFC 8291 aes128gcm body with the subscription's private
key, and `cryptography` verifies the RFC 8292 VAPID JWT (ES256) against the key in the header.

Usage: webpush.py PORT. Prints "ready" when listening on 127.0.0.1:PORT.
  POST /subscribe            -> {"endpoint", "keys": {"p256dh", "auth"}}: a new subscription
  POST /push/ID              -> what Klaxon calls; answers 201, or the status set for ID
  POST /status/ID?code=N[&retry_after=S] -> later pushes to ID answer N
  GET  /messages             -> every push received: {"id", "ok", "error", "payload", "headers"}
A push that fails a check is recorded with ok false and the reason, and answered 400.
The server exits when its standard input closes (the test process that started it ended).
"""
import base64
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import http_ece
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

port = int(sys.argv[1])
origin = f"http://127.0.0.1:{port}"
lock = threading.Lock()
subscriptions = {}  # id -> (private key, auth secret)
statuses = {}  # id -> (code, retry_after)
messages = []


def b64d(s):
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def b64e(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def check_vapid(header):
    """Checks `vapid t=JWT, k=KEY` (RFC 8292): the ES256 signature, aud, exp and sub."""
    if not header.startswith("vapid "):
        raise ValueError("Authorization is not the vapid scheme")
    params = dict(p.strip().split("=", 1) for p in header[len("vapid "):].split(","))
    token, key = params["t"], params["k"]
    head, claims, sig = token.split(".")
    if json.loads(b64d(head)) != {"typ": "JWT", "alg": "ES256"}:
        raise ValueError("JWT header is not ES256")
    public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), b64d(key))
    raw = b64d(sig)
    if len(raw) != 64:
        raise ValueError("signature is not r||s")
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    try:
        public.verify(der, f"{head}.{claims}".encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        raise ValueError("VAPID signature does not verify")
    c = json.loads(b64d(claims))
    if c.get("aud") != origin:
        raise ValueError(f"aud is {c.get('aud')}, not {origin}")
    now = time.time()
    if not (now < c.get("exp", 0) <= now + 24 * 3600):
        raise ValueError("exp is not within the next 24 hours")
    if not c.get("sub"):
        raise ValueError("no sub claim")
    return key


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, code, body=None, headers=()):
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/messages":
            with lock:
                return self.answer(200, list(messages))
        self.answer(404)

    def do_POST(self):
        url = urlparse(self.path)
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if url.path == "/subscribe":
            key = ec.generate_private_key(ec.SECP256R1())
            auth = os.urandom(16)
            with lock:
                sid = str(len(subscriptions) + 1)
                subscriptions[sid] = (key, auth)
            p256dh = key.public_key().public_bytes(
                serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
            )
            return self.answer(
                200,
                {"endpoint": f"{origin}/push/{sid}", "keys": {"p256dh": b64e(p256dh), "auth": b64e(auth)}},
            )
        if url.path.startswith("/status/"):
            q = parse_qs(url.query)
            with lock:
                statuses[url.path[len("/status/"):]] = (int(q["code"][0]), q.get("retry_after", [None])[0])
            return self.answer(204)
        if url.path.startswith("/push/"):
            sid = url.path[len("/push/"):]
            headers = {k: self.headers.get(k) for k in ("TTL", "Urgency", "Content-Encoding", "Content-Type")}
            record = {"id": sid, "ok": False, "error": None, "payload": None, "headers": headers}
            with lock:
                status = statuses.get(sid)
                sub = subscriptions.get(sid)
            try:
                if sub is None:
                    raise ValueError("no such subscription")
                check_vapid(self.headers.get("Authorization", ""))
                if headers["Content-Encoding"] != "aes128gcm":
                    raise ValueError("Content-Encoding is not aes128gcm")
                if not headers["TTL"]:
                    raise ValueError("no TTL")
                plain = http_ece.decrypt(body, private_key=sub[0], auth_secret=sub[1], version="aes128gcm")
                record["payload"] = json.loads(plain)
                record["ok"] = True
            except Exception as e:  # recorded for the test to see
                record["error"] = f"{type(e).__name__}: {e}"
            with lock:
                messages.append(record)
            if not record["ok"]:
                return self.answer(400, {"error": record["error"]})
            if status:
                code, retry = status
                return self.answer(code, None, [("Retry-After", retry)] if retry else [])
            return self.answer(201, None, [("Location", f"{origin}/message/{len(messages)}")])
        self.answer(404)


server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
print("ready", flush=True)
sys.stdin.read()
