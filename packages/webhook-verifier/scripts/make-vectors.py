#!/usr/bin/env python3
"""Regenerates test/vectors.json: the fixed signature vectors of the verifier's test suite.

The HMACs are computed here, with Python's hmac/hashlib, so that the TypeScript code under test
never produces its own expected values. The expected outcomes are written by hand below.

Usage: python3 scripts/make-vectors.py   (from packages/webhook-verifier; writes test/vectors.json)
"""

import hashlib
import hmac
import json
import os

NOW = 1700000000
TOLERANCE = 300
SECRET = "whsec_dGVzdC1zZWNyZXQtMDEyMzQ1Njc4OWFiY2RlZmdoaWo="
OLD_SECRET = "whsec_b2xkLXNlY3JldC1yb3RhdGVkLWF3YXktMDAwMDAwMDA="
WRONG_SECRET = "whsec_d3Jvbmctc2VjcmV0LW5vdC10aGUtZW5kcG9pbnQncw=="

EVENT = (
    '{"id":"evt_01HZX3W5K2","object":"event","type":"contact.created","created":1700000000,'
    '"data":{"id":"con_01HZX3W5K0","object":"contact","name":"Ada Lovelace","email":"ada@example.com"}}'
)
UPDATED = (
    '{"id":"evt_01HZX3W5K3","object":"event","type":"ticket.updated","created":1700000000,'
    '"data":{"id":"tkt_01HZX3W5K1","object":"ticket","subject":"Printer on fire","status":"Solved"},'
    '"previous_attributes":{"status":"New"}}'
)
NON_ASCII = (
    '{"id":"evt_01HZX3W5K4","object":"event","type":"message.received","created":1700000000,'
    '"data":{"id":"msg_01HZX3W5K5","object":"message","body":"Zoë, 東京からこんにちは 🎉 — ça va?"}}'
)
UNKNOWN = (
    '{"id":"evt_01HZX3W5K8","object":"event","type":"invoice.payment_failed","created":1700000000,'
    '"data":{"id":"inv_01HZX3W5K9","object":"invoice","amount_due":4200},"previous_attributes":{"status":"open"},'
    '"livemode":false}'
)
# The 1 MiB body is stored as a recipe: prefix + repeat * times + suffix.
BIG_PREFIX = (
    '{"id":"evt_01HZX3W5K6","object":"event","type":"conversation.assigned","created":1700000000,'
    '"data":{"id":"conv_01HZX3W5K7","object":"conversation","note":"'
)
BIG_SUFFIX = '"}}'
BIG_REPEAT = "ab€"
BIG_TIMES = (1024 * 1024 - len((BIG_PREFIX + BIG_SUFFIX).encode())) // len(BIG_REPEAT.encode())


def body_bytes(payload):
    if "text" in payload:
        return payload["text"].encode("utf-8")
    if "hex" in payload:
        return bytes.fromhex(payload["hex"])
    return (payload.get("prefix", "") + payload["repeat"] * payload["times"] + payload.get("suffix", "")).encode(
        "utf-8"
    )


def v1(secret, t, body):
    return hmac.new(secret.encode("utf-8"), str(t).encode() + b"." + body, hashlib.sha256).hexdigest()


def header(secret, t, body, secrets=None):
    return "t=%s," % t + ",".join("v1=" + v1(s, t, body) for s in (secrets or [secret]))


text = {"text": EVENT}
eb = EVENT.encode()
sig = v1(SECRET, NOW, eb)
ok = {"ok": True, "timestamp": NOW}


def err(code):
    return {"error": code}


vectors = []


def add(name, header_value, expected, payload=text, secret=SECRET, event=None, **extra):
    v = {"name": name, "secret": secret, "payload": payload, "header": header_value, "expected": expected}
    if "ok" in expected:
        v["event"] = event if event is not None else {"type": "contact.created"}
    v.update(extra)
    vectors.append(v)


# Authentic deliveries.
add("valid", header(SECRET, NOW, eb), ok)
add("valid updated event with previous_attributes", header(SECRET, NOW, UPDATED.encode()), ok,
    payload={"text": UPDATED}, event={"type": "ticket.updated"})
add("past, exactly at tolerance", header(SECRET, NOW - TOLERANCE, eb), {"ok": True, "timestamp": NOW - TOLERANCE})
add("future, exactly at tolerance", header(SECRET, NOW + TOLERANCE, eb), {"ok": True, "timestamp": NOW + TOLERANCE})
add("stale: tolerance + 1 s", header(SECRET, NOW - TOLERANCE - 1, eb), err("timestamp_out_of_tolerance"))
add("future: tolerance + 1 s", header(SECRET, NOW + TOLERANCE + 1, eb), err("timestamp_out_of_tolerance"))
add("custom tolerance 10 s, 11 s old", header(SECRET, NOW - 11, eb), err("timestamp_out_of_tolerance"),
    toleranceSeconds=10)
add("stale and forged: mismatch wins", "t=%d,v1=%s" % (NOW - 10000, "0" * 64), err("signature_mismatch"))

# Tampering and secrets.
tampered = EVENT.replace("Ada", "Adb")
add("body tampered by one byte", header(SECRET, NOW, eb), err("signature_mismatch"), payload={"text": tampered})
add("timestamp tampered", "t=%d,v1=%s" % (NOW + 1, sig), err("signature_mismatch"))
add("wrong secret", header(WRONG_SECRET, NOW, eb), err("signature_mismatch"))
add("rotation: signed with the new secret, receiver knows old and new", header(SECRET, NOW, eb), ok,
    secret=[OLD_SECRET, SECRET])
add("rotation: signed with the old secret, receiver knows old and new", header(OLD_SECRET, NOW, eb), ok,
    secret=[OLD_SECRET, SECRET])
add("rotation: sender signs with both, receiver knows one", header(None, NOW, eb, [OLD_SECRET, SECRET]), ok)
add("rotation: no secret matches", header(SECRET, NOW, eb), err("signature_mismatch"),
    secret=[OLD_SECRET, WRONG_SECRET])
add("empty secret", header(SECRET, NOW, eb), err("missing_secret"), secret="")
add("no secrets", header(SECRET, NOW, eb), err("missing_secret"), secret=[])
add("one of the secrets empty", header(SECRET, NOW, eb), err("missing_secret"), secret=[SECRET, ""])

# Header grammar.
add("several v1, the matching one last", "t=%d,v1=%s,v1=%s" % (NOW, "ab" * 32, sig), ok)
add("several v1, none matching", "t=%d,v1=%s,v1=%s" % (NOW, "ab" * 32, "cd" * 32), err("signature_mismatch"))
add("unknown items ignored", "t=%d,v0=deadbeef,v1=%s,scheme=x=y,v2=zz" % (NOW, sig), ok)
add("items in reverse order", "v1=%s,t=%d" % (sig, NOW), ok)
add("whitespace around keys and values", "  t = %d ,\tv1 =  %s  " % (NOW, sig), ok)
add("empty items tolerated", "t=%d,,v1=%s," % (NOW, sig), ok)
add("uppercase hex accepted", "t=%d,v1=%s" % (NOW, sig.upper()), ok)
add("missing header (absent)", None, err("missing_header"))
add("empty header", "", err("missing_header"))
add("whitespace-only header", "   ", err("missing_header"))
add("item without =", "t=%d,v1=%s,garbage" % (NOW, sig), err("malformed_header"))
add("not key=value at all", "nonsense", err("malformed_header"))
add("empty key", "t=%d,=%s" % (NOW, sig), err("malformed_header"))
add("two t items", "t=%d,t=%d,v1=%s" % (NOW, NOW, sig), err("malformed_header"))
add("semicolon separated", "t=%d;v1=%s" % (NOW, sig), err("invalid_timestamp"))
add("missing t", "v1=%s" % sig, err("missing_timestamp"))
for name, t in [("empty", ""), ("letters", "abc"), ("decimal point", "1700000000.5"), ("negative", "-1700000000"),
                ("plus sign", "+1700000000"), ("exponent", "1.7e9"), ("hex", "0x6553f100"),
                ("too many digits", "1" * 16)]:
    add("invalid timestamp: " + name, "t=%s,v1=%s" % (t, sig), err("invalid_timestamp"))
add("missing v1", "t=%d" % NOW, err("missing_signature"))
add("only a v0 signature", "t=%d,v0=%s" % (NOW, sig), err("missing_signature"))
add("v1 of 63 hex digits", "t=%d,v1=%s" % (NOW, sig[:63]), err("invalid_signature_format"))
add("v1 of 65 hex digits", "t=%d,v1=%s0" % (NOW, sig), err("invalid_signature_format"))
add("v1 with a non-hex digit", "t=%d,v1=%sg" % (NOW, sig[:63]), err("invalid_signature_format"))
add("empty v1", "t=%d,v1=" % NOW, err("invalid_signature_format"))
add("one good and one malformed v1", "t=%d,v1=%s,v1=xyz" % (NOW, sig), err("invalid_signature_format"))
add("base64 signature instead of hex", "t=%d,v1=%s" % (NOW, "A" * 43 + "="), err("invalid_signature_format"))
add("16 v1 items, last one matching", "t=%d," % NOW + ",".join(["v1=" + "ab" * 32] * 15 + ["v1=" + sig]), ok)
add("17 v1 items", "t=%d," % NOW + ",".join(["v1=" + "ab" * 32] * 16 + ["v1=" + sig]), err("too_many_signatures"))
exact = "t=%d,v1=%s,pad=" % (NOW, sig)
add("header of exactly 8192 characters", exact + "x" * (8192 - len(exact)), ok)
add("header of 8193 characters", exact + "x" * (8193 - len(exact)), err("malformed_header"))

# Payloads.
add("empty payload", header(SECRET, NOW, b""), ok, payload={"text": ""}, event={"error": "invalid_payload"})
add("non-ASCII payload", header(SECRET, NOW, NON_ASCII.encode()), ok, payload={"text": NON_ASCII},
    event={"type": "message.received"})
big = {"prefix": BIG_PREFIX, "repeat": BIG_REPEAT, "times": BIG_TIMES, "suffix": BIG_SUFFIX}
add("1 MiB payload", header(SECRET, NOW, body_bytes(big)), ok, payload=big, event={"type": "conversation.assigned"})
raw = bytes([0x7B, 0xFF, 0xFE, 0x00, 0x80, 0x7D])
add("bytes that are not UTF-8 are hashed as bytes", header(SECRET, NOW, raw), ok, payload={"hex": raw.hex()},
    event={"error": "invalid_payload"}, bytesOnly=True)
bom = "\ufeff" + EVENT
add("byte order mark is part of the signed bytes", header(SECRET, NOW, EVENT.encode()), err("signature_mismatch"),
    payload={"text": bom})
# Forward compatibility: types are added within v1, and a receiver must not fail on them.
add("authentic event of a type this version does not know", header(SECRET, NOW, UNKNOWN.encode()), ok,
    payload={"text": UNKNOWN}, event={"type": "invoice.payment_failed"})
crlf = EVENT.replace(",", ",\r\n")
add("CRLF body verified byte for byte", header(SECRET, NOW, crlf.encode()), ok, payload={"text": crlf})
for name, body in [("not JSON", "hello"), ("JSON array", "[]"), ("JSON null", "null"),
                   ("wrong object", EVENT.replace('"object":"event"', '"object":"evnt"')),
                   ("id without evt_", EVENT.replace("evt_", "xyz_")),
                   ("type not a resource.action name", EVENT.replace("contact.created", "ContactCreated")),
                   ("type with a space", EVENT.replace("contact.created", "contact.created ")),
                   ("type not a string", EVENT.replace('"contact.created"', "7")),
                   ("unknown type whose data names no object", UNKNOWN.replace('"object":"invoice",', "")),
                   ("data.object not matching the type", EVENT.replace('"object":"contact"', '"object":"ticket"')),
                   ("created not an integer", EVENT.replace("1700000000", "1700000000.5", 1)),
                   ("data missing", '{"id":"evt_1","object":"event","type":"ticket.created","created":1}'),
                   ("previous_attributes not an object", UPDATED.replace('{"status":"New"}', '"New"'))]:
    add("authentic but " + name, header(SECRET, NOW, body.encode()), ok, payload={"text": body},
        event={"error": "invalid_payload"})

sign = [
    {"payload": {"text": EVENT}, "secret": SECRET, "timestamp": NOW, "header": header(SECRET, NOW, eb)},
    {"payload": {"text": NON_ASCII}, "secret": SECRET, "timestamp": 1,
     "header": header(SECRET, 1, NON_ASCII.encode())},
    {"payload": {"text": ""}, "secret": OLD_SECRET, "timestamp": NOW, "header": header(OLD_SECRET, NOW, b"")},
    {"payload": {"hex": raw.hex()}, "secret": SECRET, "timestamp": NOW, "header": header(SECRET, NOW, raw)},
    {"payload": big, "secret": [OLD_SECRET, SECRET], "timestamp": NOW,
     "header": header(None, NOW, body_bytes(big), [OLD_SECRET, SECRET])},
    # A rotation: one v1 per secret, in the order given, as the server signs during a grace period.
    {"payload": {"text": EVENT}, "secret": [SECRET, OLD_SECRET], "timestamp": NOW,
     "header": header(None, NOW, eb, [SECRET, OLD_SECRET])},
    {"payload": {"text": UPDATED}, "secret": [WRONG_SECRET, SECRET, OLD_SECRET], "timestamp": NOW,
     "header": header(None, NOW, UPDATED.encode(), [WRONG_SECRET, SECRET, OLD_SECRET])},
]

out = {
    "_comment": "Generated by scripts/make-vectors.py (Python hmac/hashlib); do not edit by hand.",
    "now": NOW,
    "toleranceSeconds": TOLERANCE,
    "vectors": vectors,
    "sign": sign,
}
names = [v["name"] for v in vectors]
assert len(names) == len(set(names)), "vector names must be unique"
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "vectors.json")
with open(path, "w", encoding="utf-8") as f:
    json.dump(out, f, indent=1, ensure_ascii=False)
    f.write("\n")
print("wrote %d vectors and %d signing cases to test/vectors.json" % (len(vectors), len(sign)))
