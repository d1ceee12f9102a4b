"""Conformance against real recorded provider traffic: every recording replayed through a loopback server into the
matching real hookloop client, in a full Worker run, compared with what the recording holds.

Run it alone (prints one PASS/FAIL row per recording; exit status 1 when one fails)::

    scripts/conformance [--strict] [-v] [NAME ...]

Layers, each a module:

- :mod:`.recording` — the recording file shape (both folders), the request text normalisation, the
  recordings folders (``HOOKLOOP_RECORDINGS``, else ``../shared/provider-recordings`` next to the repository,
  plus this repository's own ``tests/recordings/``).
- :mod:`.oracle` — what a recorded reply says, read independently of hookloop's clients (reply text,
  reasoning, tool calls, stop reason, usage, or the error class and retryable flag it must produce).
- :mod:`.replay` — the loopback HTTP/1.1 server answering the recorded replies in order, byte for byte.
- :mod:`.compare` — the canonical form of a request's conversation and the comparison rules (see its docstring:
  what counts and what does not).
- :mod:`.scenarios` — the few recordings that need a note (a framework that edited its history between
  requests, an id renamed by the recording framework) and the known-failing marks.
- :mod:`.harness` — one recording end to end: the Worker, its tools, its runs, the verdict.
"""
