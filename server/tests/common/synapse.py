"""A real Matrix homeserver for the team-channel tests: Synapse (PyPI matrix-synapse) on SQLite
in a directory of its own, bound to 127.0.0.1.

It registers, with the shared-secret registration API, an admin, a bot whose message rate is not
limited (an admin override) and bots left to the server's low message limit (0.5 a second after
a burst of 3, so a test can meet M_LIMIT_EXCEEDED), then prints one JSON line with the URL and
their access tokens, and serves until its standard input closes (the test binary ended).

Usage: synapse.py PYTHON PORT DIR
"""
import hashlib
import hmac
import json
import os
import subprocess
import sys
import time
import urllib.request

python, port, root = sys.argv[1], int(sys.argv[2]), sys.argv[3]
secret = "klaxon-test-registration"
base = f"http://127.0.0.1:{port}"
os.makedirs(os.path.join(root, "media"), exist_ok=True)
generous = "{per_second: 1000, burst_count: 1000}"
with open(os.path.join(root, "homeserver.yaml"), "w") as f:
    f.write(f"""server_name: localhost
pid_file: {root}/homeserver.pid
listeners:
  - port: {port}
    bind_addresses: ['127.0.0.1']
    type: http
    tls: false
    x_forwarded: false
    resources:
      - names: [client]
        compress: false
database:
  name: sqlite3
  args:
    database: {root}/homeserver.db
media_store_path: {root}/media
signing_key_path: {root}/signing.key
registration_shared_secret: "{secret}"
report_stats: false
trusted_key_servers: []
suppress_key_server_warning: true
presence:
  enabled: false
rc_message: {{per_second: 0.5, burst_count: 3}}
rc_login:
  address: {generous}
  account: {generous}
  failed_attempts: {generous}
rc_registration: {generous}
rc_joins:
  local: {generous}
  remote: {generous}
rc_invites:
  per_room: {generous}
  per_user: {generous}
  per_issuer: {generous}
rc_room_creation: {generous}
rc_admin_redaction: {generous}
""")

log = open(os.path.join(root, "synapse.log"), "w")
server = subprocess.Popen(
    [python, "-m", "synapse.app.homeserver", "-c", os.path.join(root, "homeserver.yaml")],
    stdout=log, stderr=subprocess.STDOUT, cwd=root,
)


def call(method, path, body=None, token=None):
    req = urllib.request.Request(base + path, method=method,
                                 data=None if body is None else json.dumps(body).encode())
    req.add_header("content-type", "application/json")
    if token:
        req.add_header("authorization", f"Bearer {token}")
    with urllib.request.urlopen(req, timeout=30) as res:
        return json.loads(res.read() or b"{}")


deadline = time.time() + 120
while True:
    try:
        call("GET", "/_matrix/client/versions")
        break
    except Exception:
        if server.poll() is not None or time.time() > deadline:
            print(json.dumps({"error": "synapse did not start; see " + log.name}), flush=True)
            sys.exit(1)
        time.sleep(0.2)


def register(user, admin=False):
    nonce = call("GET", "/_synapse/admin/v1/register")["nonce"]
    password = user + "-password"
    mac = hmac.new(secret.encode(), digestmod=hashlib.sha1)
    mac.update(b"\x00".join([nonce.encode(), user.encode(), password.encode(),
                             b"admin" if admin else b"notadmin"]))
    return call("POST", "/_synapse/admin/v1/register", {
        "nonce": nonce, "username": user, "password": password, "admin": admin,
        "mac": mac.hexdigest(),
    })["access_token"]


admin = register("admin", admin=True)
bot = register("klaxon")
call("POST", "/_synapse/admin/v1/users/@klaxon:localhost/override_ratelimit",
     {"messages_per_second": 0, "burst_count": 0}, admin)
# One limited bot per test that wants one: a limit is the bot's, and tests run in parallel.
limited = [{"user": f"@limited-{n}:localhost", "token": register(f"limited-{n}")} for n in range(6)]
print(json.dumps({"url": base, "admin": admin, "bot": bot, "bot_user": "@klaxon:localhost",
                  "limited": limited}), flush=True)
sys.stdin.read()
server.terminate()
try:
    server.wait(timeout=10)
except subprocess.TimeoutExpired:
    server.kill()
