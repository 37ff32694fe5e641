/* backend.h - one table of operations per backend (cpu, cuda): everything in which they differ. */
/*
 * A backend is where a candidate runs and what builds it: cpu (C, cc, the host's cores) and
 * cuda (CUDA C++, nvcc, an NVIDIA GPU). Everything in which two backends differ is a field or
 * an operation of struct leap_backend_ops, filled by the backend's own file (backend_cpu.c,
 * backend_cuda.c) and found through backend.c; the rest of leap asks the table and never
 * names a backend, so that a new one is a new file and a row of the table (README.md,
 * Internals, says what else). The runner's side of a backend is runner/backend.h.
 *
 * A backend travels as its index, enum leap_backend, so that arrays per backend (a compiler's
 * tools, leap-bench's target intervals) stay plain arrays; only the backend files name the
 * index's values (tests/backends.bats checks that no other file does). The struct is
 * leap_backend_ops, not leap_backend, because C gives the enum and the struct one tag space.
 */
#ifndef LEAP_BACKEND_H
#define LEAP_BACKEND_H

#include <stddef.h>
#include <jansson.h>

enum leap_backend { LEAP_BACKEND_CUDA, LEAP_BACKEND_CPU, LEAP_NBACKENDS };

struct leap_buf;
struct leap_case;
struct leap_compile_opts;
struct leap_compiler;
struct leap_gpu;
struct leap_gpu_once;
struct leap_prompt_machine;
struct leap_task;
struct leap_tool;

struct leap_argv;

/* What a backend is (flags). */
enum {
	LEAP_BK_HOST = 1 << 0,      /* runs on the host's cores: its pointers are host memory, it is
				     * timed on the task's bench_cpu case, under the timing lock */
	LEAP_BK_LIBRARIES = 1 << 1, /* may link the task's vendor libraries (task.json "libraries") */
	LEAP_BK_BATCH = 1 << 2,     /* candidates of a task may share one compiler run (--batch) */
	LEAP_BK_KERNELS = 1 << 3,   /* an artifact's kernels can be named (crash.h) in a runtime error */
	LEAP_BK_PRECISION = 1 << 4, /* the prompt states the precision classes (TF32, half, bf16) */
	LEAP_BK_OWNER = 1 << 5,     /* its memory is a device's, owned by the baseline's runner: the
				     * referee moves the sets through that owner (devmove.c), which
				     * flushes the device's cache between blocks (unless --hot), and
				     * measures the floor with the device's probe; else the referee
				     * maps the candidate's regions itself and the floor is the cpu's
				     * memory floor (memfloor.c) */
};

struct leap_backend_ops {
	const char *name;     /* as records and --backend spell it */
	const char *ext;      /* a source file's extension (no dot): how hand.c tells it, build.c's files */
	const char *source;   /* a candidate's file name in a compile (diagnostics and crashes name it) */
	const char *shim;     /* the shim's file name in a compile */
	const char *runner;   /* the runner program in libexec/ (mk/runners.mk builds it) */
	const char *no_runner; /* NULL: a missing runner is an error; else the build may lack it
				* (its compiler was missing), and this is the no_device reason */
	const char *fence;    /* the fence tag of answers (prompt and extraction) */
	const char *compiler; /* the compiler as the prompt's build line names it */
	unsigned flags;       /* LEAP_BK_* */

	/* ---- the candidate's C interface (task.c, shim.c) ---- */
	const char *const (*ptr_types)[2]; /* [enum leap_type][is const]: a buffer parameter's type */
	const char *linkage;  /* before the prototype and the shim's functions ("" or extern "C") */
	const char *entry_return; /* the shim's last statement: what leap_entry returns */
	/* The includes of the prelude and the shim beyond <stdint.h> (may be NULL). */
	void (*includes)(struct leap_buf *s, const struct leap_task *t);

	/* ---- toolchain (toolchain.c, incguard.c, crun.c) ---- */
	/* The compiler the options name, to look up (new string; toolchain.c runs it). */
	char *(*want)(const struct leap_compile_opts *o);
	/* Why the backend cannot be used when `want` was not found (new string). */
	char *(*missing)(const struct leap_compile_opts *o, const char *want);
	/* The compiler it compiles host code with, whose --version is part of its identity (NULL:
	 * none). */
	const char *host_compiler;
	/* The architecture it compiles for (new string; NULL: none, and no arch op). */
	char *(*arch)(const struct leap_compile_opts *o);
	/* The fixed options of a compile (`shared`: a shared object, else -c), then the user's. */
	void (*flags_of)(const struct leap_compiler *c, const struct leap_tool *t, int shared, struct leap_argv *a);
	/* The user's own options for this compiler (--cc-flag, --nvcc-flag). */
	char **(*user_flags)(const struct leap_compile_opts *o, size_t *n);
	const char *version_mark; /* the word of the version line in --version (NULL: the first line) */
	/* The compiler's own include roots beyond the system's, each given to `add` (the include
	 * guard's; may be NULL). */
	void (*roots)(struct leap_tool *t, void (*add)(struct leap_tool *t, const char *dir));
	const char *const *link;  /* a candidate's link options after -o (NULL-terminated) */
	/* The option that names architecture `arch` (new string; NULL where there is no arch). */
	char *(*arch_flag)(const char *arch);

	/* ---- the trusted sources (build.c) ---- */
	char *(*trusted_cc)(void);         /* the compiler, as named (new string) */
	const char *const *trusted_flags;  /* before the files (NULL-terminated) */
	const char *const *trusted_libs;   /* after them (NULL-terminated) */

	/* ---- the timing (lib/referee/referee.c and its parts) ---- */
	const char *baseline; /* the task's file timed against (NULL: its reference, reference.c) */
	double target_ci;     /* --target-ci's default (verdict.h) */
	double floor_margin;  /* below this share of the floor a time is suspicious (verdict.h) */
	double first_call_s;  /* leap-verify's grace for a candidate's load and first call, in seconds,
			       * beyond --slow's bound: a device's module registration, lazy load and
			       * JIT (0 on the host) */

	/* ---- the device ---- */
	/* 1 when the backend can run here, else 0; why[0..n) says either (leap_backend_default).
	 * NULL: always. */
	int (*usable)(char *why, size_t n);
	/* The device facts gathered at the backend's first use (NULL: none). */
	const struct leap_gpu *(*first_use)(struct leap_gpu_once *o);
	/* The environment's device list for a runner on `device` alone (CUDA_VISIBLE_DEVICES; new
	 * string, or NULL: the runner sees what the caller sees). NULL: no devices. */
	char *(*visible)(const struct leap_gpu *g, const char *device);

	/* ---- the prompt's facts (prompt.c) ---- */
	const char *system_prompt;
	/* The device facts when --device-info gives none (NULL: none; new reference). */
	json_t *(*device_facts)(void);
	/* "## Machine and build": where the code runs, the build line, libraries, memory. */
	void (*prompt_machine)(struct leap_buf *s, const struct leap_task *t, const struct leap_prompt_machine *m);
	/* How speed is measured, after "Your function is timed on CASE". */
	void (*prompt_speed)(struct leap_buf *s, const struct leap_task *t, const struct leap_prompt_machine *m);
	/* The rule that picks the arch, where the build line says ARCH (NULL: never). */
	void (*prompt_arch_rule)(struct leap_buf *s);
};

/* The table's row of backend b. */
const struct leap_backend_ops *leap_backend_of(enum leap_backend b);
/* 1 when backend b has every flag of `flags` (LEAP_BK_*). */
int leap_backend_has(enum leap_backend b, unsigned flags);
/* The backend records spell `name`, or NULL. */
const struct leap_backend_ops *leap_backend_find(const char *name);
/* Parses a backend name; returns 0 and sets *b, or -1. */
int leap_backend_parse(const char *s, enum leap_backend *b);
/* Its name as records spell it. */
const char *leap_backend_name(enum leap_backend b);
/* The backend whose source files end in .ext (file's own extension); returns 0, or -1. */
int leap_backend_by_ext(const char *file, enum leap_backend *b);
/* The backend of a record that names none (leap-record(5)). */
enum leap_backend leap_backend_record_default(void);
/* The backend the task's reference (plain C) is built and run with. */
enum leap_backend leap_backend_reference(void);
/* The backend when none is given: the first of the table that is usable here. Writes into
 * said[0..n) the line to show on stderr, once, when the choice is used: "no --backend given:
 * using cpu (no usable CUDA device: no /dev/nvidia* device)". */
enum leap_backend leap_backend_default(char *said, size_t n);

/* The rows, for backend_cpu.c and backend_cuda.c to define. */
extern const struct leap_backend_ops leap_backend_cpu, leap_backend_cuda;

#endif
