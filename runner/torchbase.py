"""torchbase.py - the torch baseline of a module task: the module run by torch inside a runner.

leap-bench times a module task's candidate against torch (leap-bench(1), BASELINES): the
baseline artifact is a small C shared object (runner/torchbase.c) that embeds CPython, this
file, runner/torchref.py (whose `instantiate` and `layout` define the C entry's parameters)
and the task's module source, and exports the `leap_entry` the runner calls. `start` is called
once when the runner loads it; the function it returns is called once per leap_entry, with
the address of the runner's argument array (runner/run.c build_args: a buffer's pointer, or a
pointer to a scalar's 8 bytes).

Why this shape: the referee times the baseline's block with the same machinery as the
candidate's (its clock, the same sealed input sets, paired blocks), so torch must run where a
C baseline runs: in a runner, on the runner's own buffers. Inputs and parameters are viewed
in place (no copy: the input region is sealed, mapped read-only); buffers (a BatchNorm's
running statistics, which forward updates in training mode) are copied into the module's own
tensors each call, as the reference loads them each call; outputs are written into the output
buffers. Training mode and the derived layout are the reference's (torchref.py), the precision
the task's (the entry's types), the threads the cores the runner was given.

torch-compile is compiled ahead of time, never in the runner (whose minimal root holds no
compiler): leap runs this file as a script, `compile MODULE TASK_JSON DEVICE VALUES THREADS
OUT`, with $LEAP_TORCH_PYTHON outside any sandbox (lib/referee/torchaot.c, which caches the
result by content). It exports the module at the bench case's sizes with its parameters and buffers
lifted to inputs (torch.export) and compiles that with AOTInductor, as torch.compile's default
(no freezing) treats them; the shared object it makes is embedded in the baseline's artifact,
which `start` loads from a memfd (the runner's tmpfs is noexec) -- no compiler at run time.
Both sides order the compiled form's inputs by `lifted`.
"""
import ctypes
import json
import os
import sys
import time
import types

try:
    import leap_torchref as R
except ImportError:  # run as a script (compile): torchref.py is our sibling in libexec
    import importlib.util
    _spec = importlib.util.spec_from_file_location(
        "leap_torchref", os.path.join(os.path.dirname(os.path.abspath(__file__)), "leap-torchref.py"))
    R = importlib.util.module_from_spec(_spec)
    sys.modules["leap_torchref"] = R
    _spec.loader.exec_module(R)

CTYPES = {"int": ctypes.c_int32, "int64": ctypes.c_int64, "float": ctypes.c_float, "double": ctypes.c_double}
VIEWS_KEPT = 4096  # views of the runner's buffers by (address, elements, type): slots x params
SLOW_PICK_S = 0.05  # a forward slower than this keeps torch's threads at the runner's cores


class CudaBuf:
    """A device buffer of the runner's as torch sees it (__cuda_array_interface__)."""

    def __init__(self, ptr, n, typestr):
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": typestr, "data": (ptr, False), "version": 3}


def lifted(rows, pnames):
    """The compiled form's inputs, in order: the forward's inputs, then the parameters, then
    the buffers, as (row index, state_dict key or None). Parameters are bound to the runner's
    buffers in place; a buffer is the module's own tensor, loaded each call (forward may
    update it, as eager's does)."""
    xs = [(i, None) for i, r in enumerate(rows) if r[1] == "in"]
    for _, kind, _, _ in rows:
        if kind not in ("in", "state", "out", "size"):
            raise R.Refused("the torch-compile baseline takes inputs and state_dict entries, not %s rows" % kind)
    ps = [(i, r[2]) for i, r in enumerate(rows) if r[1] == "state" and r[2] in pnames]
    bs = [(i, r[2]) for i, r in enumerate(rows) if r[1] == "state" and r[2] not in pnames]
    return xs + ps + bs


class Baseline:
    def __init__(self, mod, task, kind, device, values=None, aoti=None):
        self.torch = R.torch
        self.mod, self.task, self.kind, self.device = mod, task, kind, device
        self.values, self.aoti, self.runner = values, aoti, None
        self.params = task["params"]
        self.consts = R.constants(mod)
        self.models = {}
        self.views = {}
        self.prepared = {}
        self.threads = None
        self.scalars = [i for i, p in enumerate(self.params) if "role" not in p]

    def sizes(self, ptrs):
        """The size constants of this call, read from the entry's scalar arguments (not the
        floats forward takes, which are scalars too)."""
        v = dict(self.consts)
        for i, p in enumerate(self.params):
            if "role" not in p and p["name"] in v:
                v[p["name"]] = CTYPES[p["type"]].from_address(ptrs[i]).value
        return v

    def model(self, v):
        key = tuple(sorted(v.items()))
        if key not in self.models:
            torch = self.torch
            model, inputs = R.instantiate(self.mod, v, self.device if self.device != "cpu" else None)
            nout = sum(1 for p in self.params if p.get("role") == "out")
            rows = R.layout(self.mod, model, inputs, [torch.empty(0)] * nout, self.consts)
            if [r[0] for r in rows] != [p["name"] for p in self.params]:
                raise R.Refused("task.json's parameters are not what the module file makes: import it again")
            model.train()  # as the reference (KernelBench never calls eval())
            run = model
            if self.kind == "torch-compile":
                lifted(rows, {n for n, _ in model.named_parameters()})  # refuses what it cannot take
                run = self.compiled(v)
            self.models.clear()  # one size at a time: a record times one case
            self.models[key] = (model, run, rows, {n for n, _ in model.named_parameters()})
        return self.models[key]

    def compiled(self, v):
        """The AOTInductor model compiled for the bench case's sizes (one size: a record times
        one case), loaded once from the bytes embedded in the artifact."""
        got = {k: v[k] for k in self.values}
        if got != self.values:
            raise R.Refused("the torch-compile baseline was compiled for sizes %s, called with %s"
                            % (json.dumps(self.values, sort_keys=True), json.dumps(got, sort_keys=True)))
        if self.runner is None:
            if not self.aoti:
                raise R.Refused("the torch-compile baseline's artifact holds no compiled module")
            # a memfd: the runner's temp dir is noexec, and the artifact's folder is not in view
            fd = os.memfd_create("leap-aoti")
            with os.fdopen(os.dup(fd), "wb") as f:
                f.write(self.aoti)
            path = "/proc/self/fd/%d" % fd
            aoti = self.torch._C._aoti
            if self.device == "cpu":
                self.runner = aoti.AOTIModelContainerRunnerCpu(path, 1)
            else:  # cuda: the kernels' cubins are in the object (embed_kernel_binary); unrun here
                self.runner = aoti.AOTIModelContainerRunnerCuda(path, 1, self.device)
            self.aoti = None
        return self.runner.run

    def view(self, ptr, n, ty):
        """The runner's buffer at ptr as a flat tensor of n elements of leap type ty (no copy)."""
        key = (ptr, n, ty)
        t = self.views.get(key)
        if t is None:
            torch, dt = self.torch, R.DTYPES[ty]
            size = torch.empty(0, dtype=dt).element_size()
            if n == 0:
                t = torch.empty(0, dtype=dt, device=self.device)
            elif self.device == "cpu":
                t = torch.frombuffer((ctypes.c_char * (n * size)).from_address(ptr), dtype=dt, count=n)
            else:
                tstr = {"float": "<f4", "double": "<f8", "int": "<i4", "int64": "<i8", "half": "<f2",
                        "uint8": "|u1"}.get(ty)
                if tstr is None:
                    raise R.Refused("leap type %s has no device view here" % ty)
                t = torch.as_tensor(CudaBuf(ptr, n, tstr), device=self.device)
            if len(self.views) >= VIEWS_KEPT:
                self.views.clear()
            self.views[key] = t
        return t

    def pick_threads(self, run, xs):
        """torch's threads for this record: the runner's cores, or one where one is faster.

        The first call of a size is never timed (the pool's first runs, or a record's warm-up
        pair), so it tries both. On a loaded machine torch's intra-op threads wait at their
        barriers for a descheduled one: a 16x16 BatchNorm took 37 ms a call on two threads of
        a machine at load 11, 36 us on one. Kept at the cores, that baseline would make any
        candidate look a thousand times faster; a candidate may use fewer threads than its cores
        too. A forward slower than SLOW_PICK_S keeps the cores (a large module's own choice)."""
        torch, cores = self.torch, max(1, len(os.sched_getaffinity(0)))
        self.threads = cores
        if cores == 1:
            return
        best = None
        for n in (cores, 1):
            torch.set_num_threads(n)
            t0 = time.perf_counter()
            run(*xs)  # a warm-up, and the size of the test
            if time.perf_counter() - t0 > SLOW_PICK_S:
                torch.set_num_threads(cores)
                return
            ts = []
            for _ in range(5):
                t0 = time.perf_counter()
                run(*xs)
                ts.append(time.perf_counter() - t0)
            ts.sort()
            if best is None or ts[2] < best[0]:
                best = (ts[2], n)
        self.threads = best[1]
        torch.set_num_threads(best[1])

    def state(self, model, pnames, key, x, binds, copies):
        """State_dict entry `key`, whose values are x: a parameter is bound to x in place (read
        only), a buffer copied into the module's own tensor each call (forward may update it)."""
        if key in pnames:
            binds.append((model.get_parameter(key), x))
        else:
            b = model.get_buffer(key)
            copies.append((b, x if x.dtype == b.dtype else x.to(b.dtype)))

    def prepare(self, ptrs):
        """What a call on these buffers does: (run, forward's arguments, parameters to bind,
        buffers and plain tensor attributes to set, outputs), the views made once per set of
        addresses and sizes. The rows are the reference's (torchref.layout): inputs, state_dict
        entries or their packs, tensors in plain attributes, outputs, sizes, float scalars."""
        torch = self.torch
        model, run, rows, pnames = self.model(self.sizes(ptrs))
        args, binds, copies, outs = {}, [], [], []
        where = {key: (sub, k) for key, sub, k in R.attrs(model)}
        for i, (name, kind, key, t) in enumerate(rows):
            p = self.params[i]
            if kind == "size":
                continue
            if kind == "scalar":  # a float forward takes, by its position
                args[key] = CTYPES[p["type"]].from_address(ptrs[i]).value
                continue
            if kind == "out":
                outs.append((ptrs[i], p["type"]))
                continue
            x = self.view(ptrs[i], t.numel(), p["type"]).view(t.shape)
            if not x.is_floating_point() and x.dtype != t.dtype:
                x = x.to(t.dtype)  # a bool stored as uint8: converted once (inputs are sealed)
            if kind == "in":
                args[key] = x
            elif kind == "pack":  # a deep network's state, one buffer: each entry a slice of it
                sd, at = model.state_dict(), 0
                for k in key:
                    n = sd[k].numel()
                    self.state(model, pnames, k, x[at:at + n].view(sd[k].shape), binds, copies)
                    at += n
            elif kind == "attr":  # forward may replace it: the module's own copy, set each call
                sub, k = where[key]
                copies.append((getattr(sub, k).clone(), x, sub, k))
            else:
                self.state(model, pnames, key, x, binds, copies)
        xs = [args[k] for k in sorted(args)]
        if self.kind == "torch-compile":
            # the compiled form takes the parameters as inputs and updates the buffers in place
            # (lifted's order: binds and copies are each in the rows' order)
            extra = [x for _, x in binds] + [c[0] for c in copies]
            runner = run
            run = lambda *xs_: runner(list(xs_) + extra)
            binds = []
        return run, xs, binds, copies, outs

    def call(self, addr):
        torch = self.torch
        ptrs = (ctypes.c_void_p * len(self.params)).from_address(addr)
        # the addresses and the sizes' values: the same slot of the same case makes the same call
        key = tuple(ptrs) + tuple(CTYPES[self.params[i]["type"]].from_address(ptrs[i]).value for i in self.scalars)
        prep = self.prepared.get(key)
        if prep is None:
            if len(self.prepared) >= VIEWS_KEPT:
                self.prepared.clear()
            prep = self.prepared[key] = self.prepare(ptrs)
        run, xs, binds, copies, outs = prep
        with torch.no_grad():
            for p, x in binds:
                p.data = x
            if self.threads is None:  # before the state is set: its forwards may change it
                self.pick_threads(run, xs)
            for c in copies:
                c[0].copy_(c[1])
                if len(c) > 2:
                    setattr(c[2], c[3], c[0])
            got = run(*xs)
            got = got if isinstance(got, (tuple, list)) else (got,)
            if len(got) != len(outs):
                raise R.Refused("forward returned %d outputs, the entry has %d" % (len(got), len(outs)))
            for (ptr, ty), o in zip(outs, got):
                self.view(ptr, o.numel(), ty).copy_(o.reshape(-1))
        return 0


def load_module(module_src):
    mod = types.ModuleType("leap_module")
    mod.__file__ = "module.py"
    sys.modules["leap_module"] = mod
    exec(compile(module_src, "module.py", "exec"), mod.__dict__)
    for need in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(mod, need):
            raise R.Refused("no %s in the module file" % need)
    return mod


def start(module_src, task_json, kind, device, values=b"{}", aoti=b""):
    """The per-call function of the baseline of the task whose module source and task.json are
    given (bytes); kind is torch-eager or torch-compile, device torch's device name; for
    torch-compile, values the sizes it was compiled for (JSON) and aoti its shared object."""
    R.load_torch()
    task = json.loads(task_json)
    mod = load_module(module_src)
    # the cores the runner was given (the referee's --cpus), as the candidate's prompt says;
    # Baseline.pick_threads may take one instead at the first call
    R.torch.set_num_threads(max(1, len(os.sched_getaffinity(0))))
    return Baseline(mod, task, kind, device, json.loads(values), aoti).call


def first_line(e):
    msg = ("%s: %s" % (type(e).__name__, e)).strip().split("\n")[0]
    return msg if len(msg) <= 400 else msg[:400] + "..."


def compile_aoti(module_path, task_path, device, values_json, threads, out):
    """Compiles the module of a task at the sizes `values_json` for `device` into out/model.so,
    its OpenMP loops for `threads` threads (the runner's cores: inductor writes the number in).
    Prints one JSON line: {"ok": true, "export_s": s, "compile_s": s}, or {"refused": why} when
    torch cannot export or compile the module (a property of the module, kept by the caller)."""
    R.load_torch()
    torch = R.torch
    torch.set_num_threads(max(1, int(threads)))
    task = json.load(open(task_path))
    mod = load_module(open(module_path, "rb").read())
    v = dict(R.constants(mod))
    v.update(json.loads(values_json))
    model, inputs = R.instantiate(mod, v, device if device != "cpu" else None)
    nout = sum(1 for p in task["params"] if p.get("role") == "out")
    rows = [r for r in R.layout(mod, model, inputs, [torch.empty(0)] * nout, R.constants(mod)) if r[1] != "size"]
    if [r[0] for r in rows] != [p["name"] for p in task["params"] if "role" in p]:
        raise R.Refused("task.json's parameters are not what the module file makes: import it again")
    rows = [r for r in rows if r[1] != "out"]
    model.train()  # as the reference and torch-eager
    order = lifted(rows, {n for n, _ in model.named_parameters()})
    # copies: the module's own tensors are its state in the export too, and an input aliasing a
    # buffer that forward updates is refused ("aliased inputs that are mutated")
    args = tuple(rows[i][3].detach().clone() for i, _ in order)
    nin = sum(1 for _, k in order if k is None)
    names = [k for _, k in order if k is not None]

    class Lifted(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, *a):
            return torch.func.functional_call(self.m, dict(zip(names, a[nin:])), tuple(a[:nin]), strict=False)

    t0 = time.perf_counter()
    try:
        with torch.no_grad():
            ep = torch.export.export(Lifted(model), args, strict=False)
    except Exception as e:
        print(json.dumps({"refused": "torch.export cannot trace the module: " + first_line(e)}), flush=True)
        return
    t1 = time.perf_counter()
    opts = {} if device == "cpu" else {"aot_inductor.embed_kernel_binary": True}  # cubins inside the .so
    try:
        pkg = torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(out, "model.pt2"),
                                                       inductor_configs=opts)
        import zipfile
        with zipfile.ZipFile(pkg) as z:
            sos = [n for n in z.namelist() if n.endswith(".so") and "/data/aotinductor/" in n]
            if len(sos) != 1:
                raise RuntimeError("the package holds %d shared objects, not one" % len(sos))
            with z.open(sos[0]) as src, open(os.path.join(out, "model.so"), "wb") as dst:
                dst.write(src.read())
    except Exception as e:
        print(json.dumps({"refused": "AOTInductor cannot compile the module: " + first_line(e)}), flush=True)
        return
    print(json.dumps({"ok": True, "export_s": round(t1 - t0, 3), "compile_s": round(time.perf_counter() - t1, 3)}),
          flush=True)


if __name__ == "__main__":
    if len(sys.argv) != 8 or sys.argv[1] != "compile":
        sys.stderr.write("usage: torchbase.py compile MODULE TASK_JSON DEVICE VALUES THREADS OUT\n")
        sys.exit(2)
    try:
        compile_aoti(*sys.argv[2:])
    except R.Refused as e:
        print(json.dumps({"refused": str(e)}), flush=True)
