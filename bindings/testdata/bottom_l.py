"""The SQL discovery aggregates' per-unit reduction (bindings/SQL.md, "Bounded memory"), written again from
its specification for the engines' tests: each unit keeps its L distinct items with the smallest
SipHash-2-4(unit, item) under the fixed public key (ties broken by the item). The tests predict from it which
items a group keeps, and so which items a top-k at a very large epsilon releases, whatever the row order or
the engine's parallel split.

  python3 bottom_l.py UNITS ITEMS L   prints "item count" lines for UNITS units that each have ITEMS items
                                      1..ITEMS: how many units keep each item (for tests in shell)
"""
import struct
import sys

MASK = (1 << 64) - 1
KEY0 = struct.unpack("<Q", b"dpmo-sql")[0]
KEY1 = struct.unpack("<Q", b"-bottomL")[0]


def _rotl(x, b):
    return ((x << b) | (x >> (64 - b))) & MASK


def _round(v0, v1, v2, v3):
    v0 = (v0 + v1) & MASK; v1 = _rotl(v1, 13); v1 ^= v0; v0 = _rotl(v0, 32)
    v2 = (v2 + v3) & MASK; v3 = _rotl(v3, 16); v3 ^= v2
    v0 = (v0 + v3) & MASK; v3 = _rotl(v3, 21); v3 ^= v0
    v2 = (v2 + v1) & MASK; v1 = _rotl(v1, 17); v1 ^= v2; v2 = _rotl(v2, 32)
    return v0, v1, v2, v3


def siphash24(words, k0=KEY0, k1=KEY1):
    """SipHash-2-4 of the little-endian bytes of 64-bit words (the reference algorithm, key (k0, k1))."""
    v0, v1 = k0 ^ 0x736f6d6570736575, k1 ^ 0x646f72616e646f6d
    v2, v3 = k0 ^ 0x6c7967656e657261, k1 ^ 0x7465646279746573
    for w in words:
        w &= MASK
        v3 ^= w
        v0, v1, v2, v3 = _round(v0, v1, v2, v3)
        v0, v1, v2, v3 = _round(v0, v1, v2, v3)
        v0 ^= w
    b = ((8 * len(words)) & 0xff) << 56
    v3 ^= b
    v0, v1, v2, v3 = _round(v0, v1, v2, v3)
    v0, v1, v2, v3 = _round(v0, v1, v2, v3)
    v0 ^= b
    v2 ^= 0xff
    for _ in range(4):
        v0, v1, v2, v3 = _round(v0, v1, v2, v3)
    return v0 ^ v1 ^ v2 ^ v3


def kept_items(unit, items, L):
    """The items (a set of ints) a unit keeps."""
    return sorted(set(items), key=lambda i: (siphash24([unit, i]), i & MASK))[:L]


def kept_counts(units_items, L):
    """{item: number of units keeping it} for {unit: iterable of items}."""
    counts = {}
    for u, items in units_items.items():
        for i in kept_items(u, items, L):
            counts[i] = counts.get(i, 0) + 1
    return counts


def _selftest():
    # the reference vector of SipHash-2-4 (Aumasson & Bernstein, Appendix A): key 00..0f, message 00..0e,
    # here for the 8-byte-multiple messages 00..07 and 00..0f of the reference implementation's vectors.
    k0 = struct.unpack("<Q", bytes(range(8)))[0]
    k1 = struct.unpack("<Q", bytes(range(8, 16)))[0]
    m8 = struct.unpack("<Q", bytes(range(8)))[0]
    assert siphash24([], k0, k1) == 0x726fdb47dd0e0e31
    assert siphash24([m8], k0, k1) == 0x93f5f5799a932462


_selftest()

if __name__ == "__main__":
    n_units, n_items, L = (int(a) for a in sys.argv[1:4])
    c = kept_counts({u: range(1, n_items + 1) for u in range(n_units)}, L)
    for item in sorted(c):
        print(item, c[item])
