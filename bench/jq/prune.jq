# prune.jq - leap-prune --annotate with the default DCP thresholds in jq (bench/peers.sh):
# easy when n_fail < 50%, hopeless when n_fail > G - 1, a verdict carried in `dcp` followed.
# usage: jq -n -c -L bench/jq --argjson g 16 -f bench/jq/prune.jq FILE
include "group";
def decide($complete):
  . as $rs | length as $n
  | (map(select(.status != "pass")) | length) as $nf
  | (map(select(.dcp | type == "object" and (.verdict == "easy" or .verdict == "hopeless" or .verdict == "expand")))
     | first // null) as $carrier
  | (if $carrier then $carrier.dcp.verdict
     elif $nf < 0.5 * $n then "easy" elif $nf > $n - 1 then "hopeless" else "expand" end) as $v
  | def num($k; $lo): $carrier.dcp[$k] | if type == "number" and . >= $lo and . <= 2147483647 and . == floor then . else 0 end;
  (if $carrier then [num("turn"; 1), num("n_fail"; 0), num("group_size"; 0)]
     else [($rs[0] | turn_of), $nf, $n] end) as [$gt, $gf, $gn]
  | $rs[]
  | turn_of as $t
  | (if $v != "expand" then [$v, "final"]
     elif .status == "pass" then ["solved", "final"]
     elif $t >= 3 then ["max_turns", "final"]
     else ["failed", "expand"] end) as [$reason, $d]
  | .prune = {decision: $d, reason: $reason, verdict: $v, n_fail: $gf, group_size: $gn, turn: $t, complete: $complete,
             gate_turn: $gt, turn_fail: $nf, turn_records: $n};
groups(1; .group_size | if type == "number" and . > 0 then . else 0 end) | .complete as $c | .recs | decide($c)
