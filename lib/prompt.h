/* prompt.h - the turn-1 chat messages that state a task to the model. */
#ifndef LEAP_PROMPT_H
#define LEAP_PROMPT_H

#include <jansson.h>

#include "task.h"

/* The default system message for backend `b` (static text). */
const char *leap_prompt_system(enum leap_backend b);

/* The user message for task `t` on backend `b`: the task text, the exact prototype, the
 * memory model, the parameters with their sizes, the cases and the expected answer format.
 * Newly allocated. */
char *leap_prompt_user(const struct leap_task *t, enum leap_backend b);

/* The fence language tag of answers for `b` ("cuda" or "c"). */
const char *leap_prompt_lang(enum leap_backend b);

/* [{role:system, content:system}, {role:user, content:user}] (new reference). */
json_t *leap_prompt_messages(const char *system, const char *user);

#endif
