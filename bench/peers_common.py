"""peers_common.py - shared code of the Python peers of leap's filters (ref-prune.py, ref-rank.py, ref-advantage.py).

Standard library only. The peers do what leap-prune, leap-rank and leap-advantage do (their man
pages), written to be fair: one json.loads per line, the new field spliced onto the raw line
(no re-serialisation of the record), buffered output; groups streamed with -g, or two passes
over a regular file (the first keeps a few numbers per record), as leap does."""
import json
import sys

STATUSES = ("no_code", "compile_error", "runtime_error", "timeout", "mismatch", "pass")


def dumps(obj):
    """Compact JSON, as leap writes its own fields."""
    return json.dumps(obj, separators=(",", ":"))


def splice(line, name, value):
    """The raw record line (no newline) with member `name` appended (replaced when present)."""
    if ('"%s"' % name) in line:
        r = json.loads(line)
        r[name] = value
        return dumps(r)
    return line[:line.rindex("}")] + ',"%s":%s}' % (name, dumps(value))


def group_key(r):
    g = r.get("group", r.get("task"))
    return g if isinstance(g, str) else None


def is_final(r):
    """A record ends its trajectory unless prune.decision is "expand"."""
    p = r.get("prune")
    return not (isinstance(p, dict) and p.get("decision") == "expand")


def turn_of(r):
    t = r.get("turn")
    return t if isinstance(t, int) and not isinstance(t, bool) and t >= 1 else 1


def sample_of(r):
    s = r.get("sample")
    return s if isinstance(s, int) and not isinstance(s, bool) and s >= 0 else None


def speedup_of(r):
    """bench.speedup when it is a number > 0 and bench.status is "ok" (leap trusts no other timing)."""
    b = r.get("bench")
    if not isinstance(b, dict) or b.get("status") != "ok":
        return 0.0
    s = b.get("speedup")
    return float(s) if isinstance(s, (int, float)) and not isinstance(s, bool) and s > 0 else 0.0


def stream_groups(lines, unit, want, g):
    """Yields (records, complete) per group: records = [(line, parsed)] in arrival order, as soon
    as the group's units (unit(parsed): 0 or 1) reach its target (the largest want(parsed) seen,
    else g); the open groups at the end of input in order of first arrival, complete False when they
    had a target (cut short), True when there was none."""
    open_ = {}
    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            continue
        r = json.loads(line)
        k = group_key(r)
        grp = open_.get(k)
        if grp is None:
            grp = open_[k] = [[], 0, 0]
        grp[0].append((line, r))
        grp[1] += unit(r)
        w = want(r)
        if w > grp[2]:
            grp[2] = w
        target = grp[2] or g
        if target and grp[1] >= target:
            del open_[k]
            yield grp[0], True
    for grp in open_.values():
        yield grp[0], not (grp[2] or g)  # without a target, a group ends with the input


def out():
    return sys.stdout
