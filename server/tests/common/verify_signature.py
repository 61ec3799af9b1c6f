"""Checks a signed webhook as the README's "Channels" section tells a receiver to, with Python's
own hmac: `Klaxon-Signature: t=<unix seconds>,v1=<hex>`, where the hex is HMAC-SHA256 keyed with
the signing secret over the bytes "<t>." followed by the raw body; a `t` further than the replay
window from the receiver's clock is refused. Written from the documentation, not from Klaxon's
code, so a test that passes it shows the documentation is enough to verify a delivery.

Usage: verify_signature.py SECRET HEADER NOW WINDOW < body; prints ok, stale or mismatch.
"""
import hashlib
import hmac
import sys

secret, header, now, window = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
body = sys.stdin.buffer.read()
fields = dict(part.split("=", 1) for part in header.split(","))
t = int(fields["t"])
if abs(now - t) > window:
    print("stale")
    sys.exit(1)
expected = hmac.new(secret.encode(), str(t).encode() + b"." + body, hashlib.sha256).hexdigest()
if not hmac.compare_digest(expected, fields.get("v1", "")):
    print("mismatch")
    sys.exit(1)
print("ok")
