/* modimport.h - a suite of module tasks from PyTorch module files (leap-task --import). */
#ifndef LEAP_MODIMPORT_H
#define LEAP_MODIMPORT_H

#include <jansson.h>

/* Imports the modules of `sources` (each a .py file, a folder of them, or a JSON Lines file of
 * {"id", "source", "level"?} objects) into the suite folder `suite`: each becomes a folder
 * ID/ with module.py and the task.json that torch derived from it (libexec/leap-torchref.py,
 * run once for all by $LEAP_TORCH_PYTHON). Returns an array of one object per module, in
 * order: {"task": id, "dir": folder} for a task written, {"task": id, "refused": why} for a
 * module that is no fair task (its folder removed). Returns NULL with a new message in *err
 * when nothing could be imported (no torch, an unreadable source, the helper failed). */
json_t *leap_module_import(const char *suite, char *const *sources, int nsources, char **err);

#endif
