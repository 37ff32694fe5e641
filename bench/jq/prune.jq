# prune.jq - leap-prune --annotate with the default DCP thresholds in jq (bench/peers.sh).
# usage: jq -n -c -L bench/jq --argjson g 16 -f bench/jq/prune.jq FILE
include "group";
def decide($complete):
  . as $rs | length as $n
  | (map(select(.status != "pass")) | length) as $nf
  | (map(select(.status == "no_code" or .status == "compile_error")) | length) as $nc
  | (if $nf < 0.5 * $n then "easy" elif $nf > $n or ($n > 0 and $nc == $n) then "hopeless" else "expand" end) as $v
  | $rs[]
  | turn_of as $t
  | (if $v != "expand" then [$v, "final"]
     elif .status == "pass" then ["solved", "final"]
     elif $t >= 3 then ["max_turns", "final"]
     else ["failed", "expand"] end) as [$reason, $d]
  | .prune = {decision: $d, reason: $reason, verdict: $v, n_fail: $nf, group_size: $n, turn: $t, complete: $complete};
groups(1; .group_size | if type == "number" and . > 0 then . else 0 end) | .complete as $c | .recs | decide($c)
