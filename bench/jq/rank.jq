# rank.jq - leap-rank -g G with the default key (turn: gold > silver > time-out) in jq (bench/peers.sh).
# usage: jq -n -c -L bench/jq --argjson g 16 -f bench/jq/rank.jq FILE
include "group";
# 1 when trajectory a beats b, -1 when b beats a, 0 on a tie.
def cmp($a; $b):
  if $a.solved != $b.solved then
    (if $a.solved == 0 then -1 elif $b.solved == 0 then 1 elif $a.solved < $b.solved then 1 else -1 end)
  else 0 end;
def rank($complete):
  . as $rs
  | reduce range(0; $rs | length) as $i ({order: [], t: {}};
      ($rs[$i] | traj_id($i)) as $id | $rs[$i] as $r | ($r | turn_of) as $tn
      | (if .t[$id] == null then .order += [$id] else . end)
      | .t[$id] |= ((. // {solved: 0, sp: 0, tok: 0, turns: 0, final: false, w: 0, l: 0, ties: 0})
          | (if $r.status == "pass" and (.solved == 0 or $tn < .solved) then .solved = $tn | .sp = ($r | speedup_of) else . end)
          | .tok = (if .tok != null and ($r.tokens | type) == "number" and $r.tokens >= 0 and $r.tokens == ($r.tokens | floor)
                    then .tok + $r.tokens else null end)
          | .turns = ([.turns, $tn] | max)
          | .final = (.final or ($r | is_final))))
  | .order as $o | ($o | length) as $n
  | reduce range(0; $n) as $i (.; reduce range($i + 1; $n) as $j (.;
      cmp(.t[$o[$i]]; .t[$o[$j]]) as $c
      | if $c > 0 then .t[$o[$i]].w += 1 | .t[$o[$j]].l += 1
        elif $c < 0 then .t[$o[$j]].w += 1 | .t[$o[$i]].l += 1
        else .t[$o[$i]].ties += 1 | .t[$o[$j]].ties += 1 end))
  | .t as $t
  | ($complete and ([$t[] | .final] | all)) as $ok
  | range(0; $rs | length) as $i
  | $t[$rs[$i] | traj_id($i)] as $x
  | $rs[$i] | .rank = {wins: $x.w, losses: $x.l, ties: $x.ties,
                       score: (if $n > 1 then ($x.w - $x.l) / ($n - 1) else 0 end),
                       group_size: $n, turns: $x.turns, complete: $ok};
groups(if is_final then 1 else 0 end; 0) | .complete as $c | .recs | rank($c)
