/* torchbase.c - the torch baseline's artifact: a shared object that embeds CPython and runs a
 * module task's module with torch when the runner calls its leap_entry. */
/*
 * Why C around Python: the referee times a baseline with the same machinery as a candidate (a
 * runner of its own, blocks of calls on sealed input sets, its clock), so the torch baseline is
 * an artifact like any other, loaded by the unchanged runner (runner/run.c) and called through
 * the artifact ABI (lib/compile/abi.h). leap builds it per task (lib/referee/torchbase.c): that
 * file writes the data this one reads in front of it -- leap_tb_libpython (the libpython of
 * $LEAP_TORCH_PYTHON), leap_tb_home (its sys.base_prefix), leap_tb_path (its sys.path, one entry
 * a line), leap_tb_kind ("torch-eager" or "torch-compile"), leap_tb_device (torch's device
 * name), leap_tb_values (the bench case's sizes, JSON), the bytes of runner/torchref.py,
 * runner/torchbase.py, the module file and task.json, and leap_tb_aoti up to leap_tb_aoti_end
 * (torch-compile: the shared object AOTInductor made of the module ahead of time; empty for
 * torch-eager) -- and compiles the whole with the trusted build's cc. No Python header is needed:
 * libpython is opened at run time, RTLD_GLOBAL (torch's extension modules resolve the
 * interpreter's symbols from it), and the few calls below are found by name.
 *
 * The interpreter starts when the runner loads the artifact (a constructor: torch's import
 * takes seconds, which belong to no timed call) and keeps the GIL on the runner's thread, the
 * only one that calls in. A failure there is kept and returned by every call (the runner says
 * "the entry point returned 3"), with Python's traceback on stderr (the record's output).
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef void *(*tb_call_fn)(void *, const char *, ...);

/* The interpreter's calls this file makes, found in libpython by name. */
struct tb_py {
	void (*init)(int);
	void *(*add_module)(const char *);
	void *(*bytes)(const char *, long);
	int (*setattr)(void *, const char *, void *);
	void *(*getattr)(void *, const char *);
	int (*run)(const char *);
	tb_call_fn call;
	void (*decref)(void *);
	void (*print_err)(void);
};

/* The per-call function torchbase.py's start returned, or NULL with why in tb_state.err. */
static struct {
	struct tb_py py;
	void *call;
	int err; /* 0, or the code every call returns */
} tb_state;

/* What runs in __main__ once the data are its attributes: the two helper modules made from
 * their source, then the baseline started. */
static const char tb_boot[] =
	"import sys, types\n"
	"sys.path[:] = [p for p in _leap_path.decode().split('\\n') if p]\n"
	"def _leap_mod(name, src):\n"
	"    m = types.ModuleType(name)\n"
	"    m.__file__ = name + '.py'\n"
	"    sys.modules[name] = m\n"
	"    exec(compile(src, m.__file__, 'exec'), m.__dict__)\n"
	"    return m\n"
	"_leap_mod('leap_torchref', _leap_ref)\n"
	"_leap_call = _leap_mod('leap_torchbase', _leap_base).start(_leap_module, _leap_task, _leap_kind.decode(),\n"
	"                                                          _leap_device.decode(), _leap_values, _leap_aoti)\n"
	"del _leap_aoti\n";

#define TB_SYM(field, name)                                                                                     \
	if (!(*(void **)&tb_state.py.field = dlsym(h, name))) {                                                 \
		fprintf(stderr, "leap torch baseline: %s has no %s\n", leap_tb_libpython, name);               \
		return 2;                                                                                       \
	}

/* Opens libpython and finds the calls. Returns 0 or an error code. */
static int tb_open(void)
{
	void *h = dlopen(leap_tb_libpython, RTLD_NOW | RTLD_GLOBAL);
	if (!h) {
		fprintf(stderr, "leap torch baseline: cannot load %s: %s\n", leap_tb_libpython, dlerror());
		return 2;
	}
	TB_SYM(init, "Py_InitializeEx")
	TB_SYM(add_module, "PyImport_AddModule")
	TB_SYM(bytes, "PyBytes_FromStringAndSize")
	TB_SYM(setattr, "PyObject_SetAttrString")
	TB_SYM(getattr, "PyObject_GetAttrString")
	TB_SYM(run, "PyRun_SimpleString")
	TB_SYM(call, "PyObject_CallFunction")
	TB_SYM(decref, "Py_DecRef")
	TB_SYM(print_err, "PyErr_Print")
	return 0;
}

/* Sets __main__.name to the bytes p[0..n). Returns 0 or -1. */
static int tb_set(void *m, const char *name, const void *p, size_t n)
{
	void *b = tb_state.py.bytes((const char *)p, (long)n);
	if (!b)
		return -1;
	int r = tb_state.py.setattr(m, name, b);
	tb_state.py.decref(b);
	return r;
}

/* Starts the interpreter and the baseline. Returns 0 or an error code (3: Python failed). */
static int tb_start(void)
{
	int r = tb_open();
	if (r)
		return r;
	/* the interpreter of $LEAP_TORCH_PYTHON, whatever this process's environment says */
	if (setenv("PYTHONHOME", leap_tb_home, 1) || setenv("PYTHONNOUSERSITE", "1", 1) ||
	    setenv("PYTHONDONTWRITEBYTECODE", "1", 1) || unsetenv("PYTHONPATH"))
		return 2;
	tb_state.py.init(0); /* 0: the runner's signal handlers stay */
	void *m = tb_state.py.add_module("__main__");
	if (!m || tb_set(m, "_leap_path", leap_tb_path, sizeof leap_tb_path - 1) ||
	    tb_set(m, "_leap_kind", leap_tb_kind, sizeof leap_tb_kind - 1) ||
	    tb_set(m, "_leap_device", leap_tb_device, sizeof leap_tb_device - 1) ||
	    tb_set(m, "_leap_ref", leap_tb_ref, sizeof leap_tb_ref) ||
	    tb_set(m, "_leap_base", leap_tb_base, sizeof leap_tb_base) ||
	    tb_set(m, "_leap_module", leap_tb_module, sizeof leap_tb_module) ||
	    tb_set(m, "_leap_task", leap_tb_task, sizeof leap_tb_task) ||
	    tb_set(m, "_leap_values", leap_tb_values, sizeof leap_tb_values - 1) ||
	    tb_set(m, "_leap_aoti", leap_tb_aoti, (size_t)(leap_tb_aoti_end - leap_tb_aoti))) {
		tb_state.py.print_err();
		return 3;
	}
	if (tb_state.py.run(tb_boot)) /* it printed the traceback */
		return 3;
	tb_state.call = tb_state.py.getattr(m, "_leap_call");
	if (!tb_state.call) {
		tb_state.py.print_err();
		return 3;
	}
	return 0;
}

__attribute__((constructor)) static void tb_load(void)
{
	tb_state.err = tb_start();
	fflush(stderr);
}

__attribute__((visibility("default"))) int leap_abi_version(void)
{
	return 1; /* LEAP_ABI_VERSION (lib/compile/abi.h) */
}

__attribute__((visibility("default"))) int leap_entry(void *const *args)
{
	if (tb_state.err)
		return tb_state.err;
	void *r = tb_state.py.call(tb_state.call, "K", (unsigned long long)(uintptr_t)args);
	if (!r) {
		tb_state.py.print_err();
		fflush(stderr);
		return 3;
	}
	tb_state.py.decref(r);
	return 0;
}
