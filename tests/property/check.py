#!/usr/bin/env python3
"""check.py - checks the "no record lost" property over the files of one pipeline run.

usage: check.py DIR GROUP_SIZE

DIR holds the input written by gen.py (in.jsonl, meta.jsonl) and the output of each stage:
c.jsonl (leap-compile), v.jsonl (leap-verify), b.jsonl (leap-bench), done.jsonl and
next.jsonl (leap-prune --done), r.jsonl (leap-rank, file mode), rp.jsonl (leap-rank reading
a pipe: group by group), a.jsonl (leap-advantage),
g.jsonl (leap-advantage --estimator grpo) and report.json (leap-report -f json).

For every stage: every output line is a strict JSON object (UTF-8, no NaN or Infinity, no raw
control characters) ending in a newline; every output record traces back to exactly one input
line (by its id, or by raw for an input line that was not a record) and every input line that
reaches the stage comes out of it exactly once, at the position the stage's documented order
gives (input order, except leap-prune, which writes a group when its last record arrives and an
error record when it arrives); every field the input record came with is there, unchanged (type
included: 64-bit integers exact, -0.0 kept) and in its order; an input line that was not a
record comes out as an error record whose raw is the line. After leap-bench, every record's
status is the one the generator expects of its candidate, or `timeout`: run.sh gives each
candidate 2 s of wall clock, beside fork bombs, which a loaded machine need not honour (the
property is about records; leap-verify.bats about verdicts). Prints what it checked, the mix of
candidates in the input, and every failure (the first 20), and exits 1 when something failed.
Only the standard library is used.
"""
import json
import math
import sys

STATUSES = {"no_code", "compile_error", "runtime_error", "timeout", "mismatch", "pass"}
# Fields leap-prune drops from a next-turn record (besides the results it owns).
NEXT_DROPPED = {"completion", "code", "tokens", "turn"}


class Fail(Exception):
    """One violation of the property."""


def no_constant(name):
    """parse_constant hook: NaN, Infinity and -Infinity are not JSON."""
    raise ValueError("non-JSON number %s" % name)


STRICT = json.JSONDecoder(parse_constant=no_constant)
# One encoder for the comparisons of fields: json.dumps with its defaults, without the check
# for circular references (parsed JSON has none).
DUMPS = json.JSONEncoder(check_circular=False).encode


def strict_load(line):
    """Parses one line as a strict JSON object; raises ValueError otherwise."""
    obj = STRICT.decode(line.decode("utf-8"))
    if not isinstance(obj, dict):
        raise ValueError("not a JSON object")
    return obj


def read_lines(path):
    """Returns the lines of a file (bytes, without their newline); the last must end in one."""
    with open(path, "rb") as f:
        data = f.read()
    if data and not data.endswith(b"\n"):
        raise Fail("%s: the last line has no newline (a cut record?)" % path)
    return data.split(b"\n")[:-1] if data else []


def same(a, b):
    """Whether two parsed JSON values are identical: types, bits of numbers, order of fields
    (json.dumps of both is equal exactly when they are: it writes 1 and 1.0, true and 1, -0.0
    and 0.0 differently, and keeps the order of fields)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return a == b


class Checker:
    """The input, its description and the failures found so far."""

    def __init__(self, d, group_size):
        self.d = d
        self.group_size = group_size
        self.failures = []
        self.meta = [json.loads(x) for x in read_lines(d + "/meta.jsonl")]
        lines = read_lines(d + "/in.jsonl")
        if len(lines) != len(self.meta):
            raise Fail("in.jsonl has %d lines, meta.jsonl %d" % (len(lines), len(self.meta)))
        self.orig = {}  # input line index -> parsed record (records only)
        self.in_lines = {}  # input line index -> its text, for strict records only (appended())
        self.raw = {}  # expected raw text -> input line index (lines that are not records)
        self.by_id = {}  # id -> input line index
        for i, (line, m) in enumerate(zip(lines, self.meta)):
            if line.endswith(b"\r"):
                line = line[:-1]
            if m["k"] == "rec":
                self.orig[i] = json.loads(line.decode("utf-8"))
                try:
                    strict_load(line)
                    self.in_lines[i] = line
                except ValueError:
                    pass
                if m["id"] in self.by_id:
                    raise Fail("generator: id %d twice" % m["id"])
                self.by_id[m["id"]] = i
            elif m["k"] == "bad":
                raw = line.decode("utf-8", errors="replace")
                if raw in self.raw:
                    raise Fail("generator: malformed line %r twice" % raw[:80])
                self.raw[raw] = i
        self.seq_in = [i for i, m in enumerate(self.meta) if m["k"] != "blank"]
        self.dumped = {}  # (input line index, next_turn) -> (fields, their serialisation)

    def fail(self, msg):
        """Records a failure (the first 20 are printed)."""
        self.failures.append(msg)

    def origin(self, stage, pos, r):
        """Returns the input line an output record comes from; raises Fail when none."""
        if "raw" in r:
            if r["raw"] not in self.raw:
                raise Fail("%s:%d: raw text that is no input line: %r" % (stage, pos, r["raw"][:120]))
            return self.raw[r["raw"]]
        rid = r.get("id")
        if type(rid) is not int or rid not in self.by_id:
            raise Fail("%s:%d: record with an id that is no input id: %r (rounded?)" % (stage, pos, rid))
        return self.by_id[rid]

    def fields(self, stage, pos, o, r, next_turn=False):
        """Checks that output record r (from input line o) keeps the fields it came with."""
        m = self.meta[o]
        if m["k"] == "bad":
            e = r.get("error")
            if not isinstance(e, dict) or not isinstance(e.get("message"), str):
                self.fail("%s:%d: input line %d was not a record, but its output has no error" % (stage, pos, o + 1))
            return
        orig = self.orig[o]
        # the input side is the same at every stage: made once
        cached = self.dumped.get((o, next_turn))
        if cached is None:
            want = [k for k in orig if not (next_turn and k in NEXT_DROPPED)]
            cached = self.dumped[(o, next_turn)] = (want, set(want), DUMPS([orig[k] for k in want]))
        want, wanted, dumped = cached
        got = [k for k in r if k in wanted]
        if got != want:
            lost = [k for k in want if k not in r]
            if lost:
                self.fail("%s:%d: id %d lost fields %r" % (stage, pos, orig["id"], lost))
            else:
                self.fail("%s:%d: id %d: fields moved: %r -> %r" % (stage, pos, orig["id"], want, got))
            return
        # One serialisation each side compares all fields at once (fast path); same() names the
        # field that differs.
        if DUMPS([r[k] for k in want]) != dumped:
            for k in want:
                if not same(orig[k], r[k]):
                    self.fail("%s:%d: id %d: field %r changed: %r -> %r" % (stage, pos, orig["id"], k,
                                                                           repr(orig[k])[:100], repr(r[k])[:100]))
        if next_turn and r.get("turn") != orig["turn"] + 1:
            self.fail("%s:%d: id %d: next-turn record has turn %r" % (stage, pos, orig["id"], r.get("turn")))

    @staticmethod
    def appended(prev, due, line):
        """The record of output line `line` when it is the line of input line `due` in the stage
        before (prev: (lines, records) by input line index) with members appended that the
        record did not have; None otherwise. Then only what was appended needs parsing: the
        line before was strict JSON and kept every field of the input, and this one keeps it
        byte for byte."""
        lines, recs = prev
        before, rec = lines.get(due), recs.get(due)
        if before is None or not rec or not before.endswith(b"}") or not line.startswith(before[:-1]):
            return None
        tail = line[len(before) - 1:]
        if tail == b"}":
            return rec
        if not tail.startswith(b","):
            return None
        try:
            added = strict_load(b"{" + tail[1:])
        except ValueError:
            return None
        if any(k in rec for k in added):
            return None  # a member given twice: parsed whole, the field check decides
        r = dict(rec)
        r.update(added)
        return r

    def stage(self, name, expect, next_turn=False, prev=None):
        """Reads a stage's output, checks each record, compares its order with expect (a list of
        input line indices or None to skip that); returns (records, origins) and keeps its
        lines and records in self.last for the stage after it. With prev (the stage before's
        self.last) and expect, a line that is the line due there with members appended is
        checked by parsing what was appended (appended()); any other line is parsed whole."""
        recs, seq, by_line, by_rec = [], [], {}, {}
        for pos, line in enumerate(read_lines("%s/%s.jsonl" % (self.d, name)), 1):
            r = None
            if prev is not None and expect is not None and pos <= len(expect):
                o = expect[pos - 1]
                r = self.appended(prev, o, line)
            if r is None:
                try:
                    r = strict_load(line)
                except ValueError as e:
                    raise Fail("%s:%d: not strict JSON (%s): %r" % (name, pos, e, line[:200]))
                o = self.origin(name, pos, r)
                self.fields(name, pos, o, r, next_turn)
            recs.append(r)
            seq.append(o)
            by_line[o] = line
            by_rec[o] = r
        self.last = (by_line, by_rec)
        seen = set()
        for pos, o in enumerate(seq, 1):
            if o in seen:
                self.fail("%s:%d: input line %d came out twice" % (name, pos, o + 1))
            seen.add(o)
        if expect is not None and seq != expect:
            lost = set(expect) - seen
            extra = seen - set(expect)
            if lost:
                self.fail("%s: %d input lines lost, e.g. line %d" % (name, len(lost), min(lost) + 1))
            if extra:
                self.fail("%s: %d records that should not be there, e.g. line %d" % (name, len(extra), min(extra) + 1))
            if not lost and not extra:
                first = next(i for i, (x, y) in enumerate(zip(seq, expect)) if x != y)
                self.fail("%s:%d: out of order: input line %d where line %d was due" % (name, first + 1, seq[first] + 1,
                                                                                      expect[first] + 1))
        print("%-5s %7d records checked" % (name, len(recs)))
        return recs, seq

    def prune_order(self, recs, seq):
        """The order of leap-prune's done file for input records recs (origins seq): an error
        record when it arrives, a group's records in arrival order when its last one arrives,
        groups still open at the end of input in the order they were opened."""
        out, open_groups = [], {}
        for r, o in zip(recs, seq):
            key = r.get("group", r.get("task")) if "raw" not in r else None
            if not isinstance(key, str) or r.get("status") not in STATUSES:
                out.append(o)
                continue
            g = open_groups.setdefault(key, [])
            g.append(o)
            if len(g) == self.group_size:
                out.extend(g)
                del open_groups[key]
        for g in open_groups.values():
            out.extend(g)
        return out

    def grouped(self, name, recs, seq, before):
        """Checks a stage that writes group by group (leap-rank from a pipe): the same input
        lines as the stage before (origins before, in order), and inside each group (records
        with the same group, else task; records without one count as one group) the order of
        the stage before."""
        if sorted(seq) != sorted(before):
            self.fail("%s: not the same records as its input" % name)
            return
        key = {}
        for r, o in zip(recs, seq):
            key[o] = r.get("group", r.get("task")) if "raw" not in r else None
        want, got = {}, {}
        for o in before:
            want.setdefault(key[o], []).append(o)
        for o in seq:
            got.setdefault(key[o], []).append(o)
        for k in want:
            if want[k] != got[k]:
                self.fail("%s: group %r: records out of input order" % (name, k))

    def statuses(self, recs, seq):
        """Checks each record's status after leap-verify against what the generator expects."""
        for pos, (r, o) in enumerate(zip(recs, seq), 1):
            m = self.meta[o]
            if m["k"] != "rec":
                continue
            if m["expect"] is None:
                if "error" not in r:
                    self.fail("b:%d: id %d should carry an error" % (pos, m["id"]))
            elif r.get("status") not in m["expect"].split("|") + ["timeout"]:
                self.fail("b:%d: id %d: status %r, expected %s (verify: %s)" % (
                    pos, m["id"], r.get("status"), m["expect"], json.dumps(r.get("verify"))[:300]))
            v = r.get("verify") or {}
            mm = v.get("mismatch") or {}
            if mm.get("kind") == "not_finite" and mm.get("got") not in ("nan", "inf", "-inf"):
                self.fail("b:%d: id %d: non-finite got written as %r" % (pos, m["id"], mm.get("got")))

    def run(self):
        """Checks every stage; returns the process exit status."""
        # each stage is read beside the one before it (stage(): prev)
        _, c = self.stage("c", self.seq_in, prev=(self.in_lines, self.orig))
        v_recs, v = self.stage("v", c, prev=self.last)
        b_recs, b = self.stage("b", v, prev=self.last)
        self.statuses(b_recs, b)
        done_recs, done = self.stage("done", self.prune_order(b_recs, b), prev=self.last)
        after_done = self.last
        expand = [o for r, o in zip(done_recs, done) if (r.get("prune") or {}).get("decision") == "expand"]
        self.stage("next", expand, next_turn=True)
        _, r = self.stage("r", done, prev=after_done)
        after_r = self.last
        rp_recs, rp = self.stage("rp", None)
        self.grouped("rp", rp_recs, rp, done)
        self.stage("a", r, prev=after_r)
        self.stage("g", r, prev=after_r)
        # End to end: every input line that is not blank is in the final output exactly once.
        missing = set(self.seq_in) - set(r)
        if missing:
            self.fail("end to end: %d input lines missing from a.jsonl" % len(missing))
        with open(self.d + "/report.json", "rb") as f:
            try:
                json.loads(f.read().decode("utf-8"), parse_constant=no_constant)
            except ValueError as e:
                self.fail("report.json: not strict JSON: %s" % e)
        print("input: %d lines, %d records, %d not records, %d blank" % (
            len(self.meta), len(self.orig), len(self.raw), len(self.meta) - len(self.seq_in)))
        mix = {}
        for m in self.meta:
            if m["k"] == "rec" and m["expect"] is not None:
                mix[m["expect"]] = mix.get(m["expect"], 0) + 1
        print("candidates: " + ", ".join("%s %d" % kv for kv in sorted(mix.items())))
        counts = {}
        for rec in b_recs:
            s = rec.get("status", "error" if "error" in rec else "none")
            counts[s] = counts.get(s, 0) + 1
        print("after leap-bench: " + ", ".join("%s %d" % kv for kv in sorted(counts.items())))
        print("next turn: %d records" % len(expand))
        for f in self.failures[:20]:
            print("FAIL " + f)
        if self.failures:
            print("%d failures" % len(self.failures))
            return 1
        return 0


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: check.py DIR GROUP_SIZE")
    try:
        sys.exit(Checker(sys.argv[1], int(sys.argv[2])).run())
    except Fail as e:
        print("FAIL " + str(e))
        sys.exit(1)


if __name__ == "__main__":
    main()
