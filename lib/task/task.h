/* task.h - the task format (task.json + reference.c + baseline.cu): loading, validation, prototypes. */
#ifndef LEAP_TASK_H
#define LEAP_TASK_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "backend/backend.h"
#include "expr.h"


/* Element types of buffers and scalars. half and bf16 are buffers only. */
enum leap_type { LEAP_T_FLOAT, LEAP_T_DOUBLE, LEAP_T_INT, LEAP_T_INT64, LEAP_T_HALF, LEAP_T_BF16, LEAP_T_UINT8 };

const char *leap_type_name(enum leap_type t);
size_t leap_type_size(enum leap_type t);
/* 1 for float, double, half and bf16. */
int leap_type_is_float(enum leap_type t);
/* 1 when a scalar parameter may have type t (float, double, int, int64). */
int leap_type_scalar_ok(enum leap_type t);
/* The C type of a scalar of type t ("int64_t" for int64). */
const char *leap_type_ctype(enum leap_type t);
/* Parses a type name as task.json spells it ("int64"); returns 0 and sets *t, or -1. */
int leap_type_parse(const char *s, enum leap_type *t);

enum leap_role { LEAP_ROLE_SCALAR, LEAP_ROLE_IN, LEAP_ROLE_OUT, LEAP_ROLE_INOUT };

const char *leap_role_name(enum leap_role r);
/* Parses "scalar", "in", "out" or "inout"; returns 0 and sets *r, or -1. */
int leap_role_parse(const char *s, enum leap_role *r);

/* Input patterns a floating-point buffer may be filled with (a bit set of these). */
enum leap_dist {
	LEAP_DIST_NORMAL = 1 << 0,   /* N(0, 1) */
	LEAP_DIST_UNIFORM = 1 << 1,  /* U(-1, 1) */
	LEAP_DIST_SMALL = 1 << 2,    /* N(0, 1) * 1e-3 */
	LEAP_DIST_LARGE = 1 << 3,    /* N(0, 1) * 1e3 */
	LEAP_DIST_SPARSE = 1 << 4,   /* 90% zeros, the rest N(0, 1) */
	LEAP_DIST_POSITIVE = 1 << 5, /* U(0.1, 10) */
	LEAP_DIST_LOGITS = 1 << 6,   /* N(0, 1) * 3: the spread of a model's logits, so that a
				      * softmax over thousands of columns has outputs above 1e-2 */
	LEAP_DIST_NEAR_ONE = 1 << 7, /* 1 + N(0, 1) * 1e-2: a product of thousands of them stays
				      * finite and far from 0 (a cumulative product is informative) */
	LEAP_DIST_TIES = 1 << 8,     /* integers from -4 to 4, uniformly: every row of more than a
				      * few elements repeats its maximum, so a stated tie rule is tested */
	LEAP_DIST_LARGE_INT = 1 << 9, /* N(0, 1) * 16 rounded to an integer: exact in TF32, half and
				       * bf16, and so are the products and float sums of them, so a
				       * dot product leaves exp's range (e^88) in every precision alike */
	LEAP_DIST_LAST = LEAP_DIST_LARGE_INT,
	LEAP_DIST_ALL_DEFAULT = 0x1f,
};

/* Name of a single pattern bit, or NULL. */
const char *leap_dist_name(unsigned bit);

/* Operator families (task.json "families") and the input patterns each needs, so that a
 * kernel right only where the operator is easy fails: the one table is in task.c, and
 * leap-task(5) lists it. A task of a family has an input buffer that allows one of `need`
 * (an integer input counts for `tie` when its range holds at most LEAP_TIE_SPAN values). */
struct leap_family {
	const char *name;
	unsigned need;     /* any of these patterns (enum leap_dist bits) */
	const char *why;   /* the operators, and what the patterns reach in them */
};

#define LEAP_TIE_SPAN 16

/* The family named `name`, or NULL; leap_family_at(i) the i-th of the table (NULL past it). */
const struct leap_family *leap_family_find(const char *name);
const struct leap_family *leap_family_at(size_t i);

/* A run of a float buffer drawn at a module's initialisation (task.json "init"): its elements
 * uniform in center +- spread / sqrt(fan), fan evaluated at the case's sizes, since torch's
 * initialisations scale with them (a Linear's weight is U(+-1 / sqrt(in_features))). Or no
 * draw, the module's own structure, which drawn would be another computation: with tril a
 * causal mask (drawn, it would mask almost nothing), with values a table the module makes the
 * same at every size (a window attention's relative position index: drawn, out of range). */
struct leap_init {
	struct leap_expr *size;  /* its elements (NULL: the rest of the buffer) */
	double center, spread;
	struct leap_expr *fan;   /* NULL: 1 */
	struct leap_expr *tril;  /* n x n matrices, one after another: 1 where column <= row, else
				  * 0 (torch.tril(torch.ones(n, n))); NULL: a uniform run */
	double *values;          /* the run's elements themselves, nvalues of them at every case */
	size_t nvalues;
};

struct leap_param {
	char *name;
	enum leap_type type;
	enum leap_role role;     /* LEAP_ROLE_SCALAR for scalars */
	struct leap_expr *size;  /* element count (buffers only) */
	unsigned dists;          /* allowed patterns (floating-point buffers; 0 with init) */
	int64_t lo, hi;          /* inclusive value range (integer buffers) */
	struct leap_init *init;  /* a module's parameter: drawn at its initialisation's scale, */
	size_t ninit;            /* run by run, instead of the patterns (NULL, 0: an input) */
};

/* One assignment of values to the scalar parameters; indexed like leap_task.params
 * (entries of buffer parameters are unused). */
union leap_scalar {
	int64_t i;
	double f;
};

struct leap_case {
	union leap_scalar *vals;
};

/* The values one integer scalar takes in drawn cases (task.json "ranges"): lo <= v <= hi and,
 * with multiple_of, v a multiple of it. Bounds are expressions over the other integer scalars
 * (a constant is an expression too). */
struct leap_range {
	size_t param;                  /* index into leap_task.params */
	struct leap_expr *lo, *hi;
	struct leap_expr *multiple_of; /* NULL: any integer */
};

/* The arithmetic a task's own tolerance admits (task.json "precision"): fp32 strict (float
 * products and sums; the tolerance is sized for fp32 rounding), or tf32 (inputs of products
 * may be rounded to TF32's 10-bit mantissa, as tensor cores do: GEMM and convolution). */
enum leap_precision { LEAP_PREC_FP32, LEAP_PREC_TF32 };

const char *leap_precision_name(enum leap_precision p);

/* Which tolerance a check applies, as `--tolerance task|kernelbench|kernelbench-v0.1`: the
 * task's own atol and rtol; KernelBench's current one (its eval.py: atol = rtol = 1e-4 in fp32,
 * 1e-2 where an output is half or bf16); or KernelBench v0 and v0.1's (atol = rtol = 1e-2 in
 * every precision). KernelBench's are never tighter than the task's own. */
enum leap_tolerance { LEAP_TOL_TASK, LEAP_TOL_KERNELBENCH, LEAP_TOL_KERNELBENCH_V01 };

#define LEAP_KERNELBENCH_TOL_FP32 1e-4
#define LEAP_KERNELBENCH_TOL_HALF 1e-2
#define LEAP_KERNELBENCH_V01_TOL 1e-2

/* The names --tolerance takes, for messages. */
#define LEAP_TOLERANCE_NAMES "task, kernelbench or kernelbench-v0.1"

/* Parses "task", "kernelbench" or "kernelbench-v0.1"; returns 0, or -1 when s is none of them. */
int leap_tolerance_parse(const char *s, enum leap_tolerance *out);
const char *leap_tolerance_name(enum leap_tolerance m);

/* The vendor libraries a task may name (task.json "libraries", "baseline_libraries"). */
enum {
	LEAP_LIB_CUBLAS = 1 << 0,   /* cublas (also cublasLt, which it needs) */
	LEAP_LIB_CUBLASLT = 1 << 1, /* cublasLt */
	LEAP_LIB_CUDNN = 1 << 2,    /* cudnn */
	LEAP_LIB_CUFFT = 1 << 3,    /* cufft */
	LEAP_LIB_CURAND = 1 << 4,   /* curand */
	LEAP_LIB_CUSPARSE = 1 << 5, /* cusparse */
	LEAP_LIB_CUSOLVER = 1 << 6, /* cusolver */
	LEAP_LIB_COUNT = 7
};

/* The name of library bit `bit` ("cublas"), as task.json and -l spell it; NULL if none. */
const char *leap_library_name(unsigned bit);

/* The library bit whose headers include `header` (a file name such as "cublas_v2.h" or
 * "cudnn_ops.h", without directories), or 0 when it is no vendor library's. */
unsigned leap_library_of_header(const char *header);

struct leap_task {
	char *id, *dir;
	char *suite;                     /* the suite it was found in by leap_suite_get, else NULL */
	int level;
	char *title, *prompt, *entry;
	char *module;                    /* "module": the PyTorch module file that is the reference
					  * (run by torch, lib/torchref.c), or NULL: reference.c */
	struct leap_param *params;
	size_t nparams;
	struct leap_case *cases; /* verification cases */
	size_t ncases;
	struct leap_case bench;  /* the benchmark case (cuda) */
	struct leap_case bench_cpu; /* the benchmark case of the cpu backend ("bench_cpu", else bench) */
	double atol, rtol;
	enum leap_precision precision;   /* "precision": the arithmetic the tolerance admits */
	unsigned libraries;              /* "libraries": vendor libraries a candidate may use (LEAP_LIB_*) */
	unsigned families;               /* "families": bit i is leap_family_at(i) */
	unsigned baseline_libraries;     /* "baseline_libraries": those baseline.cu links */
	int baseline_vendor;             /* "baseline_kind": 1 vendor (a library call), 0 kernel */
	int baseline_torch;              /* "baseline_kind" of a module task: 1 torch-eager, 2
					  * torch-compile, 0 not given (torch-eager) */
	struct leap_expr *bytes, *flops; /* optional: minimal traffic and work of one call */
	json_t *json;                    /* task.json as loaded */
	/* Drawn cases: sizes the prompt does not list (lib/task/ranges.c). */
	struct leap_range *ranges;       /* in drawing order: bounds name only scalars drawn before */
	size_t nranges;
	int ranges_derived;              /* 1: no "ranges" in task.json; [min, max] of the listed cases */
	int64_t draw_max_bytes;          /* the most buffer bytes of a listed case: a drawn case's budget */
	int64_t draw_max_flops;          /* likewise for `flops` (-1: no flops budget) */
	/* "residues": the scalar whose every remainder modulo residue_mod a run checks (0: none) */
	size_t residue_param;
	int64_t residue_mod;
};

/* 1 if `id` is a valid task id: [A-Za-z0-9_.-]+, not starting with '.', at most 128 bytes.
 * Ids name folders, so nothing else is accepted (no paths). */
int leap_task_id_valid(const char *id);

/* ---- task.json's fields (lib/task/taskfields.c) ----
 * One table names every field task.json may have, with its JSON type, whether it is required
 * and the parser that reads it; the loader's unknown-field check and its parsing both walk it,
 * and tests/docs.bats checks the FIELDS of leap-task(5) against it (a parameter's fields have
 * a table too, which names and documents them). A new field is a row, the member of struct
 * leap_task it fills, and the code that uses it. */
struct leap_task_loader; /* the loader's state, private to taskfields.c */

#define LEAP_NO_SLOT ((size_t)-1)

struct leap_task_field {
	const char *name;
	const char *type;  /* its JSON type, as leap-task(5) says it: string, integer, array, ... */
	const char *need;  /* required: what it must be, said by "missing (...)"; NULL: optional */
	/* Reads the field's value v (NULL when absent: an optional field's default) into the
	 * task, after the rows above it; returns 0, or -1 with the loader's message set. NULL:
	 * free form, never read (tags, notes; every row of the parameters' table). */
	int (*parse)(struct leap_task_loader *l, json_t *v, const struct leap_task_field *f);
	size_t slot;       /* offsetof the member of struct leap_task it fills, or LEAP_NO_SLOT */
	const char *doc;   /* one line for a reader of the table */
};

/* The fields of task.json, in the order they are read; a row with a NULL name ends it. */
const struct leap_task_field *leap_task_fields(void);
/* The fields of one parameter (an item of "params"), the same way. */
const struct leap_task_field *leap_param_fields(void);

/* Loads and validates dir/task.json (and checks dir/reference.c exists). Returns the task, or
 * NULL with a newly allocated message in *err that names the file, the field and the problem,
 * e.g. "tasks/x/task.json: params[2].size: unknown name 'm' at column 1". */
struct leap_task *leap_task_load(const char *dir, char **err);

/* Parses a task from an in-memory task.json object; `where` names it in messages. */
struct leap_task *leap_task_from_json(json_t *j, const char *dir, const char *where, char **err);

void leap_task_free(struct leap_task *t);

/* Evaluates every buffer's size for case `c` into sizes[nparams] (0 for scalars). Returns 0,
 * or -1 with a new message in *err (overflow, division by zero, size < 1 or too large). */
int leap_task_sizes(const struct leap_task *t, const struct leap_case *c, int64_t *sizes, char **err);

/* Evaluates an optional expression (bytes/flops) for case `c`; returns 0 or -1 (no
 * expression, or an error). */
int leap_task_eval(const struct leap_task *t, const struct leap_expr *e, const struct leap_case *c, int64_t *out);

/* The entry point's prototype for `b`, without a trailing newline, e.g.
 *   cpu:  "void vector_add(const float *a, const float *b, float *c, int n);"
 *   cuda: "extern \"C\" void vector_add(const float *a, const float *b, float *c, int n);"
 * Newly allocated. */
char *leap_task_prototype(const struct leap_task *t, enum leap_backend b);

/* C type of one parameter for `b` ("const float *", "int", "const __half *"...). Static. */
const char *leap_param_ctype(const struct leap_param *p, enum leap_backend b);

/* The atol and rtol a check of t applies under `mode` (before any widening at the
 * benchmark size). */
void leap_task_tolerance(const struct leap_task *t, enum leap_tolerance mode, double *atol, double *rtol);

/* The benchmark case for backend `b`. */
const struct leap_case *leap_task_bench_case(const struct leap_task *t, enum leap_backend b);

/* How much wider the tolerances are at `bench` than at the task's listed cases (>= 1): the
 * square root of how much longer its sums are, estimated from the flops per output element. */
double leap_task_tol_scale(const struct leap_task *t, const struct leap_case *bench);

/* Case values as a JSON object {"n": 1024, ...} (new reference). */
json_t *leap_case_json(const struct leap_task *t, const struct leap_case *c);

/* ---- drawn cases (lib/task/ranges.c) ----
 * Besides its listed cases, a task is verified on cases whose sizes are drawn from the run's
 * seed within its ranges, so that a kernel right only at the listed sizes fails. */

/* The index of the int or int64 scalar parameter named by n bytes at name, or -1. */
int leap_task_scalar_index(const struct leap_task *t, const char *name, size_t n);

/* Reads task.json's "ranges" (the value `ranges`, NULL when absent) into t, or derives them
 * from the listed cases when absent, and checks them: names, bounds, order, the listed cases
 * inside them, and the smallest case valid within the budget. Called by leap_task_from_json
 * once cases, bytes and flops are read. Returns 0, or -1 with a new message in *err naming
 * `where` and the field. */
int leap_task_load_ranges(struct leap_task *t, json_t *ranges, const char *where, char **err);

/* Drawn case number k (0, 1, ...) of task t for `seed`: every scalar with a range drawn
 * within it (log-uniform, avoiding the values listed cases use; the k-th case's value is
 * k more than the 0-th's modulo 32 where the range allows, so a few cases cover every
 * remainder an unrolled loop can get wrong), the other scalars copied from a listed case
 * picked at random; its buffers fit in the budget (the most bytes and flops of a listed case).
 * The same (t, seed, k) always gives the same case, whatever else was drawn. Fills
 * out->vals (new, t->nparams entries) and returns 0; -1 when t has no ranges. */
int leap_task_draw_case(const struct leap_task *t, uint64_t seed, size_t k, struct leap_case *out);

/* Residue case number k (0 .. residue_mod - 1) of task t: a listed case (the second, else the
 * next that works) with the scalar of "residues" at the least value of its range that is k
 * modulo residue_mod and at least residue_mod (so that a vector body runs once before its
 * remainder; else the least that is k modulo residue_mod), the other ranged scalars kept where
 * their ranges allow; valid and within the budget. The same for every seed. Fills out->vals
 * (new) and returns 0; -1 when t has no residues or no such case exists. */
int leap_task_residue_case(const struct leap_task *t, size_t k, struct leap_case *out);

/* The smallest case on top of listed case `base`: every scalar with a range at its lowest
 * value (in drawing order), the others as in the listed case. Fills out->vals (new) and
 * returns 0; -1 when t has no ranges or `base` is out of bounds. The loader checked that it is
 * valid and within the budget. */
int leap_task_smallest_case(const struct leap_task *t, size_t base, struct leap_case *out);

/* The ranges as plain text for a prompt, e.g. "rows from 1 to 64, cols from 1 to 4097",
 * "len from k to 200", "dim from 8 to 128 (a multiple of heads)"; "" when t has none. New. */
char *leap_task_ranges_text(const struct leap_task *t);

/* The ranges as a task.json "ranges" object: {"rows": [1, 64], "len": ["k", 200],
 * "dim": {"range": [8, 128], "multiple_of": "heads"}} (new reference). */
json_t *leap_task_ranges_json(const struct leap_task *t);

/* ---- suites (lib/task/suite.c) ----
 * The tasks of one task root, loaded on demand. A root holds suites: its own task folders
 * (the suite named LEAP_SUITE_OWN, "leap") and suite folders, subfolders without a task.json
 * whose subfolders are tasks (tasks/kernelbench-l1/kb1_023_softmax/). A task id names one task
 * of the whole root: an id is looked up among the root's own tasks, then in each suite folder
 * (ids are unique across the suites of a root), so every program that resolves ids finds every
 * suite's tasks; listing (--all) stays within one suite, the root's own unless one is selected. */
#define LEAP_SUITE_OWN "leap"

struct leap_suite {
	char *dir;
	char *only;              /* the suite selected (leap_suite_select), or NULL: lookups search all */
	char **subs;             /* the suite folders of dir, sorted (read on first need) */
	size_t nsubs;
	int subs_read;
	struct leap_task **tasks;
	size_t n, cap;
};

void leap_suite_init(struct leap_suite *s, const char *dir);
/* Restricts s to the suite `name`: LEAP_SUITE_OWN or a suite folder of the root. Lists and
 * lookups then see that suite only. Returns 0, or -1 with a new message in *err naming the
 * suites there are. */
int leap_suite_select(struct leap_suite *s, const char *name, char **err);
/* The suites of the root: LEAP_SUITE_OWN first when the root has task folders of its own,
 * then the suite folders, sorted. Returns the count and a new array of new strings in *names;
 * -1 with a message in *err if the directory cannot be read. */
long leap_suite_names(struct leap_suite *s, char ***names, char **err);
/* Returns the task `id`, loading it on first use. Returns NULL with a new message in *err
 * when the id is invalid, unknown or fails to load. The task belongs to the suite; its
 * `suite` field names the suite it was found in. */
const struct leap_task *leap_suite_get(struct leap_suite *s, const char *id, char **err);
/* Lists the ids of the selected suite (LEAP_SUITE_OWN when none was selected): its folders
 * holding task.json, sorted. Returns the count and a new array of new strings in *ids; -1 with
 * a message in *err if the directory cannot be read. */
long leap_suite_list(struct leap_suite *s, char ***ids, char **err);
void leap_suite_free(struct leap_suite *s);

#endif
