"""Schemathesis hooks for Deskline, loaded by the repository's schemathesis.toml.

One hook: each request gets an `Idempotency-Key` of its own. The spec says a key is one per
logical request (the same key with another request is `422 idempotency_key_reused`, by design),
but a generator draws header values from the schema alone, so two different requests often
carry the same drawn key ("0", a boundary value). A client that follows the spec makes a fresh
key per request; so does the fuzzer, here. Keys the schema refuses are left as drawn, so the
negative cases still test that the server refuses them.
"""

import re
import uuid

import schemathesis

# The `Idempotency-Key` schema of spec/openapi.yaml: 1-255 characters, bare or quoted.
VALID_KEY = re.compile(r'(?:"[^"]{1,255}"|[^"]{1,255})')


@schemathesis.hook
def before_call(context, case, **kwargs):
    headers = case.headers or {}
    for name, value in headers.items():
        if name.lower() == "idempotency-key" and isinstance(value, str) and VALID_KEY.fullmatch(value):
            headers[name] = str(uuid.uuid4())
