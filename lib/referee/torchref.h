/* torchref.h - the reference of a module task: its PyTorch module, run by torch in a process
 * leap starts and keeps per task. */
#ifndef LEAP_TORCHREF_H
#define LEAP_TORCHREF_H

#include "case.h"
#include "task/task.h"

/* The Python that runs torch: $LEAP_TORCH_PYTHON. Returns it, or NULL with a new message in
 * *err saying why module tasks cannot run (it is unset). */
const char *leap_torch_python(char **err);

/* The trusted helper's path in `libexec`, the runners' directory (leap_libexec_dir), or NULL
 * with a new message in *err. A new string. */
char *leap_torchref_script(const char *libexec, char **err);

/* The data a torch process of leap's may hold (RLIMIT_DATA): a module whose activations need
 * more (an attention over a 128x128 image in float64 asked for 20 GiB) fails there, saying
 * so, instead of exhausting a shared machine. */
#define LEAP_TORCH_DATA_BYTES (8ull << 30)

struct leap_torchref;

/* Starts the reference of module task t (`python LIBEXEC/leap-torchref.py serve DIR`). Returns
 * it, or NULL with a new message in *err. The process loads torch and the module once. */
struct leap_torchref *leap_torchref_start(const struct leap_task *t, const char *libexec, char **err);

/* Computes the expected outputs of set `set` of d: sends the case's sizes and the set's inputs
 * and reads the outputs into d->want. Returns 0, or -1 with a new message in *err (the module
 * failed at these sizes, the process died or did not answer in time). */
int leap_torchref_case(struct leap_torchref *r, struct leap_case_data *d, uint32_t set, char **err);

/* The seconds torch's forward took in the last answer, within the whole of leap_torchref_case
 * (bench/torchref.c sets one against the other). */
double leap_torchref_forward_s(const struct leap_torchref *r);

/* Ends the process (its stdin closes: it exits) and frees r; NULL is nothing. */
void leap_torchref_stop(struct leap_torchref *r);

#endif
