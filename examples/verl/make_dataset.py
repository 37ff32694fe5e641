"""Write verl's parquet rows for leap's tasks (needs pandas and pyarrow, which verl installs).

    python3 examples/verl/make_dataset.py --backend cuda --out data/leap softmax gelu ...
    python3 examples/verl/make_dataset.py --all --out data/leap

Each row: data_source "leap", prompt (leap-prompt's messages), reward_model.ground_truth (the
task id), extra_info {task, group, backend, index, interaction_kwargs {name: leap, task, group,
backend}}. `group` is unique per row: it is what the rewards and the interaction group by.
"""

import argparse
import os

import leap


def rows(lp, tasks, all_tasks=False):
    args = ["--all"] if all_tasks else []
    out = []
    for i, r in enumerate(lp.prompts([] if all_tasks else tasks, group_size=1, args=args)):
        kw = {"name": "leap", "task": r["task"], "group": r["group"], "backend": r["backend"]}
        out.append({"data_source": "leap", "prompt": r["messages"], "ability": "cuda-kernels",
                    "reward_model": {"style": "rule", "ground_truth": r["task"]},
                    "extra_info": {"task": r["task"], "group": r["group"], "backend": r["backend"], "index": i,
                                   "interaction_kwargs": kw}})
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("tasks", nargs="*")
    p.add_argument("--all", action="store_true")
    p.add_argument("--backend", default="cuda")
    p.add_argument("--prefix")
    p.add_argument("--out", required=True)
    a = p.parse_args()
    import pandas as pd

    data = rows(leap.Leap(a.prefix or os.environ.get("LEAP_PREFIX"), backend=a.backend), a.tasks, a.all)
    os.makedirs(a.out, exist_ok=True)
    pd.DataFrame(data).to_parquet(os.path.join(a.out, "train.parquet"))
    print(f"{len(data)} rows -> {a.out}/train.parquet")


if __name__ == "__main__":
    main()
