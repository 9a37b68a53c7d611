#!/usr/bin/env python3
"""Appends DuckDB's extension metadata footer to a shared library, as DuckDB's scripts/append_metadata.cmake does.

  append_metadata.py FILE PLATFORM CAPI_VERSION EXTENSION_VERSION

The footer is a WebAssembly-style custom section named "duckdb_signature": eight 32-byte fields, written last
to first (magic "4", platform such as linux_amd64, the C API version the extension needs, the extension's
version, the ABI type C_STRUCT, three unused), then 256 bytes of signature, zero here: the extension is
unsigned, and DuckDB loads it only with allow_unsigned_extensions.
"""
import sys


def field(text):
    raw = text.encode("ascii")
    if len(raw) > 32:
        raise SystemExit("metadata field longer than 32 bytes: %r" % text)
    return raw + b"\0" * (32 - len(raw))


def main():
    if len(sys.argv) != 5:
        raise SystemExit("usage: append_metadata.py FILE PLATFORM CAPI_VERSION EXTENSION_VERSION")
    path, platform, capi, version = sys.argv[1:]
    fields = [field("4"), field(platform), field(capi), field(version), field("C_STRUCT"), field(""), field(""),
              field("")]
    # 0: a custom section; 0x93 0x04: LEB128 531, the length of what follows; 0x10: 16, the name's length;
    # 0x80 0x04: LEB128 512, the length of the payload (8 fields of 32 bytes and the 256-byte signature).
    footer = b"\0" + bytes([0x93, 0x04, 0x10]) + b"duckdb_signature" + bytes([0x80, 0x04])
    footer += b"".join(reversed(fields)) + b"\0" * 256
    with open(path, "ab") as f:
        f.write(footer)


if __name__ == "__main__":
    main()
