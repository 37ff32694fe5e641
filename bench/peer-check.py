#!/usr/bin/env python3
"""peer-check.py - checks that a peer (jq, Python) wrote the same numbers as leap: exit 1 on the first difference.

usage: peer-check.py FIELD LEAP-OUTPUT PEER-OUTPUT
Both files hold the same records in the same order; per line, the record's group, sample and
turn must agree, and so must the value of FIELD (the member the filter appended: prune, rank
or advantage): strings, booleans and integers exactly, other numbers to 1e-9 relative (the
programs print doubles with different digit counts: 0.6 and 0.59999999999999998). Only the
head of each line and the appended member are parsed, so the check is cheap."""
import json
import re
import sys

HEAD = re.compile(r'"(group|sample|turn)":("(?:[^"\\]|\\.)*"|-?[0-9.eE+-]+)')


def ident(line):
    return {k: v for k, v in HEAD.findall(line[:600])}


def field(line, name):
    i = line.rfind('"%s":' % name)
    if i < 0:
        return None
    return json.JSONDecoder().raw_decode(line, i + len(name) + 3)[0]


def same(a, b):
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a is b or a == b and type(a) is type(b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-3)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


def main():
    name, fa, fb = sys.argv[1:4]
    n = 0
    with open(fa, encoding="utf-8") as a, open(fb, encoding="utf-8") as b:
        while True:
            la, lb = a.readline(), b.readline()
            if not la or not lb:
                break
            n += 1
            ia, ib = ident(la), ident(lb)
            va, vb = field(la, name), field(lb, name)
            if ia != ib or va is None or not same(va, vb):
                print("peer-check: %s: record %d differs from leap's\n  leap: %s %s\n  peer: %s %s" %
                      (fb, n, ia, json.dumps(va), ib, json.dumps(vb)), file=sys.stderr)
                sys.exit(1)
    if la or lb:
        print("peer-check: %s: not the same number of records as %s (%d in common)" % (fb, fa, n), file=sys.stderr)
        sys.exit(1)
    print("peer-check: %s: %d records, %s the same as leap's" % (fb, n, name))


if __name__ == "__main__":
    main()
