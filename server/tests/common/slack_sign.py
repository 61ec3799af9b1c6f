"""Signs a request as Slack signs the requests of an app
(https://api.slack.com/authentication/verifying-requests-from-slack): the basestring
"v0:<timestamp>:<body>", HMAC-SHA256 keyed with the app's signing secret, sent as
`X-Slack-Signature: v0=<hex>` beside `X-Slack-Request-Timestamp`. Written from that page with
Python's own hmac, not from Klaxon's code.

Usage: slack_sign.py SECRET TIMESTAMP < body; prints the header's value.
"""
import hashlib
import hmac
import sys

secret, timestamp = sys.argv[1], sys.argv[2]
body = sys.stdin.buffer.read()
base = b"v0:" + timestamp.encode() + b":" + body
print("v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest())
