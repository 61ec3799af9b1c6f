"""Signs a Discord interaction as Discord does: Ed25519 over the timestamp followed by the body
(https://discord.com/developers/docs/interactions/overview#setting-up-an-endpoint-validating-security-request-headers),
with PyPI `cryptography`, not Klaxon's code.

  discord_sign.py SEED_HEX public          prints the public key (hex)
  discord_sign.py SEED_HEX TIMESTAMP < body prints the signature (hex)
"""
import sys

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(sys.argv[1]))
if sys.argv[2] == "public":
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    print(raw.hex())
else:
    print(key.sign(sys.argv[2].encode() + sys.stdin.buffer.read()).hex())
