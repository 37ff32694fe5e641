# group.jq - the jq peers' streaming groups (bench/peers.sh): records by .group // .task in arrival order.
# groups(unit; want): reads `inputs`; a group is emitted as {recs, complete: true} as soon as the
# sum of `unit` (1 or 0 per record) over its records reaches its target (the largest `want` > 0
# seen, else $g), the groups still open at the end of input in order of first arrival, with
# complete false when they had a target (cut short), true when there was none. Only open groups are held.
def groups(unit; want):
  foreach ((inputs | [.]), null) as $x ({open: {}, n: 0, out: null};
    .out = null
    | if $x == null then
        .out = [.open | to_entries | sort_by(.value.first)[] | {recs: .value.recs, complete: (.value.want == 0 and $g == 0)}]
      else
        $x[0] as $r | ($r.group // $r.task) as $k | .n as $n
        | .n += 1
        | .open[$k] |= ((. // {first: $n, recs: [], units: 0, want: 0})
            | .recs += [$r] | .units += ($r | unit) | .want = ([.want, ($r | want)] | max))
        | .open[$k] as $o
        | (if $o.want > 0 then $o.want else $g end) as $target
        | if $target > 0 and $o.units >= $target then .out = [{recs: $o.recs, complete: true}] | del(.open[$k]) else . end
      end;
    .out // empty | .[]);

# The turn of a record (1 when absent or not a positive integer), the sample (null unless an
# integer >= 0), whether it ends its trajectory, its bench.speedup (0 unless a number > 0 with
# bench.status "ok").
def turn_of: .turn | if type == "number" and . >= 1 and . == floor then . else 1 end;
def sample_of: .sample | if type == "number" and . >= 0 and . == floor then . else null end;
def is_final: (.prune | if type == "object" then .decision else null end) != "expand";
def speedup_of: (.bench | if type == "object" and .status == "ok" then .speedup else null end) | if type == "number" and . > 0 then . else 0 end;
# The trajectory id of record i of a group: its sample, or one of its own.
def traj_id($i): sample_of | if . == null then "u\($i)" else "s\(.)" end;
