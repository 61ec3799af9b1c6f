"""A real SMTP server for the email tests: aiosmtpd with STARTTLS required and AUTH required.

Usage: smtp.py PORT CERT KEY OUTDIR USER PASSWORD TLS_PORT
On TLS_PORT the same server speaks TLS from the first byte (smtps) instead of STARTTLS.
Each accepted message is written to OUTDIR as N.eml, after an X-Rcpt-To header naming its
recipients. A recipient whose address starts with "refused" is refused with 550; one that starts
with "bounce" takes its first message and refuses the later ones with a 550 naming a person. The server exits
when its standard input closes (the test process that started it ended).
"""
import logging
import os
import ssl
import sys
import threading
import warnings

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult

# aiosmtpd logs a warning about its own use of a deprecated attribute on every login.
logging.getLogger("mail.log").setLevel(logging.ERROR)
# The smtps server is TLS from its first byte, which aiosmtpd's warning does not know.
warnings.filterwarnings("ignore", message="Requiring AUTH while not requiring TLS")

port, cert, key, outdir, user, password, tls_port = sys.argv[1:8]


class Recorder:
    def __init__(self):
        self.count = 0
        self.lock = threading.Lock()
        self.seen = {}

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address.lower().startswith("refused"):
            return "550 5.1.1 no such mailbox here"
        with self.lock:
            self.seen[address] = self.seen.get(address, 0) + 1
            later = self.seen[address] > 1
        if address.lower().startswith("bounce") and later:
            return "550 5.2.1 mailbox of Jane Roe (employee 4711) is disabled"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        with self.lock:
            self.count += 1
            n = self.count
        path = os.path.join(outdir, f"{n}.eml")
        with open(path + ".tmp", "wb") as f:
            f.write(("X-Rcpt-To: " + ", ".join(envelope.rcpt_tos) + "\r\n").encode())
            f.write(("X-Mail-From: " + envelope.mail_from + "\r\n").encode())
            f.write(envelope.original_content)
        os.rename(path + ".tmp", path)
        return "250 Message accepted for delivery"


def authenticator(server, session, envelope, mechanism, auth_data):
    ok = (
        auth_data is not None
        and auth_data.login.decode() == user
        and auth_data.password.decode() == password
    )
    return AuthResult(success=ok, handled=False, auth_data=auth_data)


context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
context.load_cert_chain(cert, key)
recorder = Recorder()
controllers = [
    Controller(
        recorder,
        hostname="127.0.0.1",
        port=int(port),
        server_hostname="localhost",
        tls_context=context,
        require_starttls=True,
        authenticator=authenticator,
        auth_required=True,
    ),
    Controller(
        recorder,
        hostname="127.0.0.1",
        port=int(tls_port),
        server_hostname="localhost",
        ssl_context=context,
        authenticator=authenticator,
        auth_required=True,
        # aiosmtpd counts only STARTTLS as encryption; this connection is TLS from its first byte.
        auth_require_tls=False,
    ),
]
for controller in controllers:
    controller.start()
print("ready", flush=True)
sys.stdin.read()
for controller in controllers:
    controller.stop()
