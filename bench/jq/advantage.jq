# advantage.jq - leap-advantage's estimators rank, grpo and kevin in jq (bench/peers.sh).
# usage: jq -n -c -L bench/jq --arg est rank|grpo|kevin --arg reward field|binary|kevin --argjson g 16 -f bench/jq/advantage.jq FILE
# rank: record by record; grpo, kevin: group by group (a group once G trajectories have ended).
include "group";
def gamma: 0.4;
def reward:
  if $reward == "field" then .reward
  else (if .status == "pass" then 1 else 0 end) as $p
    | if $reward == "binary" then $p else 0.3 * $p + $p * speedup_of end end;
# leap_centre (a single value has no baseline), and with $scale the division by std (n - 1) +
# 1e-6 (the std of a single value taken as 1, as verl).
def centre($scale):
  . as $x | length as $n
  | if $n == 1 then (if $scale then map(. / (1 + 1e-6)) else . end)
    elif all(.[]; . == $x[0]) then map(0)
    else (add / $n) as $mean
      | map(. - $mean)
      | if $scale then (($x | map((. - $mean) * (. - $mean)) | add) / ($n - 1) | sqrt) as $sd | map(. / ($sd + 1e-6)) else . end
    end;
# advantages of a group's records (an array), in arrival order
def group_adv:
  . as $rs | length as $n
  | [range(0; $n) as $i | {i: $i, k: ($rs[$i] | traj_id($i)), t: ($rs[$i] | turn_of), r: ($rs[$i] | reward)}] as $m
  | [$m | group_by(.k) | sort_by(.[0].i)[] | sort_by(.t, .i)] as $trajs
  | if $est == "grpo" then
      ($trajs | map(.[-1].r) | centre(true)) as $y
      | reduce range(0; $trajs | length) as $j ([range(0; $n) | 0]; . as $a | reduce $trajs[$j][].i as $i ($a; .[$i] = $y[$j]))
    else
      # discounted returns along each trajectory, then normalised over all of them (Kevin)
      [$trajs[] | . as $tr | reduce range(($tr | length) - 1; -1; -1) as $q ({g: 0, out: []};
          .g = $tr[$q].r + gamma * .g | .out = [{i: $tr[$q].i, G: .g}] + .out) | .out[]] as $G
      | ($G | map(.G) | centre(true)) as $y
      | reduce range(0; $G | length) as $k ([range(0; $n) | 0]; .[$G[$k].i] = $y[$k])
    end;
def put($a): .advantage = (if $a == 0 then 0 else $a end);
if $est == "rank" then
  inputs | (.rank.score) as $s | ((.rank.turns // turn_of) - turn_of) as $k
  | put(if $s > 0 and $k > 0 then $s * pow(gamma; $k) else $s end)
else
  groups(if is_final then 1 else 0 end; 0) | .recs | . as $rs | group_adv as $a
  | range(0; $rs | length) as $i | $rs[$i] | put($a[$i])
end
