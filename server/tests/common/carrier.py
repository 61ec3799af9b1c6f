"""A stand-in carrier for the phone roads: it speaks the APIs Klaxon calls and plays the phone
network back, signing every callback with implementations that are not Klaxon's.

- Twilio's REST API, version 2010-04-01 (https://www.twilio.com/docs/messaging/api/message-resource,
  https://www.twilio.com/docs/voice/api/call-resource): form POSTs to
  /2010-04-01/Accounts/{AccountSid}/Messages.json and .../Calls.json with HTTP Basic auth by the
  account SID and auth token, answered 201 with the resource's JSON (`sid`, `status`).
- Twilio's request signing (https://www.twilio.com/docs/usage/security#validating-requests): the
  callbacks are signed by PyPI `twilio`'s RequestValidator over the URL Klaxon gave and the form.
- TwiML (https://www.twilio.com/docs/voice/twiml): Klaxon's answers are read with the standard
  library's XML parser and compared with what `twilio.twiml.voice_response.VoiceResponse` writes
  for the same menu.
- SMS Gateway for Android (https://docs.sms-gate.app/features/sending-messages/,
  .../features/webhooks/): POST {base}/messages with Basic auth, answered 202; webhooks signed
  with X-Signature = hex HMAC-SHA256(signing key, raw body + X-Timestamp).

Usage: carrier.py PORT ACCOUNT_SID AUTH_TOKEN GATEWAY_USER GATEWAY_PASSWORD GATEWAY_KEY
PUBLIC_URL. Prints "ready". Callbacks to URLs under PUBLIC_URL go to the base given with each
command (as a reverse proxy would), signed over the public URL.
  GET  /records                  -> every accepted request: {"api", "form" | "json", "sid"}
  POST /fail?to=N&code=C&status=S -> later texts and calls to N answer S with Twilio error C
  POST /twilio/post {"url", "params", "base", "signature"?} -> posts the form to url, signed
        (or with the signature given); answers {"status", "body", "xml"} (xml: the TwiML read)
  POST /twilio/menu-reference {"said", "keys", "action"} -> {"xml"} as VoiceResponse writes it
  POST /gateway/post {"url", "body", "base", "timestamp", "key"?} -> posts the event signed
The server exits when its standard input closes.
"""
import base64
import hashlib
import hmac
import json
import sys
import threading
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, parse_qsl, urlparse

from twilio.request_validator import RequestValidator
from twilio.twiml.voice_response import Gather, VoiceResponse

port = int(sys.argv[1])
sid, token = sys.argv[2], sys.argv[3]
gw_user, gw_password, gw_key = sys.argv[4], sys.argv[5], sys.argv[6]
public = sys.argv[7].rstrip("/")
validator = RequestValidator(token)
lock = threading.Lock()
records = []
failing = {}  # number -> (status, code)


def tree(xml):
    """A TwiML document as nested (tag, attributes, text, children), for comparing."""
    def walk(e):
        return [e.tag, dict(sorted(e.attrib.items())), (e.text or "").strip(), [walk(c) for c in e]]
    return walk(ET.fromstring(xml))


def send(url, data, headers, base):
    """POSTs to a public URL through `base`, as a proxy in front of Klaxon would."""
    target = base.rstrip("/") + url[len(public):] if url.startswith(public) else url
    req = urllib.request.Request(target, data=data, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            return res.status, res.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        return self.rfile.read(int(self.headers.get("content-length", 0)))

    def basic(self, user, password):
        want = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        return hmac.compare_digest(self.headers.get("authorization", ""), want)

    def do_GET(self):
        if self.path == "/records":
            with lock:
                return self.answer(200, records)
        self.answer(404, {})

    def do_POST(self):
        u = urlparse(self.path)
        raw = self.body()
        if u.path == f"/2010-04-01/Accounts/{sid}/Messages.json" or u.path == f"/2010-04-01/Accounts/{sid}/Calls.json":
            if not self.basic(sid, token):
                return self.answer(401, {"code": 20003, "message": "Authenticate", "status": 401})
            form = dict(parse_qsl(raw.decode(), keep_blank_values=True))
            api = "messages" if u.path.endswith("Messages.json") else "calls"
            with lock:
                fail = failing.get(form.get("To"))
                if fail:
                    return self.answer(fail[0], {"code": fail[1], "message": "refused", "status": fail[0]})
                made = ("SM" if api == "messages" else "CA") + hashlib.sha1(f"{len(records)}".encode()).hexdigest()[:32]
                records.append({"api": api, "form": form, "sid": made})
            return self.answer(201, {"sid": made, "status": "queued", "to": form.get("To")})
        if u.path == "/gateway/messages":
            if not self.basic(gw_user, gw_password):
                return self.answer(401, {"message": "Unauthorized"})
            body = json.loads(raw)
            with lock:
                records.append({"api": "gateway", "json": body, "sid": body.get("id")})
            return self.answer(202, {"id": body.get("id"), "state": "Pending"})
        if u.path == "/fail":
            q = parse_qs(u.query)
            with lock:
                failing[q["to"][0]] = (int(q["status"][0]), int(q["code"][0]))
            return self.answer(200, {})
        if u.path == "/twilio/post":
            cmd = json.loads(raw)
            params = {k: str(v) for k, v in cmd["params"].items()}
            signature = cmd.get("signature") or validator.compute_signature(cmd["url"], params)
            data = "&".join(
                f"{urllib.parse.quote(k, safe='')}={urllib.parse.quote(v, safe='')}" for k, v in params.items()
            ).encode()
            headers = {"content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signature}
            if cmd.get("unsigned"):
                del headers["x-twilio-signature"]
            status, text = send(cmd["url"], data, headers, cmd["base"])
            xml = tree(text) if text.startswith("<?xml") else None
            return self.answer(200, {"status": status, "body": text, "xml": xml})
        if u.path == "/twilio/menu-reference":
            cmd = json.loads(raw)
            r = VoiceResponse()
            g = Gather(action=cmd["action"], method="POST", num_digits=1, timeout=8)
            g.say(cmd["said"])
            g.say(cmd["keys"])
            r.append(g)
            g2 = Gather(action=cmd["action"], method="POST", num_digits=1, timeout=8)
            g2.say(cmd["keys"])
            r.append(g2)
            r.say("No key was pressed. Goodbye.")
            return self.answer(200, {"xml": tree(str(r))})
        if u.path == "/gateway/post":
            cmd = json.loads(raw)
            body = json.dumps(cmd["body"]).encode()
            ts = str(cmd["timestamp"])
            sig = hmac.new((cmd.get("key") or gw_key).encode(), body + ts.encode(), hashlib.sha256).hexdigest()
            headers = {"content-type": "application/json", "x-signature": sig, "x-timestamp": ts}
            status, text = send(cmd["url"], body, headers, cmd["base"])
            return self.answer(200, {"status": status, "body": text})
        self.answer(404, {})


import urllib.parse  # noqa: E402  (quote, used above)

server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
print("ready", flush=True)
sys.stdin.read()
