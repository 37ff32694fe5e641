/* feedback.h - the lean feedback a failed or slow candidate gets for its next turn (declared
 * in prune.h: leap_feedback) and the pieces other programs show the same way. */
#ifndef LEAP_FEEDBACK_H
#define LEAP_FEEDBACK_H

#include "core/util.h"

/* Appends "\n L | text" (line `line` of `code`, cut to a window of 160 bytes around the
 * column) and, when col >= 1, "\n   | ^" with the caret under byte column `col`, the way
 * gcc quotes a line. Nothing when `code` has no such line. */
void leap_feedback_quote(struct leap_buf *b, const char *code, long line, long col);

#endif
